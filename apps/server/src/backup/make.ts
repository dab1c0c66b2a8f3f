/**
 * Making a backup: one REPEATABLE READ transaction (one snapshot for every table), each table read by one
 * statement — `COPY … TO STDOUT` on a connection in the same snapshot on PostgreSQL, a cursor on PGlite — and
 * written as COPY text (format 4, format.ts) into a zip entry as the zip is written to disk, with backpressure from the file to the
 * database: memory is a chunk, whatever the size. The manifest is the last entry (its counts are the rows
 * written). The zip is written as `<file>.part` and renamed once whole, so a listed file is never a torn one.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { sql, type RawBuilder, type Transaction } from 'kysely';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import type { BackupEntitySet } from '@lintel/commands';
import type { DB } from '../db/schema';
import type { ServerContext } from '../context';
import { VERSION } from '../version';
import {
  BACKUP_FORMAT,
  BACKUP_FORMAT_VERSION,
  COPY_SETTINGS,
  FILE_KINDS,
  storedDirOf,
  fileOf,
  filesDirOf,
  PROJECT_COLUMNS,
  tablesOf,
  type BackupFileKind,
  type BackupTable,
  type Manifest,
  type ManifestFiles,
} from './format';
import { backupProgress } from './progress';
import { ZipWriter } from './zip';

/** Rows fetched per round trip of a cursor (and per statement of an apply's load on PGlite). */
export const PAGE = 2000;

export async function tableColumns(q: Transaction<DB>, table: string): Promise<string[]> {
  const r = await sql<{ name: string }>`select a.attname as name from pg_attribute a
    where a.attrelid = ${table}::regclass and a.attnum > 0 and not a.attisdropped order by a.attnum`.execute(
    q,
  );
  return r.rows.map((x) => x.name);
}

/** The columns of each of `tables` (public tables), in their order: one statement for all. */
async function columnsOfTables(q: Transaction<DB>, tables: string[]): Promise<Map<string, string[]>> {
  const r = await sql<{ t: string; name: string }>`select c.relname as t, a.attname as name
    from pg_attribute a join pg_class c on c.oid = a.attrelid
    where c.relnamespace = 'public'::regnamespace and c.relname = any(${tables}::text[])
      and a.attnum > 0 and not a.attisdropped order by c.relname, a.attnum`.execute(q);
  const out = new Map<string, string[]>();
  for (const x of r.rows) {
    const list = out.get(x.t) ?? [];
    list.push(x.name);
    out.set(x.t, list);
  }
  return out;
}

/**
 * The entries' deflate level: 1, the fastest — the rows' repeated words compress well at any level, and at the
 * default (6) deflating took most of a make's time.
 */
const COMPRESSION = 1;

/** `application_name` of a backup's own PostgreSQL connection (it shows in pg_stat_activity). */
export const BACKUP_APPLICATION = 'lintel backup';

/**
 * The statement of one table's rows of the project, its columns in the manifest's order (in no particular row
 * order). `asText`: each column cast to text (PGlite's cursor, which this process writes as COPY text).
 * `sole`: the project is the server's only one — a link table's rows then are all the project's (each names a
 * parent whose `project_id` is not null), so the table is read whole, as pg_dump reads it, without the
 * semi-join on its parent that scopes it (at 1,000,000 users most of the time of `user_domains`).
 */
function rowsQuery(
  table: BackupTable,
  columns: readonly string[],
  projectId: number,
  sole: boolean,
  asText = false,
): RawBuilder<Record<string, string | null>> {
  const cols = sql.join(
    columns.map((c, i) =>
      asText ? sql`t.${sql.ref(c)}::text as ${sql.ref(`c${i}`)}` : sql`t.${sql.ref(c)}`,
    ),
  );
  const scope = sole && table.link ? sql`true` : table.scope(projectId);
  return sql`select ${cols} from ${sql.table(table.name)} t where ${scope}`;
}

/** The reader of every table's COPY text: a row count per table comes with the bytes. */
type TableReader = (
  table: BackupTable,
  columns: readonly string[],
  onRows: (n: number) => void,
) => AsyncGenerator<Buffer>;

