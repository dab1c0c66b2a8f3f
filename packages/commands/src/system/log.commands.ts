import { z } from 'zod';
import { defineCommand, NoArgs } from '../command';

/**
 * Event logs and system logs (spec part 2 §7 "event logs and system logs (available, get, clear), download";
 * part 1 §2.4 "event logs"; issue 24 item 3; docs/decisions.md "Event and system logs"). A log is a bounded,
 * rotated file of lines that the instance which answered keeps in its log folder: the **system** logs are
 * its own log (`server`, everything the server logs) and the SIP server's output (`sip`, when this instance
 * runs Kamailio); the **event** logs are one line per thing that happened: `jobs` (every job's run and
 * outcome) and `events` (every platform event delivered, by topic and type — never its contents). No line
 * holds a secret: they are scrubbed as they are written and again as they are served.
 */
export const LogNames = ['server', 'sip', 'jobs', 'events'] as const;
export type LogName = (typeof LogNames)[number];
export const LogKinds = ['system', 'event'] as const;
export type LogKind = (typeof LogKinds)[number];
export const LogLevels = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;

export const LogSource = z.object({
  name: z.enum(LogNames),
  kind: z.enum(LogKinds),
  /** bytes of all its files */
  size_bytes: z.number().int(),
  /** its files now (the current one and older rotations) */
  files: z.number().int(),
  /** when it was last written; null: never */
  modified_at: z.string().nullable(),
});
export type LogSource = z.infer<typeof LogSource>;

export const LogLine = z.object({
  /** when it was written (a pino line's time); null: a line of no time (the SIP server's) */
  at: z.string().nullable(),
  /** trace, debug, info, warn, error, fatal; null: a line of no level */
  level: z.string().nullable(),
  message: z.string(),
  /** the line's other fields (a pino line's) */
  fields: z.record(z.string(), z.unknown()),
  /** the whole line as written */
  text: z.string(),
});
export type LogLine = z.infer<typeof LogLine>;

const Name = z.object({ name: z.enum(LogNames) });

export const logAvailable = defineCommand({
  id: 'log.available',
  http: { method: 'GET', path: '/logs' },
  args: NoArgs,
  result: z.object({
    data: z.array(LogSource),
    /** the instance whose logs these are (each instance keeps its own) */
    instance: z.string(),
    /** a file's bound before it is rotated, and the files kept per log */
    max_bytes: z.number().int(),
    max_files: z.number().int(),
  }),
  gates: { anyPermission: ['system_info.view'] },
});

/** A page of a log, newest last: the last `limit` lines (before `before`, a cursor an earlier page gave). */
export const logGet = defineCommand({
  id: 'log.get',
  http: { method: 'GET', path: '/logs/:name' },
  args: Name.extend({
    before: z
      .string()
      .regex(/^\d{1,3}:(\d{1,15}|end)$/)
      .optional(),
    limit: z.coerce.number().int().min(1).max(1000).default(200),
    /** the least level shown */
    level: z.enum(LogLevels).optional(),
    /** text a line contains (case-insensitive) */
    contains: z.string().max(200).optional(),
  }),
  result: z.object({
    data: z.array(LogLine),
    name: z.enum(LogNames),
    instance: z.string(),
    /** the cursor of the older lines; null: this page reaches the oldest line kept */
    before: z.string().nullable(),
  }),
  gates: { anyPermission: ['system_info.view'] },
});

/**
 * Empties a log (its current file and its older ones); audited, and said in the server's own log. A DELETE of
 * the log's lines: the surfaces ask first, as for every deletion.
 */
export const logClear = defineCommand({
  id: 'log.clear',
  http: { method: 'DELETE', path: '/logs/:name' },
  args: Name,
  result: z.object({ data: z.object({ name: z.enum(LogNames), cleared_bytes: z.number().int() }) }),
  gates: { anyPermission: ['project_settings.change'] },
});

/** The whole log as text, oldest line first, streamed (`lintel logs download`, the page's Download). */
export const logDownload = defineCommand({
  id: 'log.download',
  http: { method: 'GET', path: '/logs/:name/download' },
  args: Name,
  /** text, not JSON */
  result: z.unknown(),
  gates: { anyPermission: ['system_info.view'] },
  hidden: true,
});
