import type { ZodType } from 'zod';
import type { AnyResource } from '@lintel/commands';
import { defOf, isRef, objectShape, shapeOf, unwrap } from './schema';

/**
 * How a command's result holds records: `list` ({data: [...], meta}), `rows` ({data: [...]}), `saved`
 * ({data: record}, what create and update answer) or `record` (the record itself, what get answers).
 */
export interface RowsInfo {
  mode: 'list' | 'rows' | 'saved' | 'record';
  /** the record's fields, in schema order */
  keys: string[];
  /** fields whose value is an object or array of objects that is not a reference (no name) */
  nested: Set<string>;
}

function keysOf(shape: Record<string, ZodType>): Pick<RowsInfo, 'keys' | 'nested'> {
  const nested = new Set<string>();
  for (const [key, schema] of Object.entries(shape)) {
    const { shape: s } = shapeOf(schema);
    if (s.kind === 'json' || s.kind === 'object') {
      // refs ({id, name}) and lists of refs read fine as names; other objects do not make a column
      const u = unwrap(schema);
      const inner =
        u.def.type === 'array' && u.def.element ? objectShape(u.def.element) : objectShape(schema);
      if (!inner || !('name' in inner && 'id' in inner)) nested.add(key);
    }
  }
  return { keys: Object.keys(shape), nested };
}

/** Reads the result schema of a command for its records, or null when it has none (ok, counts, reports). */
export function rowsOf(result: ZodType): RowsInfo | null {
  const shape = objectShape(result);
  if (!shape) return null;
  const data = shape.data;
  if (data) {
    const u = unwrap(data);
    if (u.def.type === 'array' && u.def.element) {
      const item = objectShape(u.def.element);
      if (item) return { mode: 'meta' in shape ? 'list' : 'rows', ...keysOf(item) };
      return null;
    }
    const record = objectShape(data);
    if (record && Object.keys(shape).length === 1) return { mode: 'saved', ...keysOf(record) };
    return null;
  }
  if ('id' in shape) return { mode: 'record', ...keysOf(shape) };
  return null;
}

/** The columns a list shows when `--fields` is not given: the family's default fields, else every simple field. */
export function defaultColumns(info: RowsInfo, resource?: AnyResource): string[] {
  const defaults = resource
    ? Object.entries(resource.fields)
        .filter(([, f]) => f.default)
        .map(([key]) => key)
    : [];
  const own = defaults.filter((key) => info.keys.includes(key));
  // the family's columns when these are its rows (another verb's rows, e.g. a device's tasks, have their own)
  return own.length && own.length === defaults.length
    ? own
    : info.keys.filter((k) => !info.nested.has(k) && k !== 'children');
}

type Row = Record<string, unknown>;

export const pick = (row: Row, fields: readonly string[]): Row =>
  Object.fromEntries(fields.filter((f) => Object.hasOwn(row, f)).map((f) => [f, row[f]]));

/**
 * What `--json --fields a,b` prints: the reply in the shape it has without `--fields` (`{data, meta}` for a
 * list), its rows (or record) with those keys only.
 */
export function projectJson(value: unknown, info: RowsInfo, fields: readonly string[]): unknown {
  const v = value as Row;
  if (info.mode === 'list' || info.mode === 'rows')
    return { ...v, data: (v.data as Row[]).map((row) => pick(row, fields)) };
  if (info.mode === 'saved') return { ...v, data: pick(v.data as Row, fields) };
  return pick(v, fields);
}

// ----- cells -----------------------------------------------------------------------------------------------

export interface Look {
  /** a person at a terminal (table, local dates, yes/no), or a pipe (tab-separated, raw values) */
  tty: boolean;
  /** terminal width, for tables */
  width: number;
  /** column title of a field */
  label(key: string): string;
  yes: string;
  no: string;
  /** ANSI colours in tables (a terminal without NO_COLOR, not TERM=dumb) */
  color?: boolean;
}

