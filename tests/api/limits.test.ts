import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin, failure, group, rootGroup, uid } from '../support/fixtures';

let ts: TestServer;
let api: ApiClient;
let role: number;
beforeAll(async () => {
  ts = await startTestServer();
  api = await admin(ts);
  role = (await getCommand('role.create').run({ api }, { name: `Plain ${uid()}`, permissions: [] })).data.id;
});
afterAll(async () => {
  await ts?.close();
});

const cap = (max: number) => ({ license_settings: { is_enabled: true, licenses: [{ feature: 'users', is_active: true, max, restrict_period: { is_active: false, from: null, to: null } }] } });
const newUser = (domains: number[]) =>
  getCommand('user.create').run({ api }, { login: `l${uid()}`, name: 'Limited', role, domains, password: 'pw-long-enough', send_registration_link: false });

describe('a group that caps its users', () => {
  it('takes users up to its maximum, counting its whole subtree, then says used and max', async () => {
    const building = await group(api, `Capped ${uid()}`, await rootGroup(api), cap(3));
    const flat = await group(api, `Flat ${uid()}`, building);
    await newUser([building]);
    await newUser([flat]);
    const third = await newUser([flat]);
    const e = await failure(newUser([flat]));
    expect(e.status).toBe(422);
    expect(e.message).toBe('limit_exceeded');
    expect(e.data).toMatchObject({ used: 3, max: 3 });
    // moving a user in is counted too; one already inside may be edited
    const outside = await newUser([await rootGroup(api)]);
    expect((await failure(getCommand('user.update').run({ api }, { id: outside.data.id, domains: [flat] }))).message).toBe('limit_exceeded');
    await expect(getCommand('user.update').run({ api }, { id: third.data.id, domains: [building, flat] })).resolves.toBeTruthy();
  });
});

describe('the licence warning of server-settings', () => {
  it('follows the licence: none, valid, ending within 30 days, expired', async () => {
    const warning = async () => (await getCommand('server.settings').run({ api }, {})).license_warning;
    const db = ts.server.context.db;
    const project = await db.selectFrom('projects').select('id').where('uid', '=', 'default').executeTakeFirstOrThrow();
    expect(await warning()).toEqual({ status: 'no_license', days: null });
    const day = 86_400_000;
    const row = await db.insertInto('licenses').values({ project_id: project.id, features: '{}', valid_to: new Date(Date.now() + 200 * day) }).returning('id').executeTakeFirstOrThrow();
    expect((await warning()).status).toBe('normal');
    await db.updateTable('licenses').set({ valid_to: new Date(Date.now() + 10.5 * day) }).where('id', '=', row.id).execute();
    expect(await warning()).toEqual({ status: 'will_expire', days: 10 });
    await db.updateTable('licenses').set({ valid_to: new Date(Date.now() - day) }).where('id', '=', row.id).execute();
    expect(await warning()).toEqual({ status: 'already_expired', days: 0 });
  });
});
