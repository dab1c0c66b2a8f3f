/**
 * Exports that stream (issue 14 item 4), generic for every family and journal: the rows a list would show
 * (its plan: scope, filters, search, sort — engine/list.ts `planList`, engine/journal.ts `journalPlan`) read
 * in batches of ids and written to the reply as they are read, as NDJSON (one record per line), CSV or XLSX. No
 * count, no OFFSET; memory holds one batch or two whatever the size of the export.
 *
 * Reading the ids:
 * - PostgreSQL: a server-side cursor (`DECLARE … NO SCROLL CURSOR`, `FETCH FORWARD`) in a read-only
 *   transaction on a connection of the export's own, not one of the pool's (as the import's COPY): one
 *   ordered scan, a snapshot of the rows as they were when it began; the records of each batch are loaded
 *   through the pool while the cursor fetches the next.
 * - PGlite (one connection for the whole server): keyset pages — each batch one short statement that
 *   starts after the last row of the one before by the sort keys — run as work outside the request, so
 *   the requests arriving meanwhile are served between the pages; nothing holds the connection in between.
 *
 * The connection is given back when the export ends, fails or the caller goes away (the reply's stream is
 * destroyed: `close`).
 */
import { Readable } from 'node:stream';
import pg from 'pg';
import { stringify } from 'csv-stringify/sync';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { ZodType } from 'zod';
import {
  EXPORT_CONTENT_TYPES,
  flatCells,
  recordColumns,
  type ExportFormat,
  type FlatCell,
} from '@lintel/commands';
import type { ServerContext } from '../context';
import type { DB } from '../db/schema';
import { outsideRequest } from '../db/pglite-pool';
import { orderOf } from './list';
import { xlsxStream } from './file-writers';
import { StreamedReply } from '../pipeline/streamed-reply';

/** Rows per batch: per keyset page (PGlite), per load of records, per write to the reply. */
export const EXPORT_BATCH = 1000;
/**
 * Rows per FETCH and load on PostgreSQL: a store's load of a batch joins tables the planner reads whole
 * once a batch is large (a hash join over every account for 1,000 users): fewer, larger batches read them
 * fewer times. One batch of users is about 3 MB of JSON.
 */
export const CURSOR_BATCH = 5000;

/** `application_name` of an export's own PostgreSQL connection (it shows in pg_stat_activity). */
export const EXPORT_APPLICATION = 'lintel export';

/** What an export reads: the rows of a plan, in its order (keys most significant first, the last `t.id`). */
export interface OrderedRows {
  from: RawBuilder<unknown>;
  where: RawBuilder<boolean>;
  keys: readonly RawBuilder<unknown>[];
  desc: boolean;
}

/** The ids of an export, a batch at a time; an empty batch is the end. `close` is safe at any time, twice. */
export interface IdReader {
  next(): Promise<number[]>;
  close(): Promise<void>;
}

/**
 * The rows after the one whose sort keys were `values` (their text; null for a null key), in the order
 * `keys asc|desc` with PostgreSQL's default nulls (last ascending, first descending). The values travel as
 * text parameters cast to the key's type (`types`, from `pg_typeof`), so a time keeps its microseconds.
 * Where no key of the last row is null the main term is one row comparison, which an index on the keys
 * serves as a range.
 */
export function keysetAfter(
  keys: readonly RawBuilder<unknown>[],
  values: readonly (string | null)[],
  types: readonly string[],
  desc: boolean,
): RawBuilder<boolean> {
  const value = (i: number) => sql`cast(cast(${values[i]} as text) as ${sql.raw(safeType(types[i]!))})`;
  const or = (parts: RawBuilder<boolean>[]) =>
    parts.length ? (sql`(${sql.join(parts, sql` or `)})` as RawBuilder<boolean>) : sql<boolean>`false`;
  const after = (from: number): RawBuilder<boolean> => {
    if (from >= keys.length) return sql<boolean>`false`;
    const firstNull = values.findIndex((v, i) => i >= from && v === null);
    const end = firstNull < 0 ? keys.length : firstNull;
    const parts: RawBuilder<boolean>[] = [];
    const prefixEqual = (upTo: number) =>
      upTo > from
        ? sql.join(
            keys.slice(from, upTo).map((k, j) => sql`${k} = ${value(from + j)}`),
            sql` and `,
          )
        : sql`true`;
    if (end > from) {
      // strictly beyond on the keys whose values are known: one row comparison
      const ks = keys.slice(from, end);
      const vs = ks.map((_, j) => value(from + j));
      parts.push(sql<boolean>`(${sql.join(ks)}) ${desc ? sql`<` : sql`>`} (${sql.join(vs)})`);
      // ascending, nulls come last: a null key after equal keys before it is beyond too
      if (!desc)
        for (let j = from; j < end; j++) parts.push(sql<boolean>`(${prefixEqual(j)} and ${keys[j]} is null)`);
    }
    if (firstNull >= 0) {
      const k = keys[firstNull]!;
      // the last row's key is null: descending, every non-null one comes after it; then the next keys decide
      const beyond = desc ? sql`${k} is not null or ` : sql``;
      parts.push(
        sql<boolean>`(${prefixEqual(firstNull)} and (${beyond}(${k} is null and ${after(firstNull + 1)})))`,
      );
    }
    return or(parts);
  };
  return after(0);
}

