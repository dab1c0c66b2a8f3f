/**
 * The instance's logs as files it can read back (spec part 2 §7 "event logs and system logs (available, get,
 * clear), download"; docs/decisions.md "Event and system logs"). A log is a named, append-only file of lines
 * in the log folder (LINTEL_LOG_DIR, else the data folder's `logs`; a private temporary folder for
 * `memory://` data, removed on close), bounded: past `maxBytes` it is rotated (`server.log` becomes
 * `server.1.log`, …) and the oldest of `files` is dropped, so a log never holds more than
 * maxBytes × files. Every line is scrubbed of secrets as it is written and again as it is served.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import pino from 'pino';
import {
  LogLevels,
  LogNames,
  type LogKind,
  type LogLine,
  type LogName,
  type LogSource,
} from '@lintel/commands';
import { scrubLine, scrubText, scrubValue } from './scrub';

export interface LogSettings {
  /** the folder (LINTEL_LOG_DIR); none: `logs` in the data folder */
  dir?: string;
  /** bytes of one file before it is rotated (LINTEL_LOG_MAX_BYTES, default 10 MiB) */
  maxBytes: number;
  /** files kept per log, the current one included (LINTEL_LOG_FILES, default 5) */
  files: number;
}

export const defaultLogSettings: LogSettings = { maxBytes: 10 * 1024 * 1024, files: 5 };

/** What each log is: the instance's own log and the SIP server's output are system logs, the rest event logs. */
export const LogKinds: Record<LogName, LogKind> = {
  server: 'system',
  sip: 'system',
  jobs: 'event',
  events: 'event',
};

/** A line longer than this is cut (a log is read a page at a time). */
const MAX_LINE = 16 * 1024;
const CHUNK = 64 * 1024;
/** A page stops after scanning this much, matching lines or not (a filter that matches nothing stays cheap). */
const SCAN_BOUND = 8 * 1024 * 1024;

const LEVELS: Record<number, string> = {
  10: 'trace',
  20: 'debug',
  30: 'info',
  40: 'warn',
  50: 'error',
  60: 'fatal',
};
const levelNumber = (name: string) => 10 * (LogLevels.indexOf(name as never) + 1);

interface Open {
  fd: number;
  size: number;
}

export interface ReadOptions {
  /** a cursor a previous page gave: lines before it */
  before?: string;
  limit: number;
  /** the least level shown (lines of no level, the SIP server's, are always shown) */
  level?: (typeof LogLevels)[number];
  /** text the line contains (case-insensitive) */
  contains?: string;
}

export class LogFiles {
  readonly dir: string;
  private readonly temporary: boolean;
  private readonly open = new Map<LogName, Open>();
  private closed = false;

