/**
 * The users' records as the database writes them for an NDJSON export (`loadUserLines`) are exactly the records
 * the list loads (`loadUsers`): every field, groups and markers in their order, the profile over its defaults,
 * the creator, the time to the millisecond — and in the order of the ids asked, one line each.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { loadUserLines, loadUsers } from '../../apps/server/src/handlers/user/user.store';
import { startTestServer, type TestServer } from '../support/server';
import { admin, group, raw, rootGroup, uid } from '../support/fixtures';

let ts: TestServer;
let api: ApiClient;

beforeAll(async () => {
  ts = await startTestServer();
  api = await admin(ts);
});
afterAll(async () => {
  await ts?.close();
});

it('the export lines of a page of users equal the records the list loads', async () => {
  const tag = uid();
  const root = await rootGroup(api);
  const a = await group(api, `Zeta ${tag}`, root);
  const b = await group(api, `Alpha ${tag}`, root);
  const m1 = (await getCommand('marker.create').run({ api }, { name: `Night ${tag}`, color: '#112233' })).data
    .id;
  const m2 = (await getCommand('marker.create').run({ api }, { name: `Day ${tag}`, color: '#445566' })).data
    .id;
  const role = (
    await getCommand('role.create').run({ api }, { name: `Lister ${tag}`, permissions: ['users.view'] })
  ).data.id;
  const made = [
    {
      login: `r1.${tag}`,
      name: `Record "one" \\ ${tag}`,
      domains: [a, b],
      markers: [m1, m2],
      email: `r1.${tag}@example.test`,
    },
    {
      login: `r2.${tag}`,
      name: `Record two ${tag}`,
      domains: [b],
      markers: [],
      description: 'Line\twith tab',
    },
    {
      login: `r3.${tag}`,
      name: `Запись три ${tag}`,
      domains: [a],
      markers: [m2],
      profile: { phone: '+79000000000', address: 'Flat 1' },
    },
  ];
  for (const u of made)
    await getCommand('user.create').run(
      { api },
      { role, password: 'Password-123', send_registration_link: false, ...u },
    );

  const page = await raw(ts, api, 'GET', '/users', { query: { search: tag, sort: 'name', limit: 20 } });
  expect(page.status).toBe(200);
  expect(page.body.data).toHaveLength(3);
  const ids = page.body.data.map((u: { id: number }) => u.id);
  const db = ts.server.context.db;
  const loaded = JSON.parse(JSON.stringify(await loadUsers(db, ids)));
  expect(page.body.data).toEqual(loaded);
  const lines = await loadUserLines(db, [...ids].reverse());
  expect(lines.endsWith('\n')).toBe(true);
  expect(
    lines
      .slice(0, -1)
      .split('\n')
      .map((l) => JSON.parse(l) as unknown),
  ).toEqual([...loaded].reverse());
  // what the test compares is there: groups by name, markers, the creator, the profile over its defaults
  expect(page.body.data[0].domains.map((d: { name: string }) => d.name)).toEqual([
    `Alpha ${tag}`,
    `Zeta ${tag}`,
  ]);
  expect(page.body.data[0].created_by_user).not.toBeNull();
  expect(page.body.data.find((u: { login: string }) => u.login === `r3.${tag}`).profile.phone).toBe(
    '+79000000000',
  );
  expect(await loadUserLines(db, [])).toBe('');
});
