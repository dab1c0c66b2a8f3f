import {
  checkFilters,
  formatWhere,
  parseWhere,
  RulesByKind,
  WhereSyntaxError,
  type FieldKind,
  type Filter,
  type FilterableField,
  type FilterRule,
  type ListQuery,
} from '@lintel/core';
import type { LiveRule, ResourceField } from '@lintel/commands';

/**
 * What the table asks the server for, apart from paging: the filter chips, how they join, the free-text
 * search and the sort. It reads and writes the one filter language of `@lintel/core`, so the chips and the
 * CLI's `--where` are the same text.
 */
export type Match = 'all' | 'any';

export interface TableQuery {
  search: string;
  filters: Filter[];
  match: Match;
  /** `name` ascending, `-name` descending, null for the server's order (by id) */
  sort: string | null;
}

export const emptyQuery: TableQuery = { search: '', filters: [], match: 'all', sort: null };

/** The most filters a list call takes (ListQuery). */
export const MAX_FILTERS = 20;

/** What a table needs of a family: its noun and its fields (a `defineResource` result is one). */
export interface TableResource {
  noun: string;
  fields: Record<string, ResourceField>;
  filterable?: Record<string, FilterableField>;
  sortable?: readonly string[];
  /** fields holding ids of another family (`defineResource({refs})`): filtered with that family's picker */
  refs?: Readonly<Record<string, { family: string }>>;
  /** the live states of its rows (`defineResource({live})`): events that patch a row on screen */
  live?: readonly LiveRule[];
}

/**
 * The family behind each filterable reference field: a filter on it is chosen in a picker and its chip
 * reads the name, not the id (issue 13 point 5).
 */
export function refFamilies(resource: TableResource): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, f] of Object.entries(filterableFields(resource))) {
    if (f.kind !== 'ref' && f.kind !== 'refs') continue;
    const ref = resource.refs?.[name];
    if (ref) out[name] = ref.family;
  }
  return out;
}

export function filterableFields(resource: TableResource): Record<string, FilterableField> {
  if (resource.filterable) return resource.filterable;
  return Object.fromEntries(
    Object.entries(resource.fields)
      .filter(([, f]) => f.filterable)
      .map(([name, f]) => [name, { kind: f.kind, values: f.values }]),
  );
}

export function sortableFields(resource: TableResource): readonly string[] {
  return resource.sortable ?? Object.keys(resource.fields).filter((name) => resource.fields[name]!.sortable);
}

/** The list command's arguments for one page. Empty parts are left out, as the CLI leaves them out. */
export function buildListQuery(q: TableQuery, page: number, limit: number): ListQuery {
  const out: ListQuery = { page, limit };
  if (q.sort) out.sort = q.sort;
  const search = q.search.trim();
  if (search) out.search = search;
  if (q.filters.length) {
    out.filters = q.filters.map((f) => ({ ...f }));
    out.match = q.match;
  }
  return out;
}

/** Two queries with the same key ask for the same rows. */
export function queryKey(q: TableQuery): string {
  return JSON.stringify([
    q.sort,
    q.search.trim(),
    q.filters.map((f) => [f.field, f.rule, f.value]),
    q.filters.length > 1 ? q.match : 'all',
  ]);
}

/** Header clicks cycle a field through ascending, descending and the server's order. */
export function nextSort(current: string | null, field: string): string | null {
  if (current === field) return `-${field}`;
  if (current === `-${field}`) return null;
  return field;
}

export function sortOf(sort: string | null): { field: string; desc: boolean } | null {
  if (!sort) return null;
  return sort.startsWith('-') ? { field: sort.slice(1), desc: true } : { field: sort, desc: false };
}

export function rulesFor(kind: FieldKind): readonly FilterRule[] {
  return RulesByKind[kind];
}

/**
 * A typed value for a field of this kind from what a person typed (or what parseWhere read): numbers for
 * number, ref and refs fields, booleans for boolean fields, strings otherwise. `undefined` when the text
 * cannot be such a value.
 */
export function coerceValue(kind: FieldKind, raw: Filter['value']): Filter['value'] | undefined {
  switch (kind) {
    case 'number':
    case 'ref':
    case 'refs': {
      if (raw === null) return kind === 'ref' ? null : undefined;
      if (typeof raw === 'number') return Number.isFinite(raw) ? raw : undefined;
      const s = String(raw).trim();
      if (!/^-?\d+(\.\d+)?$/.test(s)) return undefined;
      return Number(s);
    }
    case 'boolean':
      if (typeof raw === 'boolean') return raw;
      if (raw === 'true') return true;
      if (raw === 'false') return false;
      return undefined;
    case 'date': {
      if (raw === null || typeof raw === 'boolean') return undefined;
      const s = String(raw).trim();
      return s && !Number.isNaN(Date.parse(s)) ? s : undefined;
    }
    case 'enum':
      return raw === null || typeof raw === 'boolean' ? undefined : String(raw);
    case 'text':
      return raw === null ? undefined : String(raw);
  }
}

export type FilterProblem =
  | { kind: 'syntax'; at: string }
  | { kind: 'field'; field: string }
  | { kind: 'rule'; field: string; rule: string; rules: readonly string[] }
  | { kind: 'value'; field: string; value: string }
  | { kind: 'too_many'; max: number };

/** Makes a filter of the right types for its field, or says what is wrong with it. */
export function normaliseFilter(
  f: Filter,
  fields: Readonly<Record<string, FilterableField>>,
): { filter: Filter } | { problem: FilterProblem } {
  const def = Object.hasOwn(fields, f.field) ? fields[f.field] : undefined;
  if (!def) return { problem: { kind: 'field', field: f.field } };
  const rules = RulesByKind[def.kind];
  if (!rules.includes(f.rule)) return { problem: { kind: 'rule', field: f.field, rule: f.rule, rules } };
  const value = coerceValue(def.kind, f.value);
  const filter: Filter = { field: f.field, rule: f.rule, value: value === undefined ? f.value : value };
  if (value === undefined || checkFilters([filter], fields).length)
    return { problem: { kind: 'value', field: f.field, value: String(f.value) } };
  return { filter };
}

/** The chips as the CLI's `--where` text. */
export function filtersToWhere(filters: readonly Filter[], match: Match): string {
  return formatWhere(filters, match);
}

/** Reads `--where` text into chips, checked against the family's filterable fields. */
export function whereToFilters(
  text: string,
  fields: Readonly<Record<string, FilterableField>>,
): { filters: Filter[]; match: Match } | { problem: FilterProblem } {
  if (!text.trim()) return { filters: [], match: 'all' };
  let parsed: { filters: Filter[]; match: Match };
  try {
    parsed = parseWhere(text);
  } catch (err) {
    if (err instanceof WhereSyntaxError) return { problem: { kind: 'syntax', at: err.at } };
    throw err;
  }
  if (parsed.filters.length > MAX_FILTERS) return { problem: { kind: 'too_many', max: MAX_FILTERS } };
  const filters: Filter[] = [];
  for (const f of parsed.filters) {
    const r = normaliseFilter(f, fields);
    if ('problem' in r) return r;
    filters.push(r.filter);
  }
  return { filters, match: parsed.match };
}