/** How a cell is coloured for a person: yes green, no dim, nothing dim; the header bold. */
type Paint = (s: string) => string;
const sgr =
  (on: number, off: number): Paint =>
  (s) =>
    `\u001b[${on}m${s}\u001b[${off}m`;
export const paint = { green: sgr(32, 39), dim: sgr(2, 22), bold: sgr(1, 22) };

function paintOf(v: unknown): Paint | undefined {
  if (v === true) return paint.green;
  if (v === false || v === null || v === undefined || (Array.isArray(v) && !v.length)) return paint.dim;
  return undefined;
}

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;

function localTime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** An object that is not a reference, in one line: `{users: 2}` → `users: 2`. */
function compact(v: unknown, look: Look): string {
  if (Array.isArray(v)) return `[${v.map((x) => compact(x, look)).join(', ')}]`;
  if (v && typeof v === 'object')
    return `{${Object.entries(v)
      .map(([k, x]) => `${k}: ${compact(x, look)}`)
      .join(', ')}}`;
  return cell(v, look);
}

/** One value as text: references by name, lists joined, nothing for null. */
export function cell(v: unknown, look: Look): string {
  let s: string;
  if (v === null || v === undefined) s = '';
  else if (typeof v === 'boolean') s = look.tty ? (v ? look.yes : look.no) : String(v);
  else if (typeof v === 'string') s = look.tty && ISO_TIME.test(v) ? localTime(v) : v;
  else if (typeof v === 'number') s = String(v);
  else if (Array.isArray(v))
    s = v
      .map((x) => (isRef(x) ? x.name : x && typeof x === 'object' ? compact(x, look) : cell(x, look)))
      .join(', ');
  else if (isRef(v)) s = v.name;
  else s = compact(v, look).slice(1, -1);
  // a pipe reads one line per row and one tab between cells
  return s.replace(/[\t\r\n]+/g, ' ');
}

// ----- tables ----------------------------------------------------------------------------------------------

const width = (s: string) => [...s].length;

function fit(s: string, w: number): string {
  const chars = [...s];
  if (chars.length <= w) return s + ' '.repeat(w - chars.length);
  return w <= 1 ? chars.slice(0, w).join('') : `${chars.slice(0, w - 1).join('')}…`;
}

/**
 * Aligned columns that fit `maxWidth`: the widest columns give way first, cut with `…`. `paints` colours
 * cells after they are fitted, so the escape codes never count in the widths.
 */
export function table(
  headers: readonly string[],
  rows: readonly string[][],
  maxWidth: number,
  paints?: { header?: Paint; cells?: ReadonlyArray<ReadonlyArray<Paint | undefined>> },
): string {
  const gap = 2;
  const widths = headers.map((h, i) => Math.max(width(h), ...rows.map((r) => width(r[i] ?? ''))));
  const floor = headers.map((h) => Math.min(Math.max(width(h), 4), 12));
  let total = widths.reduce((a, b) => a + b, 0) + gap * (headers.length - 1);
  while (total > maxWidth) {
    let widest = -1;
    widths.forEach((w, i) => {
      if (w > floor[i]! && (widest < 0 || w > widths[widest]!)) widest = i;
    });
    if (widest < 0) break;
    widths[widest]!--;
    total--;
  }
  const line = (cells: readonly string[], paintAt: (i: number) => Paint | undefined) => {
    const last = cells.length - 1;
    return cells
      .map((c, i) => {
        // the last cell is not padded: a line ends where its text does
        const text = i === last ? fit(c, widths[i]!).trimEnd() : fit(c, widths[i]!);
        const p = paintAt(i);
        if (!p) return text;
        const body = text.trimEnd();
        return body ? p(body) + text.slice(body.length) : text;
      })
      .join(' '.repeat(gap))
      .trimEnd();
  };
  return [
    line(headers, () => paints?.header),
    ...rows.map((r, ri) => line(r, (i) => paints?.cells?.[ri]?.[i])),
  ].join('\n');
}

