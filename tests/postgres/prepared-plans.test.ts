/**
 * A prepared statement's plan is kept (db/database.ts `preparedIds`): the users' records, loaded for fewer ids
 * than a page holds, are planned afresh on every run unless their ids are padded (PostgreSQL keeps a custom
 * plan while it looks cheaper than the generic one). Runs in the PostgreSQL pass (DATABASE_URL set).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sql } from 'kysely';
import { loadUsers } from '../../apps/server/src/handlers/user/user.store';
import { startTestServer, type TestServer } from '../support/server';

let ts: TestServer;

beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(async () => {
  await ts?.close();
});

it('the users records of one user, loaded ten times on one connection, are planned once and then only run', async () => {
  const db = ts.server.context.db;
  const admin = await db.selectFrom('users').select('id').orderBy('id').executeTakeFirstOrThrow();
  const plans = await db.connection().execute(async (conn) => {
    for (let i = 0; i < 10; i++) expect(await loadUsers(conn, [admin.id])).toHaveLength(1);
    const r = await sql<{ generic_plans: number; custom_plans: number }>`select generic_plans::int,
      custom_plans::int from pg_prepared_statements where statement like '/* prepared */%from users t%any($1::int[])%'`.execute(
      conn,
    );
    return r.rows;
  });
  expect(plans).toHaveLength(1);
  // five custom plans, then the generic one kept: planned 5 or 6 times, not 10
  expect(plans[0]!.custom_plans).toBeLessThanOrEqual(5);
  expect(plans[0]!.generic_plans).toBeGreaterThanOrEqual(5);
});
