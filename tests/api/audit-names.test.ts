/**
 * The audit log names what each event is about (issue 13 point 5): `entity_name` is the row's name now for
 * every family of the registry (declared by the family's store, no line of its own), the name the event
 * recorded for a row that is gone, and the person for a sign-in (whose entity is the account).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand, resources, type AuditEvent } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin, everyFeatureOn, licence, rootGroup, uid, userWith } from '../support/fixtures';

let ts: TestServer;
let api: ApiClient;

beforeAll(async () => {
  ts = await startTestServer();
  api = await admin(ts);
  await licence(ts, everyFeatureOn()); // virtual numbers need SIP
});
afterAll(async () => {
  await ts?.close();
});

/** The newest events of one entity row. */
async function eventsOf(entity: string, id: number): Promise<AuditEvent[]> {
  return (
    await getCommand('audit_event.list').run(
      { api },
      {
        limit: 50,
        filters: [
          { field: 'entity', rule: 'equals', value: entity },
          { field: 'entity_id', rule: 'equals', value: String(id) },
        ],
      },
    )
  ).data;
}

describe('the audit log names its rows', () => {
  it('names a row of every family by its name now, and a deleted row by the name it had', async () => {
    const tag = uid();
    const root = await rootGroup(api);
    const role = (await getCommand('role.list').run({ api }, { limit: 1 })).data[0]!.id;
    const made: Record<string, number> = {
      user: (
        await getCommand('user.create').run(
          { api },
          {
            login: `an${tag}`,
            name: `Anna ${tag}`,
            role,
            domains: [root],
            send_registration_link: false,
          },
        )
      ).data.id,
      role: (await getCommand('role.create').run({ api }, { name: `Role ${tag}`, permissions: [] })).data.id,
      group: (await getCommand('group.create').run({ api }, { name: `Group ${tag}`, parent_id: root })).data
        .id,
      marker: (await getCommand('marker.create').run({ api }, { name: `Marker ${tag}`, color: '#aa3300' }))
        .data.id,
      domain_type: (
        await getCommand('domain_type.create').run({ api }, { type: `t_${tag}`, name: `Type ${tag}` })
      ).data.id,
      device: (
        await getCommand('device.create').run(
          { api },
          { name: `Device ${tag}`, type: 'panel', serial_number: `AN-${tag}`, domain_id: root },
        )
      ).data.id,
      sip_number: (
        await getCommand('sip_number.create').run(
          { api },
          { number: String(Date.now() % 1e9), name: `Number ${tag}`, domain_id: root },
        )
      ).data.id,
    };
    // every family of the registry is covered here: a new one needs its line above
    expect(Object.keys(made).sort()).toEqual(resources.map((r) => r.noun).sort());

    const nameNow: Record<string, string> = {
      user: `Anna ${tag}`,
      role: `Role ${tag}`,
      group: `Group ${tag}`,
      marker: `Marker ${tag}`,
      domain_type: `Type ${tag}`,
      device: `Device ${tag}`,
      sip_number: `Number ${tag}`,
    };
    for (const [noun, id] of Object.entries(made)) {
      const [created] = await eventsOf(noun, id);
      expect(created, noun).toMatchObject({ action: 'create', entity_name: nameNow[noun] });
    }

    // renamed: every event of the row reads its name now
    await getCommand('marker.update').run({ api }, { id: made.marker!, name: `Renamed ${tag}` });
    const marker = await eventsOf('marker', made.marker!);
    expect(marker.map((e) => [e.action, e.entity_name])).toEqual([
      ['update', `Renamed ${tag}`],
      ['create', `Renamed ${tag}`],
    ]);

    // deleted: the name the events recorded
    await getCommand('role.delete').run({ api }, { id: made.role! });
    const role2 = await eventsOf('role', made.role!);
    expect(role2.map((e) => [e.action, e.entity_name])).toEqual([
      ['delete', `Role ${tag}`],
      ['create', `Role ${tag}`],
    ]);
  });

  it('names the person who signed in, and the actor by name', async () => {
    const person = await userWith(ts, api, {
      permissions: ['users.view'],
      domains: [await rootGroup(api)],
      name: `Signer ${uid()}`,
    });
    await person.client();
    const [login] = (
      await getCommand('audit_event.list').run(
        { api },
        { limit: 1, filters: [{ field: 'action', rule: 'equals', value: 'login' }] },
      )
    ).data;
    expect(login).toMatchObject({ entity: 'account', entity_name: expect.stringMatching(/^Signer /) });

    const me = await getCommand('profile.get').run({ api }, {});
    const [made] = await eventsOf('user', person.id);
    expect(made!.user).toEqual({ id: me.id, name: me.name });
    expect(made!.entity_name).toMatch(/^Signer /);
  });
});
