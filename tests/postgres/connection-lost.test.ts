/**
 * What only PostgreSQL has: connections the database server may drop (a restart, a failover, an
 * administrator's pg_terminate_backend). An idle connection dropped must not end the Lintel server: it is
 * logged, and the next call opens a new one. Runs in the PostgreSQL pass of `npm test` (DATABASE_URL set).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import pg from 'pg';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin } from '../support/fixtures';

let ts: TestServer;
let api: ApiClient;

beforeAll(async () => {
  ts = await startTestServer();
  expect(ts.server.context.database.kind).toBe('postgres');
  api = await admin(ts);
});
afterAll(async () => {
  await ts?.close();
});

it('keeps answering after PostgreSQL drops its idle connections', async () => {
  // a few calls at once leave several idle connections in the pool
  await Promise.all([1, 2, 3].map(() => getCommand('user.list').run({ api }, {})));
  const url = new URL(ts.server.context.config.databaseUrl!);
  const database = url.pathname.slice(1);
  const killer = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await killer.connect();
  try {
    const killed = await killer.query(
      'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
      [database],
    );
    expect(killed.rowCount).toBeGreaterThan(0);
  } finally {
    await killer.end();
  }
  await expect.poll(() => ts.logs().includes('database connection lost'), { timeout: 10_000 }).toBe(true);
  const users = await getCommand('user.list').run({ api }, {});
  expect(users.meta.total).toBeGreaterThan(0);
});