  constructor(
    dataDir: string,
    readonly settings: LogSettings,
    private readonly sipManaged: boolean,
  ) {
    this.temporary = !settings.dir && dataDir.startsWith('memory://');
    this.dir =
      settings.dir ??
      (this.temporary ? fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-logs-')) : path.join(dataDir, 'logs'));
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
  }

  /** The file of rotation `n` (0: the one written now). */
  file(name: LogName, n = 0): string {
    return path.join(this.dir, n === 0 ? `${name}.log` : `${name}.${n}.log`);
  }

  /**
   * Appends one line (scrubbed, cut to MAX_LINE), rotating first when it would not fit. A pino line with
   * `file_msg` has that as its message here, in place of one meant for the operator's console only (a kept
   * mail's text).
   */
  write(name: LogName, line: string): void {
    if (this.closed) return;
    let text = scrubLine(consoleOnly(line.replace(/\n+$/, '')));
    if (text.length > MAX_LINE) text = `${text.slice(0, MAX_LINE)}…`;
    const buf = Buffer.from(`${text}\n`);
    try {
      let o = this.handle(name);
      if (o.size > 0 && o.size + buf.length > this.settings.maxBytes) {
        this.rotate(name);
        o = this.handle(name);
      }
      fs.writeSync(o.fd, buf);
      o.size += buf.length;
    } catch {
      // a log that cannot be written (disk full, folder removed) does not stop the server; stdout still has it
    }
  }

  /** A destination for pino: each write is one line. */
  destination(name: LogName): pino.DestinationStream {
    return { write: (s: string) => this.write(name, s) };
  }

  /** A logger writing to one log only (the event logs), with the server's level and scrubbing. */
  logger(name: LogName, level: string): pino.Logger {
    return pino(
      {
        level,
        base: undefined,
        formatters: { log: (o) => scrubValue(o) as Record<string, unknown> },
        hooks: {
          logMethod(args, method) {
            method.apply(this, args.map((a) => (typeof a === 'string' ? scrubText(a) : a)) as typeof args);
          },
        },
      },
      this.destination(name),
    );
  }

  private handle(name: LogName): Open {
    let o = this.open.get(name);
    if (!o) {
      const fd = fs.openSync(this.file(name), 'a', 0o600);
      o = { fd, size: fs.fstatSync(fd).size };
      this.open.set(name, o);
    }
    return o;
  }

  private rotate(name: LogName): void {
    const o = this.open.get(name);
    if (o) fs.closeSync(o.fd);
    this.open.delete(name);
    const last = this.settings.files - 1;
    if (last < 1) {
      fs.rmSync(this.file(name), { force: true });
      return;
    }
    fs.rmSync(this.file(name, last), { force: true });
    for (let n = last - 1; n >= 0; n--)
      if (fs.existsSync(this.file(name, n))) fs.renameSync(this.file(name, n), this.file(name, n + 1));
  }

  /** The files of a log that exist, newest first. */
  private files(name: LogName): Array<{ path: string; n: number; size: number; mtime: Date }> {
    const out = [];
    for (let n = 0; n < this.settings.files; n++) {
      try {
        const st = fs.statSync(this.file(name, n));
        out.push({ path: this.file(name, n), n, size: st.size, mtime: st.mtime });
      } catch {
        // no such rotation
      }
    }
    return out;
  }

  /** The logs this instance keeps: the SIP server's only when this instance runs it. */
  names(): LogName[] {
    return LogNames.filter((n) => n !== 'sip' || this.sipManaged || fs.existsSync(this.file(n)));
  }

  sources(): LogSource[] {
    return this.names().map((name) => {
      const files = this.files(name);
      return {
        name,
        kind: LogKinds[name],
        size_bytes: files.reduce((s, f) => s + f.size, 0),
        files: files.length,
        modified_at: files[0]?.mtime.toISOString() ?? null,
      };
    });
  }

  /**
   * A page of a log, newest last: the `limit` lines before the cursor (the end when none) that pass the
   * filters, and the cursor of the lines before them (null at the oldest line). The cursor is
   * `<rotation>:<byte offset>`: a rotation between two pages shifts it by one file (a page may repeat).
   */
  read(name: LogName, opts: ReadOptions): { lines: LogLine[]; before: string | null } {
    let [n, offset] = parseCursor(opts.before) ?? [0, Infinity];
    const min = opts.level ? levelNumber(opts.level) : 0;
    const needle = opts.contains?.toLowerCase();
    const lines: LogLine[] = [];
    let scanned = 0;
    while (n < this.settings.files) {
      const file = this.file(name, n);
      let fd: number;
      try {
        fd = fs.openSync(file, 'r');
      } catch {
        return { lines: lines.reverse(), before: null };
      }
      try {
        const end = Math.min(offset, fs.fstatSync(fd).size);
        for (const { text, start } of backward(fd, end)) {
          scanned += text.length + 1;
          offset = start;
          const line = parseLine(text);
          if (line && passes(line, min, needle)) lines.push(line);
          if (lines.length >= opts.limit || scanned >= SCAN_BOUND)
            return { lines: lines.reverse(), before: start > 0 ? `${n}:${start}` : this.next(name, n) };
        }
      } finally {
        fs.closeSync(fd);
      }
      n += 1;
      offset = Infinity;
    }
    return { lines: lines.reverse(), before: null };
  }

  /** The cursor of the file after rotation `n`, if it exists. */
  private next(name: LogName, n: number): string | null {
    return n + 1 < this.settings.files && fs.existsSync(this.file(name, n + 1)) ? `${n + 1}:end` : null;
  }

  /** Empties a log: its current file truncated, its older ones removed. Answers the bytes there were. */
  clear(name: LogName): number {
    let bytes = 0;
    for (const f of this.files(name)) {
      bytes += f.size;
      if (f.n === 0) {
        const o = this.open.get(name);
        if (o) {
          fs.ftruncateSync(o.fd, 0);
          o.size = 0;
        } else fs.truncateSync(f.path, 0);
      } else fs.rmSync(f.path, { force: true });
    }
    return bytes;
  }

  /** The whole log, oldest line first, as text read file by file (never held whole), scrubbed again. */
  download(name: LogName): Readable {
    const files = this.files(name).reverse();
    // the sizes now: a line written while it is read is left for the next download
    return Readable.from(
      (async function* () {
        for (const f of files) {
          if (f.size === 0) continue;
          let carry = '';
          const stream = fs.createReadStream(f.path, { end: f.size - 1, encoding: 'utf8' });
          try {
            for await (const chunk of stream as AsyncIterable<string>) {
              const parts = (carry + chunk).split('\n');
              carry = parts.pop() ?? '';
              if (parts.length) yield parts.map((l) => `${scrubLine(l)}\n`).join('');
            }
          } catch (err) {
            // rotated away while it was read: its lines are in the next file's name now
            if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
          }
          if (carry) yield `${scrubLine(carry)}\n`;
        }
      })(),
    );
  }

  close(): void {
    this.closed = true;
    for (const o of this.open.values()) fs.closeSync(o.fd);
    this.open.clear();
    if (this.temporary) fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

function consoleOnly(line: string): string {
  if (!line.startsWith('{') || !line.includes('"file_msg"')) return line;
  try {
    const { file_msg: msg, ...rest } = JSON.parse(line) as Record<string, unknown>;
    return typeof msg === 'string' ? JSON.stringify({ ...rest, msg }) : line;
  } catch {
    return line;
  }
}

function parseCursor(c: string | undefined): [number, number] | null {
  const m = c ? /^(\d{1,3}):(\d{1,15}|end)$/.exec(c) : null;
  return m ? [Number(m[1]), m[2] === 'end' ? Infinity : Number(m[2])] : null;
}

export const isCursor = (c: string) => parseCursor(c) !== null;

/** The lines of a file ending before byte `end`, last first, each with the offset it starts at. */
function* backward(fd: number, end: number): Generator<{ text: string; start: number }> {
  let pos = end;
  let carry = Buffer.alloc(0);
  while (pos > 0) {
    const n = Math.min(CHUNK, pos);
    pos -= n;
    const buf = Buffer.alloc(n);
    fs.readSync(fd, buf, 0, n, pos);
    const data = Buffer.concat([buf, carry]);
    let stop = data.length;
    for (let j = data.length - 1; j >= 0; j--) {
      if (data[j] !== 0x0a) continue;
      if (j + 1 < stop) yield { text: data.subarray(j + 1, stop).toString('utf8'), start: pos + j + 1 };
      stop = j;
    }
    carry = data.subarray(0, stop);
  }
  if (carry.length) yield { text: carry.toString('utf8'), start: 0 };
}

/** A line as served: its time, level and message read from a pino line, the whole line scrubbed. */
function parseLine(raw: string): LogLine | null {
  if (!raw.trim()) return null;
  const text = scrubLine(raw);
  if (text.startsWith('{')) {
    try {
      const o = JSON.parse(text) as Record<string, unknown>;
      const { time, level, msg, pid: _pid, hostname: _host, ...fields } = o;
      return {
        at: typeof time === 'number' ? new Date(time).toISOString() : typeof time === 'string' ? time : null,
        level:
          typeof level === 'number'
            ? (LEVELS[level] ?? String(level))
            : typeof level === 'string'
              ? level
              : null,
        message: typeof msg === 'string' ? msg : '',
        fields,
        text,
      };
    } catch {
      // text after all
    }
  }
  return { at: null, level: null, message: text, fields: {}, text };
}

function passes(line: LogLine, min: number, needle: string | undefined): boolean {
  if (min && line.level && levelNumber(line.level) > 0 && levelNumber(line.level) < min) return false;
  return !needle || line.text.toLowerCase().includes(needle);
}
