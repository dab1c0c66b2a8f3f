/**
 * Applying a backup to a project: one transaction, all or nothing. Each chosen table's file is loaded into a
 * temporary table — COPY text (format 4) by COPY of the entry as it is (`loadCopyText`), on PostgreSQL from
 * the inflating entry, on PGlite a piece of whole lines at a time; NDJSON (formats 1–3) on PostgreSQL by COPY
 * into a `json` table (`copyTable`), on PGlite line by line in batches of `PAGE` rows through
 * `jsonb_populate_recordset` — then the project's rows are made equal to it: rows (and
 * links) the backup lacks are deleted (children first), the backup's rows are upserted by id (parents first,
 * an unchanged row left as it is), the links it adds inserted, the identity sequences moved past the largest
 * id. A process that dies meanwhile leaves nothing: the transaction never commits.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import readline from 'node:readline';
import { createHash, randomBytes } from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import yauzl from 'yauzl';
import type { BackupEntitySet } from '@lintel/commands';
import type { DB } from '../db/schema';
import type { ServerContext } from '../context';
import { AppError } from '../errors';
import {
  BACKUP_FORMAT,
  BACKUP_FORMAT_VERSION,
  COPY_SETTINGS,
  COPY_TEXT_FORMAT,
  FILE_KINDS,
  storedDirOf,
  filesDirOf,
  PROJECT_COLUMNS,
  TABLES,
  orderedSets,
  type BackupFileKind,
  type BackupTable,
  type Manifest,
} from './format';
import { PAGE, tableColumns } from './make';
import { backupProgress } from './progress';
import { markChanged } from '../access-sync/ledger';
import { STORED_FILES_LOCK } from '../storage/files';
import { SipNumberChangedEvent, SipTrunkChangedEvent } from '../events/define';
import { enqueueExpiry } from '../handlers/guest-access/guest-access.job';

const invalid = (reason: string, data: Record<string, unknown> = {}) =>
  new AppError('invalid_backup_image', { reason, ...data });

/** A stored file of the backup: its name in its kind's folder, its size, and its bytes. */
export interface BackupFile {
  name: string;
  size: number;
  open(): Promise<Readable>;
}

/** An opened backup: its manifest and a reader of each table's lines. */
export interface BackupImage {
  manifest: Manifest;
  lines(table: string): AsyncIterable<string>;
  /** the table's file as it is stored, its bytes as they are inflated */
  bytes(table: string): Promise<Readable>;
  /** the stored files of a kind (format 2), read from the zip's directory again: none is held in memory */
  files(kind: BackupFileKind['name']): AsyncIterable<BackupFile>;
  close(): void;
}

function openZip(file: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) =>
    yauzl.open(file, { lazyEntries: true, autoClose: false, strictFileNames: true }, (err, zip) =>
      err || !zip ? reject(invalid('not_a_zip')) : resolve(zip),
    ),
  );
}

/**
 * The zip's entries but the stored files (`files/…`), which are only counted per kind: a backup of 100,000
 * photos does not keep 100,000 entries in memory.
 */
async function entriesOf(
  zip: yauzl.ZipFile,
): Promise<{ entries: Map<string, yauzl.Entry>; files: Map<string, number> }> {
  const entries = new Map<string, yauzl.Entry>();
  const files = new Map<string, number>();
  await new Promise<void>((resolve, reject) => {
    zip.on('entry', (e: yauzl.Entry) => {
      const kind = fileKindOf(e.fileName);
      if (kind !== null) files.set(kind, (files.get(kind) ?? 0) + 1);
      else entries.set(e.fileName, e);
      zip.readEntry();
    });
    zip.on('end', () => resolve());
    zip.on('error', () => reject(invalid('broken_zip')));
    zip.readEntry();
  });
  return { entries, files };
}

/** `faces` of `files/faces/x.jpg`; null for an entry that is no stored file. */
function fileKindOf(entry: string): string | null {
  if (!entry.startsWith('files/')) return null;
  // a folder's own entry (other zip writers add them) holds nothing
  if (entry.endsWith('/')) return null;
  const slash = entry.indexOf('/', 'files/'.length);
  return slash < 0 ? '' : entry.slice('files/'.length, slash);
}

