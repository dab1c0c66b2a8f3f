/**
 * The audit log names what each event is about (issue 13 point 5): `entity_name` is the row's name now for
 * every family of the registry (declared by the family's store, no line of its own), the name the event
 * recorded for a row that is gone, and the person for a sign-in (whose entity is the account).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand, resources, type AuditEvent } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { eventsOf as eventsOfIn, namesEveryFamily } from '../support/registry-suites';
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

const eventsOf = (entity: string, id: number): Promise<AuditEvent[]> => eventsOfIn(api, entity, id);

describe('the audit log names its rows', () => {
  it('names a row of every family by its name now, and a deleted row by the name it had', async () => {
    // every family of the registry, each made from its example (tests/support/family-examples.ts)
    const root = await rootGroup(api);
    const rows = await namesEveryFamily(resources, () => ({ ts, api, root, A: root, B: root }));
    expect(Object.keys(rows).sort()).toEqual(resources.map((r) => r.noun).sort());
    const made = Object.fromEntries(Object.entries(rows).map(([noun, r]) => [noun, r.id]));
    const tag = uid();

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
      ['delete', rows.role!.name],
      ['create', rows.role!.name],
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