/** Rows of a tree (`children` in each item) depth first, with their depth. */
function flatten(rows: readonly Row[], depth = 0): Array<{ row: Row; depth: number }> {
  return rows.flatMap((row) => [
    { row, depth },
    ...(Array.isArray(row.children) ? flatten(row.children as Row[], depth + 1) : []),
  ]);
}

/** A list: a table for a person, a header line and tab-separated rows for a pipe. */
export function renderRows(rows: readonly Row[], columns: readonly string[], look: Look): string {
  const flat = flatten(rows);
  const indentColumn = columns.includes('name') ? 'name' : columns[0];
  const cells = flat.map(({ row, depth }) =>
    columns.map(
      (c) => (look.tty && depth && c === indentColumn ? '  '.repeat(depth) : '') + cell(row[c], look),
    ),
  );
  if (!look.tty) return [columns.join('\t'), ...cells.map((r) => r.join('\t'))].join('\n');
  return table(
    columns.map((c) => look.label(c).toLocaleUpperCase()),
    cells,
    look.width,
    look.color
      ? { header: paint.bold, cells: flat.map(({ row }) => columns.map((c) => paintOf(row[c]))) }
      : undefined,
  );
}

/** Dotted keys for nested objects that are not references: `profile.phone`. */
function flattenRecord(record: Row, prefix = ''): Array<[string, unknown]> {
  return Object.entries(record).flatMap(([k, v]): Array<[string, unknown]> => {
    const key = prefix ? `${prefix}.${k}` : k;
    if (v && typeof v === 'object' && !Array.isArray(v) && !isRef(v) && Object.keys(v).length)
      return flattenRecord(v as Row, key);
    return [[key, v]];
  });
}

const isObjectList = (v: unknown): v is Row[] =>
  Array.isArray(v) &&
  v.length > 0 &&
  v.every((x) => x && typeof x === 'object' && !Array.isArray(x) && !isRef(x));

/**
 * One record (or any other result) as label and value lines; lists of objects that are not references get a
 * table of their own under their label when a person reads it.
 */
export function renderRecord(record: Row, look: Look, fields?: readonly string[]): string {
  const entries = flattenRecord(fields ? pick(record, fields) : record);
  if (!look.tty) return entries.map(([k, v]) => `${k}\t${cell(v, look)}`).join('\n');
  const simple = entries.filter(([, v]) => !isObjectList(v));
  const lists = entries.filter(([, v]) => isObjectList(v)) as Array<[string, Row[]]>;
  const labelled = simple.map(([k, v]) => [look.label(k), cell(v, look)] as const);
  const labelWidth = Math.max(0, ...labelled.map(([l]) => width(l)));
  const out = labelled.map(([l, v]) => `${l}${' '.repeat(labelWidth - width(l))}  ${v}`.trimEnd());
  for (const [k, rows] of lists) {
    const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
    out.push('', `${look.label(k)}:`, renderRows(rows, columns, look));
  }
  return out.join('\n');
}

/** Whether the schema is `{ok: true}`: a command that only says it was done. */
export function isOkOnly(result: ZodType): boolean {
  const shape = objectShape(result);
  if (!shape || Object.keys(shape).length !== 1 || !shape.ok) return false;
  return defOf(shape.ok).type === 'literal';
}

/**
 * A list's total for the "of N" note: exact as the server counted it, or "about 12,300" ("около 12 300")
 * when the server estimated it (`meta.total_is_estimate`, issue 14), to three significant digits.
 */
export function totalText(
  meta: { total: number; total_is_estimate?: boolean },
  language: string,
  about: (total: string) => string,
): string {
  const n = meta.total;
  if (!meta.total_is_estimate) return String(n);
  const step = n < 1000 ? 1 : 10 ** (Math.floor(Math.log10(n)) - 2);
  return about(new Intl.NumberFormat(language).format(Math.round(n / step) * step));
}
