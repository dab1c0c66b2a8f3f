import fs from 'node:fs';
import { secondsOfClock, type FieldError } from '@lintel/core';
import type { ZodType } from 'zod';
import { traitsOf } from '@lintel/commands';
import { objectShape, shapeOf, unwrap, type Shape } from './schema';

/** How a flag's text becomes a value. */
export type FlagKind = 'text' | 'number' | 'boolean' | 'choice' | 'list' | 'json' | 'file';

/** One flag (or positional argument) derived from a field of a command's argument schema. */
export interface FlagSpec {
  /** where the value goes in the arguments: `['profile', 'phone']` */
  path: string[];
  /** the long flag without its dashes: `profile.time-zone`, `send-registration-link` */
  name: string;
  kind: FlagKind;
  /** lists: what each item is */
  item?: 'text' | 'number' | 'choice';
  choices?: string[];
  /** must be given (here, or in --data) */
  required: boolean;
  /** `null` is accepted as a value */
  nullable: boolean;
  hasDefault: boolean;
  defaultValue?: unknown;
  /**
   * a secret (`.meta({secret: true})`, a password): asked at a terminal without echo when not given, or read
   * from stdin with `--<name>-stdin` — a flag's value stays in the shell's history and the process list
   */
  secret?: boolean;
  /** seconds after midnight: `09:00` is taken as well as 32400 */
  timeOfDay?: boolean;
}

/** Flags every generated command may have; an argument of the same name is given through --data only. */
export const RESERVED_FLAGS = new Set(['json', 'data', 'fields', 'where', 'all', 'help', 'version']);

/** Objects nested deeper than this are given as JSON. */
const MAX_DEPTH = 3;

const MIME: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  bmp: 'image/bmp',
  webp: 'image/webp',
  svg: 'image/svg+xml',
  pdf: 'application/pdf',
  zip: 'application/zip',
  json: 'application/json',
  csv: 'text/csv',
};
const mimeOf = (file: string) =>
  MIME[file.split('.').pop()?.toLowerCase() ?? ''] ?? 'application/octet-stream';

const flagPart = (s: string) => s.replace(/_/g, '-');

function specOf(
  path: string[],
  shape: Shape,
  u: { optional: boolean; nullable: boolean; hasDefault: boolean; defaultValue?: unknown },
  parentRequired: boolean,
): FlagSpec {
  const base = {
    path,
    name: path.map(flagPart).join('.'),
    required: parentRequired && !u.optional,
    nullable: u.nullable,
    hasDefault: u.hasDefault,
    defaultValue: u.defaultValue,
  };
  switch (shape.kind) {
    case 'list':
      return { ...base, kind: 'list', item: shape.item, choices: shape.choices };
    case 'choice':
      return { ...base, kind: 'choice', choices: shape.choices };
    case 'object':
      return { ...base, kind: 'json' };
    default:
      return { ...base, kind: shape.kind };
  }
}

function walk(
  shape: Record<string, ZodType>,
  prefix: string[],
  parentRequired: boolean,
  out: FlagSpec[],
): void {
  for (const [key, schema] of Object.entries(shape)) {
    const path = [...prefix, key];
    const u = unwrap(schema);
    const { shape: s, nullable } = shapeOf(schema);
    const flags = { ...u, nullable: u.nullable || nullable };
    // a nullable object cannot be spelled with dotted flags (which would be null?), so it is JSON
    if (s.kind === 'object' && !flags.nullable && path.length < MAX_DEPTH) {
      walk(s.shape, path, parentRequired && !u.optional, out);
    } else {
      const spec = specOf(path, s, flags, parentRequired);
      const traits = traitsOf(schema);
      if (spec.kind === 'text' && traits.secret) spec.secret = true;
      if (spec.kind === 'number' && traits.timeOfDay) spec.timeOfDay = true;
      out.push(spec);
    }
  }
}

/**
 * The flags of an argument schema: one per field, dotted for nested objects (`--profile.phone`), JSON for
 * what a flag cannot spell. `positional` names the fields that are path parameters (`<id>`); `skip` leaves
 * fields out (a list's `filters` and `match`, which `--where` writes).
 */
