import { z } from 'zod';
import { defineCommand } from '../command';
import { OkReply } from '../resource';

/**
 * Bulk import of users: an import is a session on the server with a staging table, so one all-or-nothing
 * import can travel in many HTTP batches. Start it, send the rows in batches (each row is checked like
 * `user.create` and kept with its problems), then commit: everything goes in in one transaction, or nothing.
 *
 * The columns of a file are the names below (CSV header, XLSX first row, JSON keys); export writes the same
 * columns, so export → import round-trips. Many-valued cells (`domains`, `markers`) are separated by `;`.
 * `role`, `domains` and `markers` take ids (whole numbers) or names; groups also their logical address,
 * and `@address` names a group by its logical address only (for addresses that are whole numbers).
 */
export const UserImportColumns = [
  'login',
  'name',
  'email',
  'description',
  'role',
  'domains',
  'markers',
  'phone',
  'address',
  'time_zone',
  'identifier_format',
  'time_format',
  'elevator_access_disabled',
  'is_group_admin',
  'password',
] as const;
export type UserImportColumn = (typeof UserImportColumns)[number];

/** The columns export writes (every import column but the password). */
export const UserExportColumns = UserImportColumns.filter((c) => c !== 'password');

/** Separator of many-valued cells in CSV and XLSX. */
export const MULTI_VALUE_SEPARATOR = ';';

/** Most rows in one `user.import_rows` call (a batch stays well under the 1 MiB body limit). */
export const MAX_IMPORT_BATCH = 1000;

/** The longest text a cell may hold (a description is at most 2,000 characters; the rest is the file's fault). */
export const MAX_IMPORT_CELL = 10_000;

/** The most items a list cell holds, and the longest text of an item. */
export const MAX_IMPORT_LIST = 1000;
export const MAX_IMPORT_LIST_ITEM = 1000;

/** The highest line number a row may carry (PostgreSQL's int). */
export const MAX_IMPORT_LINE = 2_147_483_647;

// The limits above are declared once: the schemas below and the fast path (`plainCell`, `parseImportRow`)
// both read them, and a test holds the two alike.

/** A cell as a file gives it: text (CSV, XLSX), or a JSON value (a list for groups and markers). */
export const ImportCell = z.union([
  z.string().max(MAX_IMPORT_CELL),
  z.number(),
  z.boolean(),
  z.null(),
  z.array(z.union([z.string().max(MAX_IMPORT_LIST_ITEM), z.number()])).max(MAX_IMPORT_LIST),
]);

/** One row of the file: its line (for the report) and its cells by column name. */
export const ImportRow = z
  .object({ line: z.number().int().min(1).max(MAX_IMPORT_LINE) })
  .catchall(ImportCell);
export type ImportRow = z.infer<typeof ImportRow>;

/** A cell `ImportCell` takes as it is. */
function plainCell(v: unknown): boolean {
  switch (typeof v) {
    case 'string':
      return v.length <= MAX_IMPORT_CELL;
    case 'number':
    case 'boolean':
      return true;
    case 'object':
      if (v === null) return true;
      if (!Array.isArray(v) || v.length > MAX_IMPORT_LIST) return false;
      for (const x of v)
        if (typeof x !== 'number' && (typeof x !== 'string' || x.length > MAX_IMPORT_LIST_ITEM)) return false;
      return true;
    default:
      return false;
  }
}

/**
 * `ImportRow.safeParse`, with a fast path for a row of plain cells (what every file gives): taken as it is,
 * without building the schema's copy of it, at a stream's hundreds of thousands of rows. Anything else goes
 * through the schema, whose answer (and issues) count. A test holds the two alike.
 */
export function parseImportRow(value: unknown): ReturnType<typeof ImportRow.safeParse> {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const row = value as Record<string, unknown>;
    const line = row.line;
    let plain = Number.isSafeInteger(line) && (line as number) >= 1 && (line as number) <= MAX_IMPORT_LINE;
    if (plain)
      for (const key in row)
        if (key === '__proto__' || (key !== 'line' && !plainCell(row[key]))) {
          plain = false;
          break;
        }
    if (plain && Object.getPrototypeOf(row) === Object.prototype)
      return { success: true, data: row as ImportRow } as ReturnType<typeof ImportRow.safeParse>;
  }
  return ImportRow.safeParse(value);
}

/**
 * A problem of one row: a field rule (`rule`, texts under `errors:validation.`) or a catalogue key (`key`,
 * texts under `errors:http.`), with the parameters of its message.
 */
export const ImportRowError = z.object({
  line: z.number().int(),
  field: z.string(),
  rule: z.string().optional(),
  key: z.string().optional(),
  params: z.record(z.string(), z.unknown()).optional(),
});
export type ImportRowError = z.infer<typeof ImportRowError>;

const ImportId = z.object({ id: z.uuid() });
const Count = z.number().int().min(0);

