import { z } from 'zod';
import { ListQuery, type Gate } from '@lintel/core';
import { defineCommand } from './command';
import { defineExport, ExportFormat } from './export';
import type { ResourceField } from './resource';

/**
 * A journal (issue 14 item 2): a family of append-only, time-ordered records — audit events now; device,
 * access-control and elevator events, call history and notifications as they come. It is read newest first
 * by keyset over `(time, id)`, never by OFFSET deep into millions: `meta.next` is the opaque cursor of the
 * rows older than the page, `meta.prev` of the rows newer than it; `from` / `to` bound the time (`to`
 * alone is "jump to that moment" without reading the rows after it). The filter language is the lists'.
 */

/** The most rows page-number paging (the console's table before it jumps by time) reaches. */
export const JOURNAL_MAX_OFFSET = 10_000;

/** a date the server reads (a bad one is `check_fields_data`, rule invalid_type, like a bad date filter) */
const When = z.string().max(40);

export const JournalQuery = ListQuery.extend({
  /** rows at or after this time */
  from: When.optional(),
  /** rows before this time */
  to: When.optional(),
  /** a `meta.next` or `meta.prev` of an earlier reply (same filters): the page beyond it */
  cursor: z
    .string()
    .max(200)
    .regex(/^[A-Za-z0-9_-]+$/, { message: 'invalid_format' })
    .optional(),
}).strict();
export type JournalQuery = z.input<typeof JournalQuery>;
export type ParsedJournalQuery = z.output<typeof JournalQuery>;

/** The arguments of a journal's export: its query (time range, filters, order) without paging or cursor. */
export const JournalExportQuery = JournalQuery.omit({ page: true, limit: true, cursor: true })
  .extend({ format: ExportFormat })
  .strict();
export type ParsedJournalExportQuery = z.output<typeof JournalExportQuery>;

export const JournalMeta = z.object({
  /** rows matching, counted up to JOURNAL_MAX_OFFSET + 1 (a journal of millions is not counted whole) */
  total: z.number().int(),
  page: z.number().int(),
  limit: z.number().int(),
  /** cursor of the older rows after this page; null at the oldest */
  next: z.string().nullable(),
  /** cursor of the newer rows before this page; null at the newest */
  prev: z.string().nullable(),
});
export const journalReply = <T extends z.ZodType>(item: T) =>
  z.object({ data: z.array(item), meta: JournalMeta });

/** Where a keyset cursor stands: the row's time (ISO) and id, and which way the page goes. */
export interface JournalCursor {
  t: string;
  id: number;
  dir: 'older' | 'newer';
}

const b64url = (s: string) => btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
const unb64url = (s: string) => atob(s.replace(/-/g, '+').replace(/_/g, '/'));

const CURSOR_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

export function encodeJournalCursor(c: JournalCursor): string {
  return b64url(JSON.stringify([c.dir === 'older' ? 'o' : 'n', c.t, c.id]));
}

/** null when the text is not a cursor this server wrote. */
export function decodeJournalCursor(text: string): JournalCursor | null {
  try {
    const v: unknown = JSON.parse(unb64url(text));
    if (!Array.isArray(v) || v.length !== 3) return null;
    const [d, t, id] = v as unknown[];
    // exactly the form the server writes (UTC, microseconds) and an id of the integer column's range
    if ((d !== 'o' && d !== 'n') || typeof t !== 'string' || !CURSOR_TIME.test(t)) return null;
    if (Number.isNaN(Date.parse(t)) || typeof id !== 'number' || !Number.isInteger(id)) return null;
    if (id < 0 || id > 2_147_483_647) return null;
    return { t, id, dir: d === 'o' ? 'older' : 'newer' };
  } catch {
    return null;
  }
}

export interface JournalSpec<N extends string, T extends z.ZodType> {
  /** snake case, e.g. `audit_event`: the command is `<noun>.list` */
  noun: N;
  /** URL segment, e.g. `audit-events` */
  segment: string;
  record: T;
  /** the record field that holds the time (kind `date`) */
  time: string;
  fields: Record<string, ResourceField>;
  gates: { view: Gate['anyPermission'] };
  /** licence flags the journal needs, as a family's (the call history: telephony's) */
  licence?: Gate['licence'];
}

/** Declares a journal: its fields and its list command (keyset paged, time-ranged, filtered). */
export function defineJournal<const N extends string, T extends z.ZodType>(spec: JournalSpec<N, T>) {
  const list = defineCommand({
    id: `${spec.noun}.list` as `${N}.list`,
    http: { method: 'GET', path: `/${spec.segment}` },
    args: JournalQuery,
    result: journalReply(spec.record),
    gates: { anyPermission: spec.gates.view, ...(spec.licence ? { licence: spec.licence } : {}) },
  });
  /** every row of the query, streamed (NDJSON or CSV), by keyset or a cursor: see export.ts */
  const exportRows = defineExport({
    id: `${spec.noun}.export` as `${N}.export`,
    path: `/${spec.segment}/export`,
    args: JournalExportQuery,
    item: spec.record,
    gates: { anyPermission: spec.gates.view, ...(spec.licence ? { licence: spec.licence } : {}) },
  });
  return {
    kind: 'journal' as const,
    noun: spec.noun,
    time: spec.time,
    fields: spec.fields,
    list,
    export: exportRows,
  };
}