export function deriveFlags(
  args: ZodType,
  opts: { positional?: readonly string[]; skip?: readonly string[] } = {},
): { flags: FlagSpec[]; positionals: FlagSpec[] } {
  const shape = objectShape(args) ?? {};
  const all: FlagSpec[] = [];
  walk(shape, [], true, all);
  const positional = new Set(opts.positional ?? []);
  const skip = new Set(opts.skip ?? []);
  const positionals = [...positional].flatMap((name) =>
    all.filter((f) => f.path.length === 1 && f.path[0] === name),
  );
  const flags = all.filter(
    (f) =>
      !positional.has(f.path[0]!) &&
      !skip.has(f.path[0]!) &&
      !RESERVED_FLAGS.has(f.path[0]!) &&
      !f.name.startsWith('no-'),
  );
  return { flags, positionals };
}

// ----- from text to values -----------------------------------------------------------------------------

const BOOLEAN_WORDS: Record<string, boolean> = {
  true: true,
  yes: true,
  on: true,
  '1': true,
  false: false,
  no: false,
  off: false,
  '0': false,
};

export type Parsed = { ok: true; value: unknown } | { ok: false; problem: FieldError };

const problem = (spec: FlagSpec, rule: string, params?: Record<string, unknown>): Parsed => ({
  ok: false,
  problem: { field: spec.path.join('.'), rule, ...(params ? { params } : {}) },
});

function parseNumber(text: string): number | null {
  const t = text.trim();
  if (!t || !/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(t)) return null;
  const n = Number(t);
  return Number.isFinite(n) ? n : null;
}

function parseOne(spec: FlagSpec, kind: 'text' | 'number' | 'choice', text: string): Parsed {
  if (kind === 'number') {
    const n = (spec.timeOfDay ? secondsOfClock(text) : null) ?? parseNumber(text);
    return n === null ? problem(spec, 'invalid_type', { expected: 'number' }) : { ok: true, value: n };
  }
  if (kind === 'choice') {
    return spec.choices?.includes(text)
      ? { ok: true, value: text }
      : problem(spec, 'one_of', { values: spec.choices ?? [] });
  }
  return { ok: true, value: text };
}

/**
 * Reads what commander collected for one flag: a string, `true`/`false` for booleans (`--x`, `--no-x`), or
 * the repeated strings of a list. `null` is null where the field allows it.
 */
export function parseFlag(spec: FlagSpec, raw: unknown): Parsed {
  if (typeof raw === 'string' && raw === 'null' && spec.nullable && spec.kind !== 'list')
    return { ok: true, value: null };
  switch (spec.kind) {
    case 'boolean': {
      if (typeof raw === 'boolean') return { ok: true, value: raw };
      const b = BOOLEAN_WORDS[String(raw).trim().toLowerCase()];
      return b === undefined
        ? problem(spec, 'invalid_type', { expected: 'boolean' })
        : { ok: true, value: b };
    }
    case 'list': {
      const items = (Array.isArray(raw) ? raw : [raw])
        .flatMap((r) => String(r).split(','))
        .map((s) => s.trim())
        .filter(Boolean);
      const values: unknown[] = [];
      for (const item of items) {
        const one = parseOne(spec, spec.item ?? 'text', item);
        if (!one.ok) return one;
        values.push(one.value);
      }
      return { ok: true, value: values };
    }
    case 'json':
      try {
        return { ok: true, value: JSON.parse(String(raw)) };
      } catch {
        return problem(spec, 'invalid_format');
      }
    case 'file': {
      const file = String(raw).replace(/^@/, '');
      try {
        return { ok: true, value: new Blob([new Uint8Array(fs.readFileSync(file))], { type: mimeOf(file) }) };
      } catch {
        return problem(spec, 'file_required');
      }
    }
    default:
      return parseOne(spec, spec.kind, String(raw));
  }
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Sets `value` at `path`, making the objects on the way (over anything that is not one). */
export function setPath(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let cur = target;
  path.slice(0, -1).forEach((key) => {
    if (!isPlainObject(cur[key])) cur[key] = {};
    cur = cur[key] as Record<string, unknown>;
  });
  cur[path[path.length - 1]!] = value;
}

/** A deep copy of plain JSON data (what --data gives), so flags can be set over it. */
export const cloneJson = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;