/** A type name as `pg_typeof` writes it (`timestamp with time zone`, `integer`, `"MyEnum"`); else text. */
const TYPE_NAME = /^(?:"?[A-Za-z_][\w ]*"?\.)?"?[A-Za-z_][\w ()]*"?(?:\[\])?$/;
const safeType = (t: string): string => (TYPE_NAME.test(t) ? t : 'text');

/** Keyset pages: each batch one statement from after the last row (PGlite, and `journalRows`). */
export function keysetReader(db: Kysely<DB>, q: OrderedRows, batch = EXPORT_BATCH): IdReader {
  let last: { values: (string | null)[]; types: string[] } | null = null;
  let done = false;
  const columns = sql.join(
    q.keys.map(
      (k, i) => sql`(${k})::text as ${sql.ref(`k${i}`)}, pg_typeof(${k})::text as ${sql.ref(`t${i}`)}`,
    ),
  );
  return {
    async next() {
      if (done) return [];
      const after = last ? keysetAfter(q.keys, last.values, last.types, q.desc) : sql<boolean>`true`;
      const page = await sql<Record<string, string | number | null>>`select t.id, ${columns}
        from ${q.from} where ${q.where} and ${after} order by ${orderOf(q.keys, q.desc)} limit ${batch}`.execute(
        db,
      );
      const rows = page.rows;
      if (rows.length < batch) done = true;
      const end = rows[rows.length - 1];
      if (end)
        last = {
          values: q.keys.map((_, i) => (end[`k${i}`] ?? null) as string | null),
          types: q.keys.map((_, i) => String(end[`t${i}`])),
        };
      return rows.map((r) => Number(r.id));
    },
    close: async () => void (done = true),
  };
}

/**
 * A server-side cursor on a connection of its own (PostgreSQL): opened here, so a failure to open it is
 * the request's error before anything is written.
 */
async function cursorReader(app: ServerContext, q: OrderedRows, batch: number): Promise<IdReader> {
  const client = new pg.Client({
    connectionString: app.config.databaseUrl,
    application_name: EXPORT_APPLICATION,
  });
  // a connection that fails while idle must not end the process; the next fetch reports it
  client.on('error', () => undefined);
  let closed: Promise<void> | null = null;
  const close = () =>
    (closed ??= (async () => {
      // ending the connection ends its transaction and its cursor with it
      await client.end().catch(() => undefined);
    })());
  try {
    await client.connect();
    await client.query('begin read only');
    const query =
      sql`select t.id from ${q.from} where ${q.where} order by ${orderOf(q.keys, q.desc)}`.compile(app.db);
    await client.query(`declare lintel_export no scroll cursor for ${query.sql}`, [...query.parameters]);
  } catch (err) {
    await close();
    throw err;
  }
  let done = false;
  return {
    async next() {
      if (done || closed) return [];
      const r = await client.query<{ id: number }>(`fetch forward ${batch} from lintel_export`);
      if (r.rows.length < batch) done = true;
      return r.rows.map((row) => Number(row.id));
    },
    close,
  };
}

/** The reader of an export's ids, opened: a cursor on PostgreSQL, keyset pages on PGlite. */
export async function openIdReader(
  app: ServerContext,
  q: OrderedRows,
  batch = EXPORT_BATCH,
): Promise<IdReader> {
  if (app.database.kind === 'postgres' && app.config.databaseUrl)
    return cursorReader(app, q, Math.max(batch, CURSOR_BATCH));
  const keyset = keysetReader(app.db, q, batch);
  // PGlite: each page waits its turn with the requests arriving meanwhile (db/pglite-pool.ts)
  return { next: () => outsideRequest(() => keyset.next()), close: keyset.close };
}

/** How one batch of records is written: NDJSON lines, or CSV rows under a header line. */
function encoder(
  format: 'ndjson' | 'csv',
  record: ZodType,
): { head: string; rows(records: unknown[]): string } {
  if (format === 'ndjson')
    return { head: '', rows: (records) => records.map((r) => JSON.stringify(r)).join('\n') + '\n' };
  const columns = recordColumns(record);
  const cell = (c: FlatCell) => (typeof c === 'boolean' ? String(c) : c);
  return {
    head: stringify([columns]),
    rows: (records) =>
      stringify(records.map((r) => flatCells(r as Record<string, unknown>, columns).map(cell))),
  };
}

/** The records of an NDJSON text (to check them). */
const ndjsonRecords = (text: string): unknown[] =>
  text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as unknown);