const ESCAPED = /[\\\t\n\r]/g;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** A value (its type's text output, or null) as COPY's text format writes it. */
export function copyValue(v: string | null): string {
  return v === null ? '\\N' : v.replace(ESCAPED, (c) => ESCAPES[c]!);
}

/**
 * PGlite (and PostgreSQL without a URL of its own): one server-side cursor per table in the snapshot's
 * transaction, fetched `PAGE` rows at a time, each column as its type's text output, written here as COPY text
 * (PGlite's COPY TO goes to one buffer, the whole table in memory) — one statement per table, not a keyset
 * page per 2,000 rows (a page over a table scoped by a join redid the join each time).
 */
function cursorTables(trx: Transaction<DB>, projectId: number, sole: boolean): TableReader {
  return async function* (table, columns, onRows) {
    const query = rowsQuery(table, columns, projectId, sole, true);
    const keys = columns.map((_, i) => `c${i}`);
    await sql`declare lintel_backup no scroll cursor for ${query}`.execute(trx);
    try {
      for (;;) {
        const r = await sql<
          Record<string, string | null>
        >`fetch forward ${sql.lit(PAGE)} from lintel_backup`.execute(trx);
        if (!r.rows.length) return;
        let chunk = '';
        for (const row of r.rows) chunk += keys.map((k) => copyValue(row[k] ?? null)).join('\t') + '\n';
        onRows(r.rows.length);
        yield Buffer.from(chunk);
        if (r.rows.length < PAGE) return;
      }
    } finally {
      await sql`close lintel_backup`.execute(trx);
    }
  };
}

/** The rows (new lines) of a chunk of COPY text: a new line in a value is written `\n`, never as itself. */
export function linesIn(chunk: Buffer): number {
  let n = 0;
  for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) n++;
  return n;
}

/**
 * PostgreSQL: a connection of the backup's own in the snapshot of the make's transaction (`pg_export_snapshot`,
 * as pg_dump does), each table one `COPY (select …) TO STDOUT` in the text format — pg_dump's own statement, the
 * rows leave the server as their types' text and reach the zip as bytes, nothing converted on either side.
 * Backpressure holds end to end: the zip entry reads the COPY stream only as fast as the file takes it.
 */
async function copyTables(
  app: ServerContext,
  trx: Transaction<DB>,
  projectId: number,
  sole: boolean,
): Promise<{ read: TableReader; close: () => Promise<void> }> {
  const snapshot = await sql<{ s: string }>`select pg_export_snapshot() as s`.execute(trx);
  const client = new pg.Client({
    connectionString: app.config.databaseUrl,
    application_name: BACKUP_APPLICATION,
  });
  // a connection that fails while idle must not end the process; the next COPY reports it
  client.on('error', () => undefined);
  const close = () => client.end().catch(() => undefined);
  try {
    await client.connect();
    await client.query('select set_config(n, v, false) from unnest($1::text[], $2::text[]) s(n, v)', [
      Object.keys(COPY_SETTINGS),
      Object.values(COPY_SETTINGS),
    ]);
    await client.query('begin isolation level repeatable read read only');
    await client.query(`set transaction snapshot '${snapshot.rows[0]!.s.replace(/'/g, "''")}'`);
  } catch (err) {
    await close();
    throw err;
  }
  return {
    close,
    read: async function* (table, columns, onRows) {
      const q = rowsQuery(table, columns, projectId, sole).compile(app.db);
      // COPY takes no parameters: the project's id is the one value the statements hold, a number
      const text = q.sql.replace(/\$(\d+)/g, (_, i: string) => {
        const v = q.parameters[Number(i) - 1];
        if (typeof v !== 'number' || !Number.isInteger(v))
          throw new Error('backup: a parameter not an integer');
        return String(v);
      });
      const stream = client.query(copyTo(`copy (${text}) to stdout`));
      try {
        for await (const chunk of stream as AsyncIterable<Buffer>) {
          onRows(linesIn(chunk));
          yield chunk;
        }
      } finally {
        stream.destroy();
      }
    },
  };
}

