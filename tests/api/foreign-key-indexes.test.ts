/**
 * Every foreign key's column leads an index (a partial one will do), but those naming the project: without
 * one, each row deleted from the referenced table scans the referencing table whole. A backup's apply that
 * removed 14,000 users scanned 100,000 identifiers once per user (`identifiers.created_by`) for minutes, and
 * deleting one user or identifier scanned the whole ACS log (migration 0092). This keeps it so for the tables
 * to come: a new foreign key without its index fails here, named.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sql } from 'kysely';
import { startTestServer, type TestServer } from '../support/server';

let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(async () => {
  await ts?.close();
});

it('every foreign key but those naming the project has an index led by its column', async () => {
  const missing = await sql<{ fk: string }>`
    select c.conrelid::regclass::text || '.' || a.attname || ' -> ' || c.confrelid::regclass::text as fk
    from pg_constraint c
    join pg_attribute a on a.attrelid = c.conrelid and a.attnum = c.conkey[1]
    where c.contype = 'f' and c.confrelid <> 'projects'::regclass
      and not exists (select 1 from pg_index i where i.indrelid = c.conrelid and i.indkey[0] = a.attnum)
    order by 1`.execute(ts.server.context.db);
  expect(missing.rows.map((r) => r.fk)).toEqual([]);
  // the check reads the catalogue it should: the keys are there, most of them indexed
  const keys = await sql<{
    n: number;
  }>`select count(*)::int as n from pg_constraint where contype = 'f'`.execute(ts.server.context.db);
  expect(keys.rows[0]!.n).toBeGreaterThan(50);
});