function streamOf(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Readable> {
  return new Promise((resolve, reject) =>
    zip.openReadStream(entry, (err, s) => (err || !s ? reject(invalid('broken_entry')) : resolve(s))),
  );
}

const MAX_MANIFEST = 1024 * 1024;

function checkManifest(m: unknown): Manifest {
  const o = m as Partial<Manifest> | null;
  if (!o || typeof o !== 'object' || o.format !== BACKUP_FORMAT) throw invalid('not_a_lintel_backup');
  if (typeof o.format_version !== 'number' || !Number.isInteger(o.format_version) || o.format_version < 1)
    throw invalid('no_format_version');
  if (o.format_version > BACKUP_FORMAT_VERSION)
    throw invalid('newer_format', { format_version: o.format_version, supported: BACKUP_FORMAT_VERSION });
  if (!Array.isArray(o.entities) || !Array.isArray(o.tables)) throw invalid('bad_manifest');
  const known = new Map(TABLES.map((t) => [t.name, t]));
  for (const t of o.tables) {
    const def = known.get(t?.name);
    if (!def || def.set !== t.set || !Number.isInteger(t.rows) || !Array.isArray(t.columns))
      throw invalid('bad_manifest', { table: String(t?.name) });
    if (!t.columns.every((c) => typeof c === 'string' && /^[a-z_][a-z0-9_]*$/.test(c)))
      throw invalid('bad_manifest', { table: t.name });
  }
  if (o.files !== undefined) {
    const kinds = new Map(FILE_KINDS.map((k) => [k.name, k]));
    if (!Array.isArray(o.files)) throw invalid('bad_manifest');
    for (const f of o.files)
      if (kinds.get(f?.kind)?.set !== f.set || !Number.isInteger(f.count) || f.count < 0)
        throw invalid('bad_manifest', { files: String(f?.kind) });
  }
  const sets = orderedSets(o.entities);
  if (sets.length !== o.entities.length) throw invalid('bad_manifest');
  return { ...(o as Manifest), entities: sets };
}

/** Opens a backup zip on disk and reads its manifest; anything it cannot read is `invalid_backup_image`. */
export async function openBackup(file: string): Promise<BackupImage> {
  const zip = await openZip(file);
  try {
    const { entries, files } = await entriesOf(zip);
    const me = entries.get('manifest.json');
    if (!me || me.uncompressedSize > MAX_MANIFEST) throw invalid('no_manifest');
    let text = '';
    for await (const chunk of await streamOf(zip, me)) text += (chunk as Buffer).toString('utf8');
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw invalid('bad_manifest');
    }
    const manifest = checkManifest(parsed);
    for (const t of manifest.tables)
      if (!entries.has(t.file)) throw invalid('missing_table', { table: t.name });
    // every stored file the manifest counts is in the zip, and none it does not count
    for (const kind of new Set([...files.keys(), ...(manifest.files ?? []).map((f) => f.kind)])) {
      const listed = manifest.files?.find((f) => f.kind === kind)?.count ?? 0;
      if ((files.get(kind) ?? 0) !== listed)
        throw invalid('file_count', { kind, files: files.get(kind) ?? 0, expected: listed });
    }
    return {
      manifest,
      async *lines(table: string) {
        const t = manifest.tables.find((x) => x.name === table)!;
        const stream = await streamOf(zip, entries.get(t.file)!);
        stream.on('error', () => undefined);
        const rl = readline.createInterface({ input: stream, crlfDelay: Infinity });
        try {
          for await (const line of rl) if (line) yield line;
        } catch {
          throw invalid('broken_entry', { table });
        } finally {
          rl.close();
          stream.destroy();
        }
      },
      async bytes(table: string) {
        const t = manifest.tables.find((x) => x.name === table)!;
        return streamOf(zip, entries.get(t.file)!);
      },
      async *files(kind) {
        if (!files.get(kind)) return;
        yield* storedFiles(file, kind);
      },
      close: () => zip.close(),
    };
  } catch (err) {
    zip.close();
    throw err;
  }
}