/**
 * The names of a kind's files the project's rows name, read in the make's snapshot by a cursor (`PAGE` a
 * fetch): memory holds a page of names, however many files there are.
 */
async function* fileNames(
  trx: Transaction<DB>,
  kind: BackupFileKind,
  projectId: number,
): AsyncGenerator<string> {
  await sql`declare lintel_backup_files no scroll cursor for ${kind.names(projectId)}`.execute(trx);
  try {
    for (;;) {
      const r = await sql<{
        name: string;
      }>`fetch forward ${sql.lit(PAGE)} from lintel_backup_files`.execute(trx);
      for (const row of r.rows) if (kind.pattern.test(row.name)) yield row.name;
      if (r.rows.length < PAGE) return;
    }
  } finally {
    await sql`close lintel_backup_files`.execute(trx);
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
        files: [],
      };
      // in the snapshot: no other project has a row (the link tables are read whole)
      const others = await sql<{
        n: number;
      }>`select count(*)::int as n from projects where id <> ${opts.projectId}`.execute(trx);
      const sole = others.rows[0]!.n === 0;
      const columns = await columnsOfTables(
        trx,
        tables.map((t) => t.name),
      );
      for (const t of tables)
        manifest.tables.push({
          name: t.name,
          set: t.set,
          file: fileOf(t.name),
          rows: 0,
          columns: t.projectRow ? [...PROJECT_COLUMNS] : columns.get(t.name)!,
        });
      const copy =
        app.database.kind === 'postgres' && app.config.databaseUrl
          ? await copyTables(app, trx, opts.projectId, sole)
          : null;
      // the PGlite cursor's text output under the settings a COPY of the make is written under
      if (!copy)
        await sql`select set_config(n, v, true) from unnest(${Object.keys(COPY_SETTINGS)}::text[],
          ${Object.values(COPY_SETTINGS)}::text[]) s(n, v)`.execute(trx);
      try {
        const read = copy?.read ?? cursorTables(trx, opts.projectId, sole);
        const mtime = new Date(manifest.created_at);
        const zip = await ZipWriter.create(part);
        try {
          // one table's entry at a time, each read to its end as the file takes its deflated bytes
          for (const [i, t] of tables.entries()) {
            counted[t.name] = 0;
            const rows = read(t, manifest.tables[i]!.columns, (n) => {
              counted[t.name]! += n;
              done += n;
              backupProgress.emit('make', { backupId: opts.backupId, rows: done });
            });
            await zip.add(fileOf(t.name), rows, { mtime, level: COMPRESSION });
          }
          // the stored files the snapshot's rows name, one at a time (a JPEG gains nothing from deflate)
          for (const kind of FILE_KINDS.filter((k) => opts.sets.includes(k.set))) {
            const entry: ManifestFiles = { kind: kind.name, set: kind.set, count: 0, bytes: 0 };
            manifest.files!.push(entry);
            for await (const name of fileNames(trx, kind, opts.projectId)) {
              const file = path.join(app.config.storageDir, storedDirOf(kind), name);
              // a row naming a file that is not stored (gone before this backup) has none to carry
              const stat = await fsp.stat(file).catch(() => null);
              if (!stat?.isFile()) continue;
              const added = await zip.add(filesDirOf(kind.name) + name, fs.createReadStream(file), { mtime });
              entry.count++;
              entry.bytes += added.size;
            }
          }
          // the manifest comes last: its counts are the rows the entries hold, read from the one snapshot
          for (const m of manifest.tables) m.rows = counted[m.name] ?? 0;
          await zip.add('manifest.json', [Buffer.from(JSON.stringify(manifest, null, 2) + '\n')], {
            mtime,
            level: COMPRESSION,
          });
          await zip.end();
        } catch (err) {
          await zip.abort();
          throw err;
        }
      } finally {
        await copy?.close();
      }
    })
    .catch(async (err: unknown) => {
      await fsp.rm(part, { force: true });
      throw err;
    });
  await fsp.rename(part, opts.file);
  const size = (await fsp.stat(opts.file)).size;
  return { size, rows: done, tables: counted };
}