export const userImportStart = defineCommand({
  id: 'user.import_start',
  http: { method: 'POST', path: '/users/import' },
  args: z.object({ file_name: z.string().trim().max(255).optional() }).strict(),
  result: z.object({ id: z.string(), columns: z.array(z.string()) }),
  gates: { anyPermission: ['users.create'] },
  hidden: true,
});

/** What the import holds so far, and the problems of the rows just sent. */
export const ImportProgress = z.object({
  id: z.string(),
  rows: Count,
  valid: Count,
  invalid: Count,
  errors: z.array(ImportRowError),
});
export type ImportProgress = z.infer<typeof ImportProgress>;

export const userImportRows = defineCommand({
  id: 'user.import_rows',
  http: { method: 'POST', path: '/users/import/:id/rows' },
  args: ImportId.extend({ rows: z.array(ImportRow).min(1).max(MAX_IMPORT_BATCH) }).strict(),
  result: ImportProgress,
  gates: { anyPermission: ['users.create'] },
  // rows with passwords are hashed on the server (argon2id), which takes a while for a full batch
  timeoutMs: 600_000,
  hidden: true,
});

/** The outcome of a commit (or of a dry run): counts, exactly which lines went in, and the problems. */
export const ImportReport = z.object({
  id: z.string(),
  dry_run: z.boolean(),
  continue_on_error: z.boolean(),
  /** whether rows went into the database (false for a dry run, and when invalid rows stopped the import) */
  committed: z.boolean(),
  /** why nothing went in: a dry run, or invalid rows without continue_on_error */
  reason: z.enum(['dry_run', 'invalid_rows']).nullable(),
  rows: Count,
  valid: Count,
  invalid: Count,
  inserted: Count,
  /** what a commit would insert (equals `inserted` once committed) */
  would_insert: Count,
  /** the lines that went in: every valid line, or none */
  inserted_lines: z.enum(['all_valid', 'none']),
  /** the lines that did not, as [from, to] ranges */
  rejected_lines: z.array(z.tuple([z.number().int(), z.number().int()])),
  /** the first problems, by line */
  errors: z.array(ImportRowError),
  errors_total: Count,
  /** how often each field's problem occurred */
  error_counts: z.array(
    z.object({ field: z.string(), rule: z.string().optional(), key: z.string().optional(), count: Count }),
  ),
});
export type ImportReport = z.infer<typeof ImportReport>;

/** Rows checked and staged per round of a streamed import (one batch is held at a time). */
export const IMPORT_STREAM_BATCH = 1000;

/**
 * What `commit` asks of a stream: the import committed by the stream itself, as `user.import_commit` would
 * with these options, in one request. In the query it is its JSON text (`commit={"continue_on_error":true}`).
 */
export const ImportStreamCommit = z.preprocess(
  (v) => {
    if (typeof v !== 'string') return v;
    try {
      return JSON.parse(v) as unknown;
    } catch {
      return v;
    }
  },
  z.object({ continue_on_error: z.boolean().default(false), dry_run: z.boolean().default(false) }).strict(),
);

/**
 * The rows of an import as one streamed body (`application/x-ndjson`: one row object per line, lines in
 * increasing order), checked in batches and staged as they arrive: memory stays flat in the size of the
 * file on both sides. The reply is what the import holds afterwards, with the first problems of the rows
 * of this stream. A body of another type is a 415. `user.import_rows` stays for callers sending batches.
 *
 * With `commit` (an import with nothing staged yet), the stream is also the commit: the valid rows go in
 * batch by batch inside one transaction held by this request, which commits at the end (or rolls back: a
 * dry run, invalid rows without `continue_on_error`, any failure, the server's death); the reply carries
 * the commit's `report`, the same as `user.import_commit` gives for the same file.
 */
export const userImportStream = defineCommand({
  id: 'user.import_stream',
  http: { method: 'POST', path: '/users/import/:id/stream' },
  // the body is the stream; `batch` (in the query) sets the rows per round, `commit` commits it too
  args: ImportId.extend({
    batch: z.coerce
      .number()
      .int()
      .min(1)
      .max(10 * MAX_IMPORT_BATCH)
      .optional(),
    commit: ImportStreamCommit.optional(),
  }),
  result: ImportProgress.extend({ report: ImportReport.optional() }),
  gates: { anyPermission: ['users.create'] },
  timeoutMs: 3_600_000,
  hidden: true,
});

export const userImportCommit = defineCommand({
  id: 'user.import_commit',
  http: { method: 'POST', path: '/users/import/:id/commit' },
  args: ImportId.extend({
    continue_on_error: z.boolean().default(false),
    dry_run: z.boolean().default(false),
  }).strict(),
  result: ImportReport,
  gates: { anyPermission: ['users.create'] },
  timeoutMs: 1_800_000,
  hidden: true,
});

/** Drops an import that will not be committed (after a dry run, a refused commit, or an interruption). */
export const userImportCancel = defineCommand({
  id: 'user.import_cancel',
  http: { method: 'DELETE', path: '/users/import/:id' },
  argsIn: 'query',
  args: ImportId,
  result: OkReply,
  gates: { anyPermission: ['users.create'] },
  hidden: true,
});
