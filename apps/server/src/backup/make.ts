/**
 * Making a backup: one REPEATABLE READ transaction (one snapshot for every table), each table read by keyset
 * pages and written as NDJSON into a zip entry as the zip is written to disk — memory is one page, whatever
 * the size. The zip is written as `<file>.part` and renamed once whole, so a listed file is never a torn one.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { sql, type QueryResult, type RawBuilder, type Transaction } from 'kysely';
import yazl from 'yazl';
import type { BackupEntitySet } from '@lintel/commands';
import type { DB } from '../db/schema';
import type { ServerContext } from '../context';
import { VERSION } from '../version';
import {
  BACKUP_FORMAT,
  BACKUP_FORMAT_VERSION,
  fileOf,
  PROJECT_COLUMNS,
  tablesOf,
  type BackupTable,
  type Manifest,
} from './format';
import { backupProgress } from './progress';

/** Rows read per statement. */
export const PAGE = 2000;

export async function tableColumns(q: Transaction<DB>, table: string): Promise<string[]> {
  const r = await sql<{ name: string }>`select a.attname as name from pg_attribute a
    where a.attrelid = ${table}::regclass and a.attnum > 0 and not a.attisdropped order by a.attnum`.execute(
    q,
  );
  return r.rows.map((x) => x.name);
}

/** The rows of one table of the project, a page at a time, as NDJSON text. */
async function* tableRows(
  trx: Transaction<DB>,
  table: BackupTable,
  projectId: number,
  onRows: (n: number) => void,
): AsyncGenerator<string> {
  if (table.projectRow) {
    const cols = sql.join(PROJECT_COLUMNS.map((c) => sql`${sql.lit(c)}::text, t.${sql.ref(c)}`));
    const r = await sql<{
      j: string;
    }>`select jsonb_build_object(${cols})::text as j from projects t where ${table.scope(projectId)}`.execute(
      trx,
    );
    for (const row of r.rows) yield row.j + '\n';
    onRows(r.rows.length);
    return;
  }
  const keys = table.key.map((k) => sql.ref(`t.${k}`));
  const keyList = sql.join(keys);
  let last: unknown[] | null = null;
  for (;;) {
    const after: RawBuilder<unknown> = last
      ? sql`and (${keyList}) > (${sql.join(last.map((v) => sql`${v}`))})`
      : sql``;
    const r: QueryResult<Record<string, unknown> & { j: string }> = await sql<
      Record<string, unknown> & { j: string }
    >`select ${sql.join(
      table.key.map((k, i) => sql`${sql.ref(`t.${k}`)} as ${sql.ref(`k${i}`)}`),
    )}, to_jsonb(t)::text as j from ${sql.table(table.name)} t
      where ${table.scope(projectId)} ${after} order by ${keyList} limit ${PAGE}`.execute(trx);
    if (!r.rows.length) return;
    let chunk = '';
    for (const row of r.rows) chunk += row.j + '\n';
    const end: Record<string, unknown> = r.rows[r.rows.length - 1]!;
    last = table.key.map((_, i) => end[`k${i}`]);
    onRows(r.rows.length);
    yield chunk;
    if (r.rows.length < PAGE) return;
  }
}

export interface MadeBackup {
  size: number;
  rows: number;
  tables: Record<string, number>;
}

/** Writes the backup of `sets` of the project into `file` (a path in the backups folder). */
export async function makeBackup(
  app: ServerContext,
  opts: { backupId: number; projectId: number; name: string; sets: BackupEntitySet[]; file: string },
): Promise<MadeBackup> {
  const part = `${opts.file}.part`;
  await fsp.mkdir(path.dirname(opts.file), { recursive: true });
  const tables = tablesOf(opts.sets);
  let done = 0;
  const counted: Record<string, number> = {};
  await app.db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => {
      const project = await sql<{
        uid: string;
        name: string;
      }>`select uid, name from projects where id = ${opts.projectId}`.execute(trx);
      const manifest: Manifest = {
        format: BACKUP_FORMAT,
        format_version: BACKUP_FORMAT_VERSION,
        created_at: app.clock.now().toISOString(),
        server_version: VERSION,
        source: {
          database: app.database.kind,
          project_uid: project.rows[0]?.uid ?? '',
          project_name: project.rows[0]?.name ?? '',
        },
        name: opts.name,
        entities: opts.sets,
        tables: [],
      };
      // the counts and the rows come from one snapshot, so the manifest says what the files hold
      for (const t of tables) {
        const n = await sql<{
          n: number;
        }>`select count(*)::int as n from ${sql.table(t.name)} t where ${t.scope(opts.projectId)}`.execute(
          trx,
        );
        manifest.tables.push({
          name: t.name,
          set: t.set,
          file: fileOf(t.name),
          rows: n.rows[0]!.n,
          columns: t.projectRow ? [...PROJECT_COLUMNS] : await tableColumns(trx, t.name),
        });
      }
      const zip = new yazl.ZipFile();
      const written = pipeline(zip.outputStream, fs.createWriteStream(part));
      zip.addBuffer(Buffer.from(JSON.stringify(manifest, null, 2) + '\n'), 'manifest.json', {
        mtime: new Date(manifest.created_at),
      });
      const failures: Error[] = [];
      for (const t of tables) {
        counted[t.name] = 0;
        const source = Readable.from(
          tableRows(trx, t, opts.projectId, (n) => {
            counted[t.name]! += n;
            done += n;
            backupProgress.emit('make', { backupId: opts.backupId, rows: done });
          }),
        );
        source.on('error', (err) => {
          failures.push(err);
          (zip.outputStream as unknown as Readable).destroy(err);
        });
        zip.addReadStream(source, fileOf(t.name), { mtime: new Date(manifest.created_at) });
      }
      zip.end();
      await written;
      if (failures.length) throw failures[0]!;
      for (const t of manifest.tables)
        if (counted[t.name] !== t.rows)
          throw new Error(`backup of ${t.name}: ${counted[t.name]} rows, counted ${t.rows}`);
    })
    .catch(async (err: unknown) => {
      await fsp.rm(part, { force: true });
      throw err;
    });
  await fsp.rename(part, opts.file);
  const size = (await fsp.stat(opts.file)).size;
  return { size, rows: done, tables: counted };
}
