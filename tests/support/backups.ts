/** Helpers of the backup tests: every row a backup covers, and waiting for a backup's job. */
import { sql, type Kysely } from 'kysely';
import { getCommand, type Backup } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import type { DB } from '../../apps/server/src/db/schema';
import { PROJECT_COLUMNS, TABLES } from '../../apps/server/src/backup/format';

/**
 * Every row of the project in each table a backup covers, by table, in key order, as JSON (timestamps as
 * text): two databases' snapshots compare equal when every row is equal. Project ids are left out (a backup
 * may go to another project's id).
 */
export async function projectRows(db: Kysely<DB>, projectId: number): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const t of TABLES) {
    const cols = t.projectRow
      ? sql`jsonb_build_object(${sql.join(PROJECT_COLUMNS.map((c) => sql`${sql.lit(c)}::text, t.${sql.ref(c)}`))})`
      : sql`to_jsonb(t) - 'project_id'`;
    const r = await sql<{ j: string }>`select (${cols})::text as j from ${sql.table(t.name)} t
      where ${t.scope(projectId)} order by ${sql.join(t.key.map((k) => sql.ref(`t.${k}`)))}`.execute(db);
    out[t.name] = r.rows.map((x) => JSON.parse(x.j) as unknown);
  }
  return out;
}

/** Polls the backup until its job has made it (generous bound: CI is slow). */
export async function waitReady(api: ApiClient, id: number, timeoutMs = 120_000): Promise<Backup> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const b = (await getCommand('backup.get').run({ api }, { id })).data;
    if (b.state === 'ready') return b;
    if (b.state === 'failed') throw new Error(`backup ${id} failed: ${b.error}`);
    if (Date.now() > end) throw new Error(`backup ${id} not made in time`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