/**
 * The zip's entries `files/<kind>/…` in the order they are stored, from a second reading of its directory, one
 * entry at a time (the next is read once the caller is done with this one).
 */
async function* storedFiles(file: string, kind: string): AsyncGenerator<BackupFile> {
  const zip = await openZip(file);
  const dir = filesDirOf(kind);
  try {
    for (;;) {
      const e = await new Promise<yauzl.Entry | null>((resolve, reject) => {
        const cleanup = () =>
          zip.removeAllListeners('entry').removeAllListeners('end').removeAllListeners('error');
        zip.once('entry', (x: yauzl.Entry) => (cleanup(), resolve(x)));
        zip.once('end', () => (cleanup(), resolve(null)));
        zip.once('error', () => (cleanup(), reject(invalid('broken_zip'))));
        zip.readEntry();
      });
      if (!e) return;
      if (!e.fileName.startsWith(dir) || e.fileName.endsWith('/')) continue;
      yield { name: e.fileName.slice(dir.length), size: e.uncompressedSize, open: () => streamOf(zip, e) };
    }
  } finally {
    zip.close();
  }
}

export interface Applied {
  entities: BackupEntitySet[];
  tables: Record<string, number>;
  rows: number;
  /** the stored files written (those the storage folder lacked) */
  files: number;
}

const tmpName = (t: BackupTable) => `bk_${t.name}`;

/** COPY FROM STDIN on the apply's own connection: the statement and the bytes; answers the rows copied. */
type CopyIn = (statement: string, source: Readable) => Promise<number>;

/** PGlite's COPY takes its bytes whole: a piece of this many bytes (whole lines) at a time. */
const PGLITE_COPY_PIECE = 1 << 20;

/**
 * PGlite: `statement` (`… FROM STDIN`) run from `/dev/blob` over `source` a piece of whole lines at a time,
 * so memory holds a piece whatever the entry's size; answers the rows copied.
 */
function pgliteCopyIn(app: ServerContext): CopyIn {
  return async (statement, source) => {
    const fromBlob = statement.replace(/ from stdin\b/i, " from '/dev/blob'");
    let rows = 0;
    let held: Buffer[] = [];
    let size = 0;
    const flush = async (all: boolean) => {
      const bytes = held.length === 1 ? held[0]! : Buffer.concat(held, size);
      const end = all ? bytes.length : bytes.lastIndexOf(10) + 1;
      held = end < bytes.length ? [bytes.subarray(end)] : [];
      size = bytes.length - end;
      if (end > 0)
        rows += await app.database.copyFrom!(
          fromBlob,
          new Blob([new Uint8Array(bytes.buffer as ArrayBuffer, bytes.byteOffset, end)]),
        );
    };
    for await (const chunk of source as AsyncIterable<Buffer>) {
      held.push(chunk);
      size += chunk.length;
      if (size >= PGLITE_COPY_PIECE) await flush(false);
    }
    if (size > 0) await flush(true);
    return rows;
  };
}

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Format 4: the table's entry, COPY text, goes as it is into the temporary table by COPY with the manifest's
 * columns — the server parses each value by its type, nothing is parsed here. A column the file has and the
 * table no longer has is held as text and ignored; one it lacks takes its default in the upsert. A line COPY
 * cannot read refuses the apply (`bad_row`).
 */
