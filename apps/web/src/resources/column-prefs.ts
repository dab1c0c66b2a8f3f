import type { FieldKind } from '@lintel/core';

/**
 * The columns a person chose and the widths they dragged, remembered per table in this browser
 * (localStorage `lintel.table.<storageKey>`). Unknown columns from an older version are dropped on read.
 */
export interface ColumnPrefs {
  /** visible columns in order; null: the family's default columns */
  columns: string[] | null;
  /** px, by column id */
  widths: Record<string, number>;
}

export interface ColumnInfo {
  id: string;
  kind?: FieldKind;
  default?: boolean;
  wide?: boolean;
  width?: number;
}

export const MIN_WIDTH = 48;
export const MAX_WIDTH = 1200;
const VERSION = 1;

export const storageKeyFor = (key: string) => `lintel.table.${key}`;

/** A width for a column nobody resized: by what it holds. */
export function defaultWidth(col: ColumnInfo): number {
  if (col.width) return col.width;
  if (col.id === 'id') return 84;
  if (col.wide) return 280;
  switch (col.kind) {
    case 'number':
      return 96;
    case 'boolean':
      return 112;
    case 'date':
      return 168;
    case 'enum':
      return 128;
    case 'ref':
      return 160;
    case 'refs':
      return 220;
    default:
      return 200;
  }
}

const clampWidth = (w: number) => Math.round(Math.min(MAX_WIDTH, Math.max(MIN_WIDTH, w)));

export function loadPrefs(
  storage: Pick<Storage, 'getItem'> | null,
  key: string | undefined,
  known: readonly string[],
): ColumnPrefs {
  const empty: ColumnPrefs = { columns: null, widths: {} };
  if (!storage || !key) return empty;
  let raw: string | null;
  try {
    raw = storage.getItem(storageKeyFor(key));
  } catch {
    return empty;
  }
  if (!raw) return empty;
  try {
    const v = JSON.parse(raw) as { v?: unknown; columns?: unknown; widths?: unknown };
    if (!v || typeof v !== 'object' || v.v !== VERSION) return empty;
    const ids = new Set(known);
    const columns = Array.isArray(v.columns)
      ? [...new Set(v.columns.filter((c): c is string => typeof c === 'string' && ids.has(c)))]
      : null;
    const widths: Record<string, number> = {};
    if (v.widths && typeof v.widths === 'object')
      for (const [id, w] of Object.entries(v.widths as Record<string, unknown>))
        if (ids.has(id) && typeof w === 'number' && Number.isFinite(w)) widths[id] = clampWidth(w);
    return { columns: columns && columns.length ? columns : null, widths };
  } catch {
    console.warn(`lintel: ignoring unparsable ${storageKeyFor(key)}`);
    return empty;
  }
}

export function savePrefs(
  storage: Pick<Storage, 'setItem' | 'removeItem'> | null,
  key: string | undefined,
  prefs: ColumnPrefs,
): void {
  if (!storage || !key) return;
  try {
    if (prefs.columns === null && Object.keys(prefs.widths).length === 0)
      storage.removeItem(storageKeyFor(key));
    else
      storage.setItem(
        storageKeyFor(key),
        JSON.stringify({ v: VERSION, columns: prefs.columns, widths: prefs.widths }),
      );
  } catch {
    // storage full or blocked: the choice lasts for this page only
  }
}

/** The visible columns in the family's order: the chosen ones, else the defaults (else the first four). */
export function visibleColumns(prefs: ColumnPrefs, all: readonly ColumnInfo[]): string[] {
  if (prefs.columns) {
    const chosen = new Set(prefs.columns);
    const out = all.filter((c) => chosen.has(c.id)).map((c) => c.id);
    if (out.length) return out;
  }
  const defaults = all.filter((c) => c.default).map((c) => c.id);
  return defaults.length ? defaults : all.slice(0, 4).map((c) => c.id);
}

/** Shows or hides one column; the last visible column stays. Choosing exactly the defaults forgets the choice. */
export function toggleColumn(prefs: ColumnPrefs, all: readonly ColumnInfo[], id: string): ColumnPrefs {
  const current = visibleColumns(prefs, all);
  const next = current.includes(id) ? current.filter((c) => c !== id) : [...current, id];
  if (!next.length) return prefs;
  const ordered = all.filter((c) => next.includes(c.id)).map((c) => c.id);
  const defaults = visibleColumns({ columns: null, widths: {} }, all);
  const same = ordered.length === defaults.length && ordered.every((c, i) => c === defaults[i]);
  return { ...prefs, columns: same ? null : ordered };
}

export function setWidths(prefs: ColumnPrefs, widths: Record<string, number>): ColumnPrefs {
  const clean: Record<string, number> = {};
  for (const [id, w] of Object.entries(widths)) if (Number.isFinite(w)) clean[id] = clampWidth(w);
  return { ...prefs, widths: clean };
}

/** The narrowest a column nobody resized is squeezed to when the table is too wide for the screen. */
export const minFitWidth = (natural: number) => Math.max(MIN_WIDTH, Math.min(natural, 72));

/**
 * Widths that fit `available` pixels where they can (issue 13 point 11): a table wider than its box
 * squeezes the columns nobody resized, in proportion to the room each can give, so that no column is off
 * screen while another has room to spare; a column the person dragged keeps its width. When even the
 * narrowest widths do not fit, the table scrolls sideways as before.
 */
export function fitWidths(
  cols: readonly { natural: number; resized: boolean }[],
  available: number,
): number[] {
  const natural = cols.map((c) => c.natural);
  const total = natural.reduce((a, b) => a + b, 0);
  if (!(available > 0) || total <= available) return natural;
  const room = cols.map((c) => (c.resized ? 0 : c.natural - minFitWidth(c.natural)));
  const give = room.reduce((a, b) => a + b, 0);
  if (give <= 0) return natural;
  const cut = Math.min(total - available, give);
  // whole pixels: what rounding leaves over is taken from the first columns with room
  const widths = natural.map((w, i) => w - Math.floor((cut * room[i]!) / give));
  let left = total - widths.reduce((a, b) => a + b, 0) - cut;
  for (let i = 0; left < 0 && i < widths.length; i++)
    if (widths[i]! > (cols[i]!.resized ? natural[i]! : minFitWidth(natural[i]!))) {
      widths[i]! -= 1;
      left += 1;
    }
  return widths;
}
