/**
 * IP blocking across two instances on one PostgreSQL (issue 24 item 4, done-when): failed sign-ins counted
 * on both ban the address on both; the ban is listed and lifted from either; a whitelist entry made on one
 * keeps the address from ever being banned on the other. Runs in the PostgreSQL pass (DATABASE_URL set).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { freshDatabase, startTestServer, type TestServer } from '../support/server';
import { signIn } from '../support/fixtures';
import { loginFrom } from '../support/ip-login';

let database: Awaited<ReturnType<typeof freshDatabase>>;
let a: TestServer;
let b: TestServer;
let apiA: ApiClient;
let apiB: ApiClient;

beforeAll(async () => {
  database = await freshDatabase();
  a = await startTestServer({ database: database.url });
  b = await startTestServer({ database: database.url });
  // one installation: the administrator's password is the one the first start set
  apiA = await signIn(a, a.adminLogin, a.adminPassword);
  apiB = await signIn(b, a.adminLogin, a.adminPassword);
  await getCommand('ip_blocking.status_set').run(
    { api: apiA },
    { service: 'console', max_failures: 4, ban_time_s: 300 },
  );
});
afterAll(async () => {
  await b?.close();
  await a?.close();
  await database?.drop();
});

const fail = (ts: TestServer, from: string) => loginFrom(ts.url, from, `nobody-${from}`, 'wrong');
const good = (ts: TestServer, from: string) => loginFrom(ts.url, from, a.adminLogin, a.adminPassword);

describe('IP blocking on two instances', () => {
  it('counts failures on both, bans on both, and is lifted from either', async () => {
    // four failures, alternating instances: the fifth attempt is over the limit, wherever it lands
    for (let i = 0; i < 4; i++) expect((await fail(i % 2 ? b : a, '127.0.0.21')).status).toBe(401);
    expect((await fail(b, '127.0.0.21')).status).toBe(429);
    expect((await good(a, '127.0.0.21')).status).toBe(429);
    const listed = await getCommand('ip_blocking.banned').run({ api: apiA }, { service: 'console' });
    expect(listed.data).toEqual([expect.objectContaining({ ip: '127.0.0.21', cause: 'auth_failed' })]);

    await getCommand('ip_blocking.unban').run({ api: apiB }, { service: 'console', ips: ['127.0.0.21'] });
    expect((await good(a, '127.0.0.21')).status).toBe(200);
    expect((await good(b, '127.0.0.21')).status).toBe(200);
  });

  it('a whitelist entry made on one instance is never banned on the other', async () => {
    await getCommand('ip_blocking.whitelist_add').run(
      { api: apiA },
      { service: 'console', ips: ['127.0.0.22'] },
    );
    for (let i = 0; i < 8; i++) expect((await fail(i % 2 ? a : b, '127.0.0.22')).status).toBe(401);
    expect((await good(b, '127.0.0.22')).status).toBe(200);
    const listed = await getCommand('ip_blocking.banned').run({ api: apiB }, {});
    expect(listed.data).toEqual([]);
  });
});
