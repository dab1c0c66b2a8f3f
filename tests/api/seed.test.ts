import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin } from '../support/fixtures';

let ts: TestServer;
let api: ApiClient;
beforeAll(async () => {
  ts = await startTestServer();
  api = await admin(ts);
});
afterAll(async () => {
  await ts?.close();
});

describe('seed', () => {
  it('demo: a residential complex with buildings, apartments and a few hundred users; twice is once', async () => {
    const first = await getCommand('seed.demo').run({ api }, {});
    expect(first).toMatchObject({ created: true, roles: 3, markers: 3 });
    expect(first.groups).toBe(1 + 4 + 8 + 240);
    expect(first.users).toBeGreaterThan(300);
    const again = await getCommand('seed.demo').run({ api }, {});
    expect(again.created).toBe(false);
    const complex = await getCommand('group.list').run(
      { api },
      { filters: [{ field: 'logic_address', rule: 'equals', value: 'demo' }] },
    );
    expect(complex.data[0]).toMatchObject({
      name: 'Riverside Residence',
      type: 'Residential complex',
      children_count: 4,
    });
    const flats = await getCommand('group.list').run(
      { api },
      { filters: [{ field: 'type', rule: 'equals', value: 'Apartment' }], limit: 1 },
    );
    expect(flats.meta.total).toBe(240);
    const residents = await getCommand('user.list').run({ api }, { search: 'resident.', limit: 1 });
    expect(residents.meta.total).toBe(first.users - 8);
    // a woman's Russian surname takes the feminine ending, a man's does not
    const annas = await getCommand('user.list').run({ api }, { search: 'Anna ', limit: 100 });
    const borises = await getCommand('user.list').run({ api }, { search: 'Boris ', limit: 100 });
    expect(annas.data.length).toBeGreaterThan(0);
    expect(annas.data.filter((u) => /^Anna \S+(ov|ev|in)$/.test(u.name))).toEqual([]);
    expect(borises.data.filter((u) => /^Boris \S+(ova|eva|ina)$/.test(u.name))).toEqual([]);
  });

  it('scale: tops the scale users up to the number asked, and no further', async () => {
    const a = await getCommand('seed.scale').run({ api }, { users: 1500 });
    expect(a).toMatchObject({ users: 1500, created: 1500 });
    const b = await getCommand('seed.scale').run({ api }, { users: 2000 });
    expect(b).toMatchObject({ users: 2000, created: 500, group_id: a.group_id });
    const c = await getCommand('seed.scale').run({ api }, { users: 1000 });
    expect(c).toMatchObject({ users: 2000, created: 0 });
    const inGroup = await getCommand('user.list').run(
      { api },
      { filters: [{ field: 'domains', rule: 'has', value: a.group_id }], limit: 1 },
    );
    expect(inGroup.meta.total).toBe(2000);
    const anns = await getCommand('user.list').run(
      { api },
      {
        filters: [
          { field: 'name', rule: 'contains', value: 'ann' },
          { field: 'domains', rule: 'has', value: a.group_id },
        ],
        sort: 'name',
        limit: 5,
      },
    );
    expect(anns.meta.total).toBeGreaterThan(0);
    expect(anns.data.every((u) => u.name.toLowerCase().includes('ann'))).toBe(true);
    const scaleAnnas = await getCommand('user.list').run(
      { api },
      { search: 'Anna ', filters: [{ field: 'domains', rule: 'has', value: a.group_id }], limit: 100 },
    );
    expect(scaleAnnas.data.filter((u) => /^Anna \S+(ov|ev|in) \d+$/.test(u.name))).toEqual([]);
  });
});