async function loadCopyText(
  trx: Transaction<DB>,
  copyIn: CopyIn,
  image: BackupImage,
  t: BackupTable,
  fileColumns: readonly string[],
): Promise<number> {
  const tmp = tmpName(t);
  if (!fileColumns.length) throw invalid('bad_manifest', { table: t.name });
  const has = new Set(t.projectRow ? PROJECT_COLUMNS : await tableColumns(trx, t.name));
  for (const c of new Set(fileColumns))
    if (!has.has(c)) await sql`alter table ${sql.table(tmp)} add column ${sql.ref(c)} text`.execute(trx);
  const source = await image.bytes(t.name);
  let broken = false;
  source.on('error', () => (broken = true));
  try {
    return await copyIn(`copy ${ident(tmp)} (${fileColumns.map(ident).join(', ')}) from stdin`, source);
  } catch (err) {
    if (err instanceof AppError) throw err;
    if (broken) throw invalid('broken_entry', { table: t.name });
    // what the file holds refused by the server (data exceptions: a value its type does not read, a line of too
    // few or too many values; a column named twice); anything else — the connection lost, the engine failing —
    // is no fault of the file
    const code = (err as { code?: unknown })?.code;
    if (typeof code === 'string' && /^(22|23|42)[0-9A-Z]{3}$/.test(code))
      throw invalid('bad_row', { table: t.name });
    throw err;
  } finally {
    source.destroy();
  }
}

/**
 * PostgreSQL: the table's file goes as it is into a one-column `json` table by COPY — CSV with a quote and a
 * delimiter that JSON text never holds raw (control characters 1 and 2), so each line is one value and nothing
 * is escaped — and the server checks and spreads the lines: a line that is not JSON fails the COPY, one that is
 * not an object is counted. No line is parsed in this process.
 */
async function copyTable(
  trx: Transaction<DB>,
  copyIn: CopyIn,
  image: BackupImage,
  t: BackupTable,
  projectId: number,
): Promise<number> {
  const tmp = sql.table(tmpName(t));
  const raw = `bk_raw_${t.name}`;
  await sql`create temp table ${sql.table(raw)} (j json) on commit drop`.execute(trx);
  const source = await image.bytes(t.name);
  let broken = false;
  source.on('error', () => (broken = true));
  try {
    await copyIn(`copy ${raw} (j) from stdin (format csv, quote e'\\x01', delimiter e'\\x02')`, source);
  } catch {
    throw invalid(broken ? 'broken_entry' : 'bad_row', { table: t.name });
  } finally {
    source.destroy();
  }
  const r = await sql<{ n: number; bad: number }>`select count(j)::int as n,
    count(*) filter (where j is not null and json_typeof(j) <> 'object')::int as bad
    from ${sql.table(raw)}`.execute(trx);
  if (r.rows[0]!.bad > 0) throw invalid('bad_row', { table: t.name });
  // the project column set to the target project as the rows are spread (not a second pass over them)
  const columns = t.projectRow ? [...PROJECT_COLUMNS] : await tableColumns(trx, t.name);
  const values = sql.join(
    columns.map((c) => (c === t.projectColumn ? sql`${projectId}::int` : sql.ref(`r.${c}`))),
  );
  try {
    await sql`insert into ${tmp} (${sql.join(columns.map((c) => sql.ref(c)))}) select ${values}
      from ${sql.table(raw)} b, json_populate_record(null::${tmp}, b.j) r where b.j is not null`.execute(trx);
  } catch {
    throw invalid('bad_row', { table: t.name });
  }
  await sql`drop table ${sql.table(raw)}`.execute(trx);
  return r.rows[0]!.n;
}