export interface ExportSource<T> {
  /** the records of a batch of ids, in their order */
  load(db: Kysely<DB>, ids: readonly number[]): Promise<T[]>;
  /**
   * the same records as NDJSON built by the database (optional): one text of their lines, each ended by a
   * line break; an NDJSON export writes it as it is
   */
  lines?(db: Kysely<DB>, ids: readonly number[]): Promise<string>;
  /** the record's schema: the CSV's columns, and each record's check in development and tests */
  record: ZodType;
}

/**
 * The reply of an export: opens the reader now (a bad query or an unreachable database is the request's
 * error), then reads, loads and writes batch after batch as the client takes them — the next batch is read
 * and loaded while this one is encoded and written. Destroying the body (the client went away) closes the
 * reader, which gives its connection back.
 */
export async function exportReply<T>(
  app: ServerContext,
  source: ExportSource<T>,
  rows: OrderedRows,
  format: ExportFormat,
): Promise<StreamedReply> {
  const reader = await openIdReader(app, rows);
  if (format === 'xlsx') return xlsxReply(app, source, reader);
  const check = app.config.checkResults;
  // NDJSON of a source whose database writes the records' JSON: its text is the reply, as it comes
  const lines = format === 'ndjson' ? source.lines : undefined;
  const encode = encoder(format, source.record);
  /**
   * the next batches — their records, or the database's NDJSON text; null at the end — read and loaded while
   * the one before is written: on PostgreSQL two ahead, each batch's records built by a connection of the
   * pool while the cursor fetches the next ids (one batch ahead left the database waiting on the reply
   * about a quarter of the time); on PGlite (one connection) one
   */
  const ahead = app.database.kind === 'postgres' ? 2 : 1;
  const queue: Promise<unknown[] | string | null>[] = [];
  let reading = false;
  let first = true;
  let finished = false;
  // the ids are read one batch after another (a keyset page starts after the last row of the one before)
  let reads: Promise<unknown> = Promise.resolve();
  const nextBatch = (): Promise<unknown[] | string | null> => {
    const ids = reads.then(() => reader.next());
    reads = ids.catch(() => undefined);
    const batch = ids.then((ids): Promise<unknown[] | string> | null =>
      !ids.length ? null : lines ? lines(app.db, ids) : source.load(app.db, ids),
    );
    // a failure there is reported when it is awaited, not as an unhandled rejection meanwhile
    batch.catch(() => undefined);
    return batch;
  };

  const body = new Readable({
    // a batch is written whole; the next is read only once the client has taken most of it
    highWaterMark: 64 * 1024,
    read() {
      // outside the request: on PGlite each batch waits its turn with the requests that came meanwhile
      if (!reading) outsideRequest(() => void pump());
    },
    destroy(err, callback) {
      finished = true;
      reader.close().then(
        () => callback(err),
        () => callback(err),
      );
    },
  });

  async function pump(): Promise<void> {
    reading = true;
    try {
      for (;;) {
        const records = await (queue.shift() ?? nextBatch());
        if (finished) return;
        if (!records) {
          finished = true;
          await reader.close();
          if (first) body.push(encode.head);
          body.push(null);
          return;
        }
        // the next batches are read and loaded while this one is encoded and written
        while (queue.length < ahead) queue.push(nextBatch());
        if (check)
          for (const r of typeof records === 'string' ? ndjsonRecords(records) : records)
            source.record.parse(r);
        const text =
          (first ? encode.head : '') + (typeof records === 'string' ? records : encode.rows(records));
        first = false;
        if (!body.push(text)) return;
      }
    } catch (err) {
      if (!finished) body.destroy(err as Error);
    } finally {
      reading = false;
    }
  }

  return new StreamedReply(EXPORT_CONTENT_TYPES[format], body);
}

/**
 * An export as an XLSX workbook: the CSV's columns and cells, one row committed to exceljs's streaming
 * writer at a time (engine/file-writers.ts), so memory stays one batch whatever the size. The next batch is
 * read and loaded while this one is written; the reader closes at the end or when the client goes away.
 */
function xlsxReply<T>(app: ServerContext, source: ExportSource<T>, reader: IdReader): StreamedReply {
  const columns = recordColumns(source.record);
  const check = app.config.checkResults;
  async function* cells(): AsyncIterable<FlatCell[]> {
    try {
      let pending: Promise<T[] | null> | null = null;
      const nextBatch = async (): Promise<T[] | null> => {
        const ids = await reader.next();
        return ids.length ? source.load(app.db, ids) : null;
      };
      for (;;) {
        const records = await (pending ?? nextBatch());
        if (!records) return;
        pending = nextBatch();
        pending.catch(() => undefined);
        for (const r of records) {
          if (check) source.record.parse(r);
          yield flatCells(r as Record<string, unknown>, columns);
        }
      }
    } finally {
      await reader.close();
    }
  }
  const body = xlsxStream('export', columns, cells());
  body.once('close', () => void reader.close().catch(() => undefined));
  return new StreamedReply(EXPORT_CONTENT_TYPES.xlsx, body);
}
