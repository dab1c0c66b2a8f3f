import { z, type ZodType } from 'zod';
import { ListQuery, ndjsonValues } from '@lintel/core';
import { defineCommand, toRequest, type Command, type CommandContext, type Gates } from './command';

/**
 * Exports that stream (issue 14 item 4): one request per export, every row the list would show (its filters,
 * search, sort and the caller's view scope) written to the reply as the server reads it, with no count and
 * no paging. Every generic family (`<noun>.export`, `GET /<segment>/export`) and every journal has one,
 * declared here once and gated like its list.
 */

/**
 * What the reply is written in: one record per line (NDJSON), CSV with a header line, or an XLSX workbook of
 * one sheet (the same columns as the CSV), written row by row as the records are read.
 */
export const ExportFormats = ['ndjson', 'csv', 'xlsx'] as const;
export type ExportFormat = (typeof ExportFormats)[number];

/** The content type of each format's reply. */
export const EXPORT_CONTENT_TYPES: Record<ExportFormat, string> = {
  ndjson: 'application/x-ndjson; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

export const ExportFormat = z.enum(ExportFormats).default('ndjson');

/** The arguments of a family's export: its list's query (filters, match, search, sort) without paging. */
export const ListExportQuery = ListQuery.omit({ page: true, limit: true })
  .extend({ format: ExportFormat })
  .strict();
export type ListExportQuery = z.input<typeof ListExportQuery>;
export type ParsedListExportQuery = z.output<typeof ListExportQuery>;

/** How a streamed reply is read: the schema of each row. */
export interface StreamReply<Item extends ZodType = ZodType> {
  item: Item;
}

export interface StreamOptions {
  signal?: AbortSignal;
  /** check each row against the record's schema (default true) */
  validate?: boolean;
}

/**
 * A command whose reply is a stream of rows. `run` gathers every row into one array (for small exports and
 * tests); `rows` hands them over a batch at a time as they arrive, so a caller's memory stays flat.
 */
export type StreamCommand<
  A extends ZodType = ZodType,
  Item extends ZodType = ZodType,
  Id extends string = string,
> = Command<A, z.ZodArray<Item>, Id> & {
  stream: StreamReply<Item>;
  rows(
    ctx: CommandContext,
    args: z.input<A>,
    options?: StreamOptions,
  ): AsyncGenerator<z.output<Item>[], void, undefined>;
};

export const isStreamCommand = (cmd: Command): cmd is StreamCommand =>
  'stream' in cmd && typeof (cmd as { stream?: unknown }).stream === 'object';

export interface ExportSpec<Id extends string, A extends ZodType, Item extends ZodType> {
  id: Id;
  path: string;
  args: A;
  item: Item;
  gates: Gates;
}

/** Declares an export: `GET <path>` answering NDJSON (or CSV) as it reads, gated like the list. */
export function defineExport<const Id extends string, A extends ZodType, Item extends ZodType>(
  spec: ExportSpec<Id, A, Item>,
): StreamCommand<A, Item, Id> {
  const base = defineCommand({
    id: spec.id,
    http: { method: 'GET', path: spec.path },
    args: spec.args,
    result: z.array(spec.item),
    gates: spec.gates,
    // the CLI's `<nouns> export` and the console's export run it; it is no command of the palette's own
    hidden: true,
  });
  async function* rows(
    ctx: CommandContext,
    input: z.input<A>,
    options: StreamOptions = {},
  ): AsyncGenerator<z.output<Item>[], void, undefined> {
    const args = spec.args.parse(input) as Record<string, unknown>;
    // the client reads NDJSON whatever the caller asked the server for
    const req = toRequest(base, { ...args, format: 'ndjson' });
    const res = await ctx.api.openStream('GET', req.path, { query: req.query, signal: options.signal });
    const check = options.validate !== false;
    for await (const values of ndjsonValues(res.body))
      yield check ? values.map((v) => spec.item.parse(v) as z.output<Item>) : (values as z.output<Item>[]);
  }
  return {
    ...base,
    stream: { item: spec.item },
    rows,
    async run(ctx, input) {
      const all: z.output<Item>[] = [];
      for await (const batch of rows(ctx, input)) all.push(...batch);
      return all;
    },
  };
}

/** A cell of a flat row (CSV, XLSX): text, a number, a boolean or nothing. */
export type FlatCell = string | number | boolean | null;

/** A cell that must be quoted: it holds the delimiter, the quote or a line break. */
const NEEDS_QUOTES = /[",\n\r]/;

/**
 * One CSV line, ended by a line break, as csv-stringify writes it with its defaults (`,`, `"` doubled
 * inside a quoted cell, quoted only when needed, `\n`) — but booleans as `true`/`false` and nothing as an
 * empty cell (csv-stringify would write 1 and ''). Written here: at a million rows csv-stringify's options
 * and casts per cell were a fifth of the CLI's time (apps/cli/src/bulk/writers.test.ts holds both alike). The CLI's export and the console's write their CSV with it..
 */
export function csvLine(cells: readonly FlatCell[]): string {
  let line = '';
  for (let i = 0; i < cells.length; i++) {
    const c = cells[i];
    const text = c === null || c === undefined ? '' : typeof c === 'string' ? c : String(c);
    if (i > 0) line += ',';
    line += NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
  }
  return `${line}\n`;
}

/**
 * A record as the cells of a flat row, one per top-level field in the record's order: text, numbers and
 * booleans as they are, nothing as empty, a reference (`{id, name}`) by its id, a list of references by
 * their ids joined with `;`, anything else as its JSON. The server's CSV and the CLI's CSV and XLSX of
 * every family but users (which write the import's columns) are this.
 */
export function flatCells(record: Record<string, unknown>, columns: readonly string[]): FlatCell[] {
  return columns.map((c) => flatCell(record[c]));
}

const isRef = (v: unknown): v is { id: number } =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && typeof (v as { id?: unknown }).id === 'number';

export function flatCell(v: unknown): FlatCell {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  if (isRef(v)) return v.id;
  if (Array.isArray(v) && v.every((x) => isRef(x) || typeof x === 'number' || typeof x === 'string'))
    return v.map((x) => (isRef(x) ? x.id : x)).join(';');
  return JSON.stringify(v);
}

/** The columns of a flat row: the record schema's fields, in its order. */
export function recordColumns(record: ZodType): string[] {
  const shape = (record as unknown as { shape?: Record<string, unknown> }).shape;
  return shape ? Object.keys(shape) : [];
}