async function loadTable(
  trx: Transaction<DB>,
  copyIn: CopyIn,
  streamed: boolean,
  image: BackupImage,
  t: BackupTable,
  projectId: number,
  info: { rows: number; columns: string[] },
  onRows: (n: number) => void,
): Promise<number> {
  const expected = info.rows;
  const tmp = sql.table(tmpName(t));
  if (t.projectRow)
    await sql`create temp table ${tmp} (name text, description text, settings jsonb) on commit drop`.execute(
      trx,
    );
  else
    await sql`create temp table ${tmp} on commit drop as select * from ${sql.table(t.name)} with no data`.execute(
      trx,
    );
  if (image.manifest.format_version >= COPY_TEXT_FORMAT) {
    const copied = await loadCopyText(trx, copyIn, image, t, info.columns);
    if (copied !== expected) throw invalid('row_count', { table: t.name, rows: copied, expected });
    onRows(copied);
    return copied;
  }
  if (streamed) {
    const copied = await copyTable(trx, copyIn, image, t, projectId);
    if (copied !== expected) throw invalid('row_count', { table: t.name, rows: copied, expected });
    onRows(copied);
    return copied;
  }
  let n = 0;
  let batch: string[] = [];
  const flush = async () => {
    if (!batch.length) return;
    const json = `[${batch.join(',')}]`;
    batch = [];
    await sql`insert into ${tmp} select * from jsonb_populate_recordset(null::${tmp}, ${json}::jsonb)`.execute(
      trx,
    );
  };
  for await (const line of image.lines(t.name)) {
    try {
      const v: unknown = JSON.parse(line);
      if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error();
    } catch {
      throw invalid('bad_row', { table: t.name, row: n + 1 });
    }
    batch.push(line);
    n++;
    if (batch.length >= PAGE) {
      try {
        await flush();
      } catch {
        throw invalid('bad_row', { table: t.name });
      }
      onRows(PAGE);
    }
  }
  const rest = batch.length;
  try {
    await flush();
  } catch {
    throw invalid('bad_row', { table: t.name });
  }
  onRows(rest);
  if (n !== expected) throw invalid('row_count', { table: t.name, rows: n, expected });
  return n;
}

/** `(a.k1, a.k2) = (b.k1, b.k2)` over the table's key. */
const sameKey = (t: BackupTable, a: string, b: string) => {
  const keys = (alias: string) => sql.join(t.key.map((k) => sql.ref(`${alias}.${k}`)));
  return sql`(${keys(a)}) = (${keys(b)})`;
};

/** Makes the project's rows of table `t` equal to the loaded temporary table (the delete half). */
async function deleteMissing(trx: Transaction<DB>, t: BackupTable, projectId: number): Promise<void> {
  if (t.projectRow || t.shared) return;
  const tmp = sql.table(tmpName(t));
  // of a link table too only the links the backup lacks: deleting every link and adding them back rewrote the
  // table and its indexes, most of an apply's time when most links are unchanged
  await sql`delete from ${sql.table(t.name)} t where ${t.scope(projectId)}
    and not exists (select 1 from ${tmp} b where ${sameKey(t, 'b', 't')})`.execute(trx);
}

/**
 * Before the upsert: who made a row (`madeBy`) that is no user of the project becomes null; a reference
 * (`refs`) to a row that is not the project's refuses the apply (`invalid_related_entity`).
 */
async function checkRefs(trx: Transaction<DB>, t: BackupTable, projectId: number): Promise<void> {
  const tmp = sql.table(tmpName(t));
  for (const c of t.madeBy ?? [])
    await sql`update ${tmp} b set ${sql.ref(c)} = null where b.${sql.ref(c)} is not null and not exists
      (select 1 from users u where u.id = b.${sql.ref(c)} and u.project_id = ${projectId})`.execute(trx);
  for (const [column, table] of Object.entries(t.refs ?? {})) {
    const r = await sql<{ n: number }>`select count(*)::int as n from ${tmp} b
      where b.${sql.ref(column)} is not null and not exists (select 1 from ${sql.table(table)} x
        where x.id = b.${sql.ref(column)} and x.project_id = ${projectId})`.execute(trx);
    if (r.rows[0]!.n > 0)
      throw new AppError('invalid_related_entity', {
        table: t.name,
        column,
        references: table,
        rows: r.rows[0]!.n,
      });
  }
}

