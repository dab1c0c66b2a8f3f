/**
 * Bulk import, generic: rows arrive as a stream (NDJSON), are read line by line and handed on in batches,
 * and each checked batch is staged in its family's staging table — with COPY FROM STDIN on PostgreSQL, with
 * one INSERT … SELECT FROM jsonb_to_recordset on PGlite (which has no COPY over the wire). Memory stays
 * flat in the size of the stream: one batch is held at a time. The set-based checks against the database
 * and the one commit statement per table stay with the family (users: handlers/user-import/); identifiers
 * and backups declare their own staging table the same way.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { StringDecoder } from 'node:string_decoder';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { sql, type Kysely } from 'kysely';
import type { ServerContext } from '../context';
import { AppError } from '../errors';

/** The content type of a streamed import body: one JSON object per line. */
export const NDJSON = 'application/x-ndjson';
/** The longest line a stream may hold (a row of the widest family stays far below it). */
export const MAX_LINE_BYTES = 1024 * 1024;

/**
 * The streamed body of the request a handler serves (`ctx.body`: the transport hands an NDJSON body over
 * unread, http/app.ts), or a 415 when the caller sent something else.
 */
export function streamedBody(
  body: AsyncIterable<Buffer | string> | undefined,
): AsyncIterable<Buffer | string> {
  if (!body) throw new AppError('invalid_data_sent', { expected: NDJSON }, 415);
  return body;
}

/**
 * The non-empty lines of a stream, numbered from 1, a chunk's lines at a time: one step of the iteration per
 * chunk read, not per line (an async step per line cost more than parsing it, with async hooks on).
 */
export async function* ndjsonLines(
  stream: AsyncIterable<Buffer | string>,
): AsyncGenerator<{ n: number; text: string }[]> {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  let n = 0;
  const take = (text: string) => {
    const out: { n: number; text: string }[] = [];
    for (const raw of text.split('\n')) {
      n++;
      const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      if (line.trim()) out.push({ n, text: line });
    }
    return out;
  };
  for await (const chunk of stream) {
    const text = rest + (typeof chunk === 'string' ? chunk : decoder.write(chunk));
    const cut = text.lastIndexOf('\n');
    if (cut < 0) {
      rest = text;
    } else {
      const lines = take(text.slice(0, cut));
      rest = text.slice(cut + 1);
      if (lines.length) yield lines;
    }
    if (rest.length > MAX_LINE_BYTES) throw new AppError('payload_too_large', {}, 413);
  }
  rest += decoder.end();
  if (rest) {
    const lines = take(rest);
    if (lines.length) yield lines;
  }
}

/** The lines of a stream as parsed JSON values, in batches of at most `size`. A line that is not JSON is a 400. */
export async function* ndjsonBatches(
  stream: AsyncIterable<Buffer | string>,
  size: number,
): AsyncGenerator<{ n: number; value: unknown }[]> {
  let batch: { n: number; value: unknown }[] = [];
  for await (const lines of ndjsonLines(stream))
    for (const { n, text } of lines) {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        throw new AppError('check_fields_data', {
          fields: [{ field: `body.${n}`, rule: 'invalid_type', params: { expected: 'JSON' } }],
        });
      }
      batch.push({ n, value });
      if (batch.length >= size) {
        yield batch;
        batch = [];
      }
    }
  if (batch.length) yield batch;
}

/** A staging table: its name and its columns with their PostgreSQL types, in COPY order. */
export interface StagingTable {
  table: string;
  columns: readonly (readonly [name: string, type: string])[];
}

/** Writes checked rows into a staging table; `close` releases its connection. */
export interface Stager {
  write(rows: readonly Record<string, unknown>[]): Promise<void>;
  /**
   * The rows encoded now (COPY's text, or PGlite's JSON), written when the answer is called: a caller that
   * waits for something else meanwhile (the one-request import, for its previous insert) encodes the next
   * batch while it waits, not after.
   */
  prepare(rows: readonly Record<string, unknown>[]): () => Promise<void>;
  close(): Promise<void>;
}

const COPY_SPECIAL = /[\\\t\n\r]/;

/** COPY's text format: `\N` for null, t/f, JSON for objects and lists, backslash escapes for the rest. */
function copyField(v: unknown): string {
  if (v === null || v === undefined) return '\\N';
  if (typeof v === 'boolean') return v ? 't' : 'f';
  if (typeof v === 'number') return String(v);
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  // most values hold nothing to escape: tested first, replaced only when they do
  if (!COPY_SPECIAL.test(s)) return s;
  return s.replace(/[\\\t\n\r]/g, (c) =>
    c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r',
  );
}

export function copyText(decl: StagingTable, rows: readonly Record<string, unknown>[]): string {
  const names = decl.columns.map(([name]) => name);
  let out = '';
  for (const r of rows) {
    let line = copyField(r[names[0]!]);
    for (let i = 1; i < names.length; i++) line += '\t' + copyField(r[names[i]!]);
    out += line + '\n';
  }
  return out;
}

/**
 * A stager for one import run. PostgreSQL: a dedicated connection (not one of the pool's: a COPY holds its
 * connection until the batch is through) taking each batch as one COPY FROM STDIN. PGlite: one INSERT …
 * SELECT over the batch as a single JSON parameter.
 */
export async function openStager(app: ServerContext, decl: StagingTable): Promise<Stager> {
  const columns = decl.columns.map(([name]) => `"${name}"`).join(', ');
  if (app.database.kind === 'postgres' && app.config.databaseUrl) {
    const client = new pg.Client({ connectionString: app.config.databaseUrl });
    // a connection that fails while idle must not end the process; the next write reports it
    client.on('error', () => undefined);
    await client.connect();
    const prepare = (rows: readonly Record<string, unknown>[]) => {
      if (!rows.length) return () => Promise.resolve();
      const text = copyText(decl, rows);
      return async () => {
        const copy = client.query(copyFrom(`copy ${decl.table} (${columns}) from stdin`));
        await pipeline(Readable.from([text]), copy);
      };
    };
    return {
      write: (rows) => prepare(rows)(),
      prepare,
      close: () => client.end().catch(() => undefined),
    };
  }
  const db = app.db as unknown as Kysely<Record<string, never>>;
  const shape = decl.columns.map(([name, type]) => `"${name}" ${type}`).join(', ');
  const prepare = (rows: readonly Record<string, unknown>[]) => {
    if (!rows.length) return () => Promise.resolve();
    const json = JSON.stringify(rows);
    return async () => {
      await sql`insert into ${sql.table(decl.table)} (${sql.raw(columns)})
        select ${sql.raw(columns)} from jsonb_to_recordset(${json}::jsonb) as x(${sql.raw(shape)})`.execute(
        db,
      );
    };
  };
  return { write: (rows) => prepare(rows)(), prepare, close: async () => undefined };
}

const ARRAY_SPECIAL = /[\\"]/;

/**
 * PostgreSQL's literal of a one-dimensional array (`{"a",NULL,"b \"c\""}` for a, null and `b "c"`; a
 * backslash doubled), to be cast by its parameter (`$1::text[]`, `$2::int[]`, `$3::boolean[]`): a batch's rows
 * as one array a column, read by `unnest`, cost the database about half of what the same rows cost as one JSON
 * document (`jsonb_to_recordset`).
 */
export function arrayLiteral(values: readonly (string | number | boolean | null)[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (i) out += ',';
    if (v === null) out += 'NULL';
    else if (typeof v !== 'string') out += String(v);
    else out += `"${ARRAY_SPECIAL.test(v) ? v.replace(/[\\"]/g, '\\$&') : v}"`;
  }
  return `${out}}`;
}
