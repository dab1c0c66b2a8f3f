/**
 * Issue 19, what its closing note left: relations declared get their verbs and filter for free. Every
 * many-to-many relation of the registry (`refs` with a join table) has `<noun>.add_<key>` and
 * `<noun>.remove_<key>` from the spine (engine/family.ts), and its list an `equals` filter beside `has`;
 * the registry-wide suite runs over every family that declares one, and the access rules' devices are tried
 * here as a real family: their route, their bounds, another project's ids, the gate, parallel adds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand, resources, type AnyResource } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { startTestServer } from '../support/server';
import { relationVerbsSuite, idsIn, type RegistryWorld } from '../support/registry-suites';
import {
  admin,
  everyFeatureOn,
  failure,
  group,
  licence,
  raw,
  secondProject,
  uid,
  userWith,
} from '../support/fixtures';

const w = {} as RegistryWorld;
let api: ApiClient;
const cmd = getCommand;

beforeAll(async () => {
  w.ts = await startTestServer();
  api = w.api = await admin(w.ts);
  await licence(w.ts, everyFeatureOn());
  const full = await getCommand('group.full').run({ api }, {});
  w.root = full.data.find((g) => g.parent_id === null)!.id;
  w.A = await group(api, `A${uid()}`, w.root);
  w.B = await group(api, `B${uid()}`, w.root);
});
afterAll(async () => {
  await w.ts?.close();
});

describe('the relation verbs of every family of the registry', () => {
  it('are declared for each many-to-many relation, and only those', () => {
    const declared = (resources as readonly AnyResource[]).flatMap((r) =>
      Object.entries(r.refs)
        .filter(([, ref]) => typeof ref.many === 'object')
        .map(([key]) => `${r.noun}.${key}`),
    );
    const verbs = (resources as readonly AnyResource[]).flatMap((r) =>
      r.relationVerbs.map((v) => `${r.noun}.${v.key}`),
    );
    expect(verbs).toEqual(declared);
    expect(verbs).toContain('access_rule.devices');
    expect(verbs).toContain('user.domains');
  });
  relationVerbsSuite(resources, () => w);
});

describe("an access rule's devices", () => {
  const door = async (domain = w.A, client = api) =>
    (
      await cmd('device.create').run({ api: client }, {
        name: `Door ${uid()}`,
        type: 'panel',
        serial_number: `RV${uid()}`,
        domain_id: domain,
      } as never)
    ).data.id;
  const rule = async (devices: number[]) =>
    (await cmd('access_rule.create').run({ api }, { name: `Rule ${uid()}`, devices })).data;

  it('are added and removed at POST /access-rules/{id}/devices/add|remove, answering the rule', async () => {
    const [d1, d2] = [await door(), await door()];
    const r = await rule([d1]);
    const added = await raw(w.ts, api, 'POST', `/access-rules/${r.id}/devices/add`, {
      body: { devices: [d2] },
    });
    expect(added.status).toBe(200);
    expect(idsIn((added.body as { data: { devices: unknown } }).data.devices)).toEqual(
      [d1, d2].sort((a, b) => a - b),
    );
    const removed = await raw(w.ts, api, 'POST', `/access-rules/${r.id}/devices/remove`, {
      body: { devices: [d1] },
    });
    expect(idsIn((removed.body as { data: { devices: unknown } }).data.devices)).toEqual([d2]);
    // the other relations are kept as they were
    expect((removed.body as { data: { name: string } }).data.name).toBe(r.name);
  });

  it('keep at least one, as the update does: removing the last is check_fields_data and changes nothing', async () => {
    const d = await door();
    const r = await rule([d]);
    const e = await failure(cmd('access_rule.remove_devices').run({ api }, { id: r.id, devices: [d] }));
    expect([e.status, e.message]).toEqual([422, 'check_fields_data']);
    expect(e.data).toMatchObject({ fields: [expect.objectContaining({ field: 'devices' })] });
    expect(idsIn((await cmd('access_rule.get').run({ api }, { id: r.id })).devices)).toEqual([d]);
  });

  it("refuse another project's device, naming it, and an empty list", async () => {
    const r = await rule([await door()]);
    const p2 = await secondProject(w.ts);
    const theirs = await door(p2.rootGroup, p2.api);
    const e = await failure(cmd('access_rule.add_devices').run({ api }, { id: r.id, devices: [theirs] }));
    expect([e.status, e.message, e.data]).toEqual([
      422,
      'invalid_related_entity',
      { entity: 'devices', ids: [theirs] },
    ]);
    // and their rules are not ours to change: the same 404 as any other of their rows
    const theirRule = (
      await cmd('access_rule.create').run({ api: p2.api }, { name: `Theirs ${uid()}`, devices: [theirs] })
    ).data;
    const notOurs = await failure(
      cmd('access_rule.add_devices').run({ api }, { id: theirRule.id, devices: [await door()] }),
    );
    expect(notOurs.status).toBe(404);
    const empty = await raw(w.ts, api, 'POST', `/access-rules/${r.id}/devices/add`, {
      body: { devices: [] },
    });
    expect([empty.status, (empty.body as { message: string }).message]).toEqual([422, 'check_fields_data']);
  });

  it('are gated as the update: a viewer of rules may not add', async () => {
    const r = await rule([await door()]);
    const viewer = await (
      await userWith(w.ts, api, { permissions: ['access_rules.view_all'], domains: [w.A] })
    ).client();
    const e = await failure(
      cmd('access_rule.add_devices').run({ api: viewer }, { id: r.id, devices: [await door()] }),
    );
    expect([e.status, e.message]).toEqual([403, 'method_prohibited']);
    const editor = await (
      await userWith(w.ts, api, {
        permissions: ['access_rules.view_all', 'access_rules.edit'],
        domains: [w.A],
      })
    ).client();
    const d = await door();
    expect(
      idsIn(
        (await cmd('access_rule.add_devices').run({ api: editor }, { id: r.id, devices: [d] })).data.devices,
      ),
    ).toContain(d);
  });

  it('take parallel adds: each lands', async () => {
    const r = await rule([await door()]);
    const more = await Promise.all(Array.from({ length: 6 }, () => door()));
    await Promise.all(
      more.map((d) => cmd('access_rule.add_devices').run({ api }, { id: r.id, devices: [d] })),
    );
    expect(idsIn((await cmd('access_rule.get').run({ api }, { id: r.id })).devices)).toEqual(
      expect.arrayContaining(more),
    );
  });

  it('filter with equals: exactly the set, in any order; "" is the rules related to none', async () => {
    const [d1, d2] = [await door(), await door()];
    const both = await rule([d1, d2]);
    const one = await rule([d1]);
    const list = async (field: string, value: string) =>
      (
        await cmd('access_rule.list').run(
          { api },
          { limit: 1000, filters: [{ field, rule: 'equals', value }] },
        )
      ).data.map((r) => r.id);
    expect(await list('devices', `${d2},${d1}`)).toEqual([both.id]);
    expect(await list('devices', String(d1))).toEqual([one.id]);
    const noUsers = await list('users', '');
    expect(noUsers).toEqual(expect.arrayContaining([both.id, one.id]));
    await cmd('access_rule.add_users').run({ api }, { id: one.id, users: [await me()] });
    expect(await list('users', '')).not.toContain(one.id);
    const bad = await raw(w.ts, api, 'GET', '/access-rules', {
      query: { filters: [{ field: 'devices', rule: 'equals', value: '1,x' }] },
    });
    expect(bad.status).toBe(422);
    expect((bad.body as { data: { fields: unknown[] } }).data.fields).toEqual([
      expect.objectContaining({ field: 'filters.0.value', rule: 'invalid_type' }),
    ]);
  });
});

async function me(): Promise<number> {
  return (await cmd('profile.get').run({ api }, {})).id;
}