/** The upsert half: the backup's rows in, by id (links: added). */
async function upsert(
  trx: Transaction<DB>,
  t: BackupTable,
  projectId: number,
  fileColumns: string[],
): Promise<void> {
  const tmp = sql.table(tmpName(t));
  if (t.projectRow) {
    const cols = PROJECT_COLUMNS.filter((c) => fileColumns.includes(c));
    if (!cols.length) return;
    await sql`update projects p set ${sql.join(
      cols.map((c) => sql`${sql.ref(c)} = b.${sql.ref(c)}`),
    )} from (select * from ${tmp} limit 1) b where p.id = ${projectId}`.execute(trx);
    return;
  }
  const target = await tableColumns(trx, t.name);
  const cols = target.filter((c) => fileColumns.includes(c) && !t.serverColumns?.includes(c));
  const list = sql.join(cols.map((c) => sql.ref(c)));
  // the rows as they go in: the project column is the project the backup is applied to (the file's is its
  // source's), set here rather than by a pass over the loaded rows
  const values = sql.join(
    cols.map((c) => (c === t.projectColumn ? sql`${projectId}::int as ${sql.ref(c)}` : sql.ref(c))),
  );
  const identity = await sql<{
    n: number;
  }>`select count(*)::int as n from pg_attribute where attrelid = ${t.name}::regclass and attidentity <> ''`.execute(
    trx,
  );
  const overriding = identity.rows[0]!.n > 0 ? sql`overriding system value` : sql``;
  const updates = cols.filter((c) => !t.key.includes(c));
  const changed = (a: string, b: string) =>
    sql`(${sql.join(updates.map((c) => sql.ref(`${a}.${c}`)))}) is distinct from (${sql.join(
      updates.map((c) => sql.ref(`${b}.${c}`)),
    )})`;
  if (t.link) {
    // the links not there yet (an anti-join, not a conflict per row: most are there)
    await sql`insert into ${sql.table(t.name)} (${list}) ${overriding} select ${values} from ${tmp} b
      where not exists (select 1 from ${sql.table(t.name)} t where ${sameKey(t, 't', 'b')})
      on conflict do nothing`.execute(trx);
    // a link that carries a value (a device's pass count): the value of the backup
    if (updates.length)
      await sql`update ${sql.table(t.name)} t set ${sql.join(
        updates.map((c) => sql`${sql.ref(c)} = b.${sql.ref(c)}`),
      )} from ${tmp} b where ${sameKey(t, 't', 'b')} and ${changed('t', 'b')}`.execute(trx);
    return;
  }
  if (!t.shared) {
    // an id of the backup held by another project's row: applying would take that row over
    const foreign = await sql<{ n: number }>`select count(*)::int as n from ${tmp} b
      join ${sql.table(t.name)} t on ${sameKey(t, 't', 'b')} where not (${t.scope(projectId)})`.execute(trx);
    if (foreign.rows[0]!.n > 0)
      throw new AppError('cant_perform_action', { reason: 'ids_of_another_project', table: t.name });
  }
  // rows equal to the backup's are left as they are (no new row version, no index entries): a restore mostly
  // finds most rows unchanged
  const keyList = sql.join(t.key.map((k) => sql.ref(k)));
  await sql`insert into ${sql.table(t.name)} (${list}) ${overriding} select ${values} from ${tmp} order by ${keyList}
    on conflict (${keyList}) do update set ${sql.join(updates.map((c) => sql`${sql.ref(c)} = excluded.${sql.ref(c)}`))}
    where ${changed(t.name, 'excluded')}`.execute(trx);
  if (identity.rows[0]!.n > 0)
    await sql`select setval(pg_get_serial_sequence(${t.name}, 'id'),
      greatest((select max(id) from ${sql.table(t.name)}), 0) + 1, false)`.execute(trx);
}

/** A database refusal of the merge as the catalogue names it. */
function mergeError(err: unknown, table: string): unknown {
  const code = (err as { code?: string })?.code;
  const constraint = (err as { constraint?: string })?.constraint;
  if (code === '23503') return new AppError('invalid_related_entity', { table, constraint });
  if (code === '23505') return new AppError('value_not_unique', { table, constraint });
  return err;
}

/** `application_name` of an apply's own PostgreSQL connection. */
export const APPLY_APPLICATION = 'lintel backup apply';

/**
 * The apply's one transaction. PostgreSQL: on a connection of its own (not one of the pool's), so the COPY of
 * each table's file streams in the transaction (`streamed`); PGlite: the server's one connection, its COPY a
 * piece at a time.
 */
