/**
 * The callers of requests are remembered between requests (issue 14 item 5, engine/request-cache.ts), and a
 * change to what they are made of — a session ended, a role's permissions, a user's groups — takes effect at
 * once, made through the API or by hand in SQL. On PGlite the database's own notification arrives as the
 * change commits; on PostgreSQL it comes through LISTEN, so a change made by hand is awaited (polled).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { getCommand } from '@lintel/commands';
import { startTestServer, type TestServer } from '../support/server';
import { admin, group, raw, rootGroup, userWith } from '../support/fixtures';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const status = async (api: Parameters<typeof raw>[1], path = '/users') =>
  (await raw(server, api, 'GET', path, { query: { limit: 5 } })).status;

describe('the remembered caller', () => {
  it('is remembered after a request', async () => {
    const api = await admin(server);
    server.server.context.authCache.clear();
    expect(await status(api)).toBe(200);
    expect(server.server.context.authCache.size).toBeGreaterThan(0);
  });

  it('is kept when a device pushes (a heartbeat changes no session, role or group)', async () => {
    const api = await admin(server);
    const serial = `AC-${Date.now()}`;
    const { data } = await getCommand('device.create').run(
      { api },
      { name: serial, type: 'panel', serial_number: serial, domain_id: await rootGroup(api) },
    );
    const c = await getCommand('device.credentials').run({ api }, { id: data.id });
    expect(await status(api)).toBe(200);
    const held = server.server.context.authCache.size;
    expect(held).toBeGreaterThan(0);
    const res = await fetch(`${server.url}/api/v0/device-gateway/heartbeat`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Basic ${Buffer.from(`${c.login}:${c.password}`).toString('base64')}`,
      },
      body: '{}',
    });
    expect(res.status).toBeLessThan(300);
    expect(server.server.context.authCache.size).toBe(held);
  });

  it('is forgotten when the session ends through the API: the token is refused at once', async () => {
    const api = await admin(server);
    const user = await userWith(server, api, {
      permissions: ['users.view_all'],
      domains: [await rootGroup(api)],
    });
    const u = await user.client();
    expect(await status(u)).toBe(200);
    const token = u.store.get()!.token;
    expect((await raw(server, u, 'POST', '/logout')).status).toBeLessThan(300);
    const after = await fetch(`${server.url}/api/v0/users`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(after.status).toBe(401);
  });

  it('is forgotten when a role loses a permission by hand in SQL', async () => {
    const api = await admin(server);
    const user = await userWith(server, api, {
      permissions: ['users.view_all'],
      domains: [await rootGroup(api)],
    });
    const u = await user.client();
    expect(await status(u)).toBe(200);
    expect(await status(u)).toBe(200);
    await sql`update roles set permissions = '[]'::jsonb where id = ${user.roleId}`.execute(
      server.server.context.db,
    );
    await expect.poll(() => status(u)).toBe(403);
  });

  it('is forgotten when a session is revoked by hand in SQL', async () => {
    const api = await admin(server);
    const user = await userWith(server, api, {
      permissions: ['users.view_all'],
      domains: [await rootGroup(api)],
    });
    const u = await user.client();
    expect(await status(u)).toBe(200);
    await sql`update sessions set revoked_at = now() where user_id = ${user.id}`.execute(
      server.server.context.db,
    );
    await expect.poll(() => status(u)).toBe(401);
  });

  it('forgets a user’s groups when they change, by the API or by hand', async () => {
    const api = await admin(server);
    const root = await rootGroup(api);
    const a = await group(api, `Cache A ${Date.now()}`, root);
    const b = await group(api, `Cache B ${Date.now()}`, root);
    const user = await userWith(server, api, { permissions: ['domains.edit_descendant'], domains: [a] });
    const u = await user.client();
    const visible = async () =>
      (await raw(server, u, 'GET', '/domains', { query: { limit: 100 } })).body.data.map(
        (g: { id: number }) => g.id,
      ) as number[];
    expect(await visible()).toContain(a);
    expect(await visible()).not.toContain(b);
    // moved to B through the API: seen on the next request
    expect((await raw(server, api, 'PATCH', `/users/${user.id}`, { body: { domains: [b] } })).status).toBe(
      200,
    );
    expect(await visible()).toContain(b);
    expect(await visible()).not.toContain(a);
    // and back to A by hand
    const db = server.server.context.db;
    await sql`update user_domains set domain_id = ${a} where user_id = ${user.id}`.execute(db);
    await expect.poll(async () => (await visible()).includes(a) && !(await visible()).includes(b)).toBe(true);
  });
});