async function inTransaction(
  app: ServerContext,
  work: (trx: Transaction<DB>, copyIn: CopyIn, streamed: boolean) => Promise<void>,
): Promise<void> {
  if (app.database.kind !== 'postgres' || !app.config.databaseUrl)
    return app.db.transaction().execute((trx) => work(trx, pgliteCopyIn(app), false));
  const client = new pg.Client({
    connectionString: app.config.databaseUrl,
    application_name: APPLY_APPLICATION,
  });
  // a connection that fails while idle must not end the process; the next statement reports it
  client.on('error', () => undefined);
  await client.connect();
  // a Kysely over this one connection, so the transaction's statements and its COPYs share it
  const own = new Kysely<DB>({
    dialect: new PostgresDialect({
      pool: {
        connect: async () => Object.assign(client, { release: () => undefined }),
        end: async () => undefined,
      } as unknown as pg.Pool,
    }),
  });
  const copyIn: CopyIn = async (statement, source) => {
    const copy = client.query(copyFrom(statement));
    await pipeline(source, copy);
    return copy.rowCount;
  };
  try {
    await own.transaction().execute((trx) => work(trx, copyIn, true));
  } finally {
    await own.destroy();
    await client.end().catch(() => undefined);
  }
}

/**
 * Applies the opened backup's chosen sets (default: all it holds) to the project, in one transaction. Sets the
 * backup does not hold are refused as `invalid_backup_image`.
 */
export async function applyBackup(
  app: ServerContext,
  image: BackupImage,
  projectId: number,
  chosen?: BackupEntitySet[],
): Promise<Applied> {
  const m = image.manifest;
  const sets = orderedSets(chosen ?? m.entities);
  const missing = sets.filter((s) => !m.entities.includes(s));
  if (missing.length) throw invalid('entities_not_in_backup', { entities: missing });
  const tables = TABLES.filter((t) => sets.includes(t.set) && m.tables.some((x) => x.name === t.name));
  const counts: Record<string, number> = {};
  let rows = 0;
  let files = 0;
  // the stored files this apply wrote: removed again if it does not commit
  const written: string[] = [];
  await inTransaction(app, async (trx, copyIn, streamed) => {
    // one apply per project at a time (the second waits for the first)
    await sql`select pg_advisory_xact_lock(72431, ${projectId})`.execute(trx);
    // COPY text is read under the settings it was written under (dates and intervals; timestamps carry their
    // offset, so the time zone is left alone: triggers keep the server's)
    for (const name of ['datestyle', 'intervalstyle'])
      await sql`select set_config(${name}, ${COPY_SETTINGS[name]!}, true)`.execute(trx);
    for (const t of tables) {
      const info = m.tables.find((x) => x.name === t.name)!;
      counts[t.name] = await loadTable(trx, copyIn, streamed, image, t, projectId, info, (n) => {
        rows += n;
        backupProgress.emit('apply', { projectId, phase: 'load', table: t.name, rows });
      });
    }
    // the numbers before the apply: a number it removes is told to the SIP service as well as one it adds
    const numbersBefore = tables.some((t) => t.name === 'sip_numbers') ? await numbersOf(trx, projectId) : [];
    for (const t of [...tables].reverse()) {
      try {
        await deleteMissing(trx, t, projectId);
      } catch (err) {
        throw mergeError(err, t.name);
      }
    }
    for (const t of tables) {
      backupProgress.emit('apply', { projectId, phase: 'upsert', table: t.name, rows });
      try {
        await checkRefs(trx, t, projectId);
        await upsert(trx, t, projectId, m.tables.find((x) => x.name === t.name)!.columns);
      } catch (err) {
        throw mergeError(err, t.name);
      }
    }
    // what the devices hold is no part of a backup: the access sync plans the project again against the
    // applied rows (the triggers see most changes; this covers the rest — pass counts, a ledger that drifted)
    await markChanged(trx, projectId);
    // the SIP service of every instance loads the numbers and the trunks' addresses again once this commits:
    // a restored trunk takes calls in, a restored number registers
    if (tables.some((t) => t.name === 'sip_numbers'))
      await app.outbox.emit(trx, SipNumberChangedEvent, {
        projectId,
        numbers: [...new Set([...numbersBefore, ...(await numbersOf(trx, projectId))])],
      });
    if (tables.some((t) => t.set === 'telephony'))
      await app.outbox.emit(trx, SipTrunkChangedEvent, { projectId });
    // a restored guest pass is deleted at the end of its validity like any (a job per pass and end)
    if (tables.some((t) => t.name === 'guest_passes')) {
      const passes = await sql<{
        id: number;
        to_u: Date | string;
      }>`select i.id, i.period_restrict_to_u as to_u
        from guest_passes g join identifiers i on i.id = g.identifier_id
        where g.project_id = ${projectId} and i.period_restrict_to_u is not null`.execute(trx);
      for (const p of passes.rows) await enqueueExpiry(app, trx, Number(p.id), new Date(p.to_u));
    }
    // the stored files the rows name (format 2), before the commit: a sweep of unnamed files (storage/sweep.ts)
    // waits for this transaction, or ran before it and this writes again what it removed
    const kinds = FILE_KINDS.filter((k) => sets.includes(k.set));
    if (kinds.length) await sql`select pg_advisory_xact_lock_shared(${STORED_FILES_LOCK}, 0)`.execute(trx);
    for (const kind of kinds) await restoreFiles(app, image, kind, written, (n) => (files += n));
  }).catch(async (err: unknown) => {
    await Promise.all(written.map((f) => fsp.rm(f, { force: true })));
    throw err;
  });
  // who may do what may have changed: forget the remembered callers (other instances: the tables' triggers)
  app.authCache.clear();
  app.estimates.clear();
  app.accessSync.forget(projectId);
  return { entities: sets, tables: counts, rows, files };
}

async function numbersOf(trx: Transaction<DB>, projectId: number): Promise<string[]> {
  const r = await sql<{
    number: string;
  }>`select number from sip_numbers where project_id = ${projectId}`.execute(trx);
  return r.rows.map((x) => x.number);
}

/** Largest stored file an apply writes (a face photo is at most 640 px, an avatar 256 px: far less). */
const MAX_STORED_FILE = 8 * 1024 * 1024;

/**
 * Writes the backup's files of a kind that the storage folder lacks (`written` gets each), each through a
 * `.part` file renamed once whole; a name it may not write, a file too large, or a photo whose bytes are not
 * its name's SHA-256 is `invalid_backup_image`. A file already stored is left as it is: its name is its
 * content (faces) or an upload's own (avatars).
 */
async function restoreFiles(
  app: ServerContext,
  image: BackupImage,
  kind: BackupFileKind,
  written: string[],
  onFile: (n: number) => void,
): Promise<void> {
  const dir = path.join(app.config.storageDir, storedDirOf(kind));
  await fsp.mkdir(dir, { recursive: true });
  for await (const f of image.files(kind.name)) {
    const bad = (reason: string) => invalid(reason, { kind: kind.name, file: f.name.slice(0, 200) });
    if (!kind.pattern.test(f.name)) throw bad('bad_file_name');
    if (f.size > MAX_STORED_FILE) throw bad('file_too_large');
    const target = path.join(dir, f.name);
    if (
      await fsp.stat(target).then(
        (s) => s.isFile(),
        () => false,
      )
    )
      continue;
    const part = `${target}.${randomBytes(6).toString('hex')}.part`;
    const hash = createHash('sha256');
    let size = 0;
    try {
      const count = new Transform({
        transform(chunk: Buffer, _enc, done) {
          size += chunk.length;
          if (size > MAX_STORED_FILE) return done(bad('file_too_large'));
          hash.update(chunk);
          done(null, chunk);
        },
      });
      await pipeline(await f.open(), count, fs.createWriteStream(part));
      if (kind.byContent && `${hash.digest('hex')}.jpg` !== f.name) throw bad('file_not_its_name');
      await fsp.rename(part, target);
    } catch (err) {
      await fsp.rm(part, { force: true });
      throw err instanceof AppError ? err : bad('broken_entry');
    }
    written.push(target);
    onFile(1);
  }
}
