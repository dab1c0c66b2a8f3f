import { sql, type Kysely, type RawBuilder } from 'kysely';
import {
  checkFilters,
  relationSetOf,
  type Filter,
  type FilterableField,
  type ParsedListQuery,
} from '@lintel/core';
import type { DB } from '../db/schema';
import { AppError } from '../errors';
import type { RequestCache } from './request-cache';

/**
 * How a list reads one field in SQL. `has` and `equals` are for many-valued fields (a user's groups,
 * markers): the set holds the id; the set is exactly the ids.
 */
export interface ColumnSql {
  expr?: RawBuilder<unknown>;
  has?: (value: number) => RawBuilder<boolean>;
  equals?: (ids: readonly number[]) => RawBuilder<boolean>;
  /** the joins (aliases of `ListSource.joins`) this field reads */
  joins?: readonly string[];
}

/** Everything the generic list needs from a family: where rows live and how fields read. */
export interface ListSource<T> {
  /** `from` clause; the main table is aliased `t` and has `id` */
  from: RawBuilder<unknown>;
  /** fields the family declared filterable, with their kinds */
  filterable: Readonly<Record<string, FilterableField>>;
  sortable: readonly string[];
  columns: Readonly<Record<string, ColumnSql>>;
  /** expressions that free-text search looks in */
  search: readonly RawBuilder<unknown>[];
  /**
   * When given, lists read `base` (the main table, `t`) plus only the joins the filters, search and sort
   * read (by alias, in this order), and never the whole of `from`: a count pays for no join it does not need.
   */
  base?: RawBuilder<unknown>;
  joins?: Readonly<Record<string, RawBuilder<unknown>>>;
  /** the joins free-text search reads */
  searchJoins?: readonly string[];
  /** records for ids, in the given order (inside a transaction, pass the transaction) */
  load(q: Kysely<DB>, ids: readonly number[]): Promise<T[]>;
  /**
   * The same records as NDJSON built by the database (optional): one text of their JSON lines, each ended by
   * a line break, in the given order. An NDJSON export writes it as it comes instead of loading, building
   * and stringifying each record.
   */
  loadLines?(q: Kysely<DB>, ids: readonly number[]): Promise<string>;
}

const MIN_DATE = Date.parse('0001-01-01T00:00:00Z');
const MAX_DATE = Date.parse('9999-12-31T23:59:59.999Z');

export const escapeLike = (v: string) => v.replace(/[\\%_]/g, (c) => `\\${c}`);

export function filterSql(f: Filter, def: FilterableField, col: ColumnSql): RawBuilder<boolean> {
  const v = f.value;
  if (def.kind === 'refs') return f.rule === 'equals' ? col.equals!(relationSetOf(v)!) : col.has!(Number(v));
  const e = col.expr!;
  switch (def.kind) {
    case 'text': {
      const s = String(v);
      if (f.rule === 'contains') return sql<boolean>`${e} ilike ${`%${escapeLike(s)}%`}`;
      if (f.rule === 'begins_with') return sql<boolean>`${e} ilike ${`${escapeLike(s)}%`}`;
      if (f.rule === 'equals') return sql<boolean>`lower(${e}) = lower(${s})`;
      return sql<boolean>`(${e} is null or lower(${e}) <> lower(${s}))`;
    }
    case 'number':
    case 'ref': {
      if (v === null)
        return f.rule === 'equals' ? sql<boolean>`${e} is null` : sql<boolean>`${e} is not null`;
      const n = Number(v);
      if (f.rule === 'above') return sql<boolean>`${e} > ${n}`;
      if (f.rule === 'below') return sql<boolean>`${e} < ${n}`;
      if (f.rule === 'equals') return sql<boolean>`${e} = ${n}`;
      return sql<boolean>`(${e} is null or ${e} <> ${n})`;
    }
    case 'date': {
      const d = new Date(String(v)).toISOString();
      if (f.rule === 'above') return sql<boolean>`${e} > ${d}::timestamptz`;
      if (f.rule === 'below') return sql<boolean>`${e} < ${d}::timestamptz`;
      if (f.rule === 'equals') return sql<boolean>`${e} = ${d}::timestamptz`;
      return sql<boolean>`${e} <> ${d}::timestamptz`;
    }
    case 'boolean': {
      const b = v === true || v === 'true';
      return f.rule === 'equals' ? sql<boolean>`${e} = ${b}` : sql<boolean>`${e} <> ${b}`;
    }
    case 'enum':
      return f.rule === 'equals' ? sql<boolean>`${e} = ${String(v)}` : sql<boolean>`${e} <> ${String(v)}`;
  }
}

/**
 * The sort key of a name (issue 13 point 8): every run of digits zero-padded to 20 places, so that
 * "Apartment 2" comes before "Apartment 10" as a person reads them. Plain SQL that PostgreSQL and PGlite both
 * run: PGlite accepts an ICU collation with numeric ordering (`und-u-kn-true`) but does not sort by it.
 */
export function naturalSortKey(expr: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`regexp_replace(regexp_replace(${expr}, '([0-9]+)', '00000000000000000000\\1', 'g'), '0*([0-9]{20})', '\\1', 'g')`;
}

/** Names sort naturally: a sortable text field called `name` or `<something>_name`. */
const isNameField = (field: string, filterable: ListSource<unknown>['filterable']) =>
  /(^|_)name$/.test(field) && filterable[field]?.kind === 'text';

/** What a list reply says about its size (`meta`): exact while small, else an estimate, marked. */
export interface ListMeta {
  total: number;
  total_is_estimate: boolean;
  page: number;
  limit: number;
}

export interface ListOptions {
  /** up to how many matching rows the total is counted exactly (a bounded count); above, it is estimated */
  exactCountUpTo?: number;
  /** where planner estimates are kept between requests (engine/request-cache.ts); none: asked every time */
  estimates?: RequestCache;
}

/** The default of `exactCountUpTo` (config `LINTEL_LIST_EXACT_COUNT`). */
export const EXACT_COUNT_UP_TO = 1_000;

/** The planner's estimate of the rows a statement returns (EXPLAIN without running it). */
async function plannerRows(db: Kysely<DB>, statement: RawBuilder<unknown>): Promise<number> {
  const r = await sql<Record<string, unknown>>`explain (format json) ${statement}`.execute(db);
  const cell = Object.values(r.rows[0] ?? {})[0];
  const plan = (typeof cell === 'string' ? JSON.parse(cell) : cell) as Array<{
    Plan?: { 'Plan Rows'?: number };
  }>;
  return Math.max(0, Math.round(Number(plan[0]?.Plan?.['Plan Rows'] ?? 0)));
}

/**
 * What a list reads, without its paging: the rows (the joins they need, the WHERE) and their order, as sort
 * keys most significant first (the last is `t.id`, so the order is total) in one direction. The list's page
 * and count, and the export (engine/export.ts), are all read from it, so they agree on every row.
 */
export interface ListPlan {
  /** the WHERE: the caller's scope, the filters, the search */
  where: RawBuilder<boolean>;
  /** the `from` of the count: only the joins the WHERE reads */
  countFrom: RawBuilder<unknown>;
  /** the `from` of the rows: the WHERE's joins and the sort's */
  pageFrom: RawBuilder<unknown>;
  keys: readonly RawBuilder<unknown>[];
  desc: boolean;
  /** `order by` of the keys */
  order: RawBuilder<unknown>;
}

/** `k1 dir, k2 dir, …` in PostgreSQL's default null order, so that a btree index can serve it. */
export const orderOf = (keys: readonly RawBuilder<unknown>[], desc: boolean): RawBuilder<unknown> =>
  sql.join(
    keys.map((k) => (desc ? sql`${k} desc` : sql`${k} asc`)),
    sql`, `,
  );

/**
 * Checks a list query against the family's declaration (field names and rules before any SQL is written;
 * values only ever travel as parameters) and plans it; bad input is `check_fields_data`.
 */
export function planList<T>(
  source: ListSource<T>,
  query: Pick<ParsedListQuery, 'filters' | 'match' | 'search' | 'sort'>,
  where: RawBuilder<boolean>,
): ListPlan {
  const filters = query.filters ?? [];
  const problems = checkFilters(filters, source.filterable);
  // JavaScript reads dates PostgreSQL cannot (years past 9999 or before 1): refuse them like any bad date
  filters.forEach((f, i) => {
    if (
      source.filterable[f.field]?.kind !== 'date' ||
      problems.some((p) => p.field.startsWith(`filters.${i}.`))
    )
      return;
    const t = Date.parse(String(f.value));
    if (!(t >= MIN_DATE && t <= MAX_DATE))
      problems.push({ field: `filters.${i}.value`, rule: 'invalid_type', params: { expected: 'date' } });
  });
  const sortField = query.sort?.replace(/^-/, '');
  if (sortField && !source.sortable.includes(sortField))
    problems.push({ field: 'sort', rule: 'one_of', params: { values: [...source.sortable] } });
  if (problems.length) throw new AppError('check_fields_data', { fields: problems });

  const conditions: RawBuilder<boolean>[] = [where];
  // the joins the WHERE reads; the sort's are added for the page only
  const whereJoins = new Set<string>();
  if (filters.length) {
    const parts = filters.map((f) => {
      for (const j of source.columns[f.field]!.joins ?? []) whereJoins.add(j);
      return filterSql(f, source.filterable[f.field]!, source.columns[f.field]!);
    });
    conditions.push(sql<boolean>`(${sql.join(parts, query.match === 'any' ? sql` or ` : sql` and `)})`);
  }
  const search = query.search?.trim();
  if (search && source.search.length) {
    for (const j of source.searchJoins ?? []) whereJoins.add(j);
    const pattern = `%${escapeLike(search)}%`;
    conditions.push(
      sql<boolean>`(${sql.join(
        source.search.map((e) => sql`${e} ilike ${pattern}`),
        sql` or `,
      )})`,
    );
  }
  const desc = Boolean(sortField && query.sort?.startsWith('-'));
  const sortExpr = sortField ? source.columns[sortField]!.expr! : null;
  const keys = !sortExpr
    ? [sql`t.id`]
    : isNameField(sortField!, source.filterable)
      ? [naturalSortKey(sortExpr), sortExpr, sql`t.id`]
      : [sortExpr, sql`t.id`];
  const fromWith = (needed: ReadonlySet<string>): RawBuilder<unknown> => {
    if (!source.base || !source.joins) return source.from;
    const joins = Object.entries(source.joins).filter(([alias]) => needed.has(alias));
    return joins.length
      ? sql`${source.base} ${sql.join(
          joins.map(([, j]) => j),
          sql` `,
        )}`
      : source.base;
  };
  return {
    where: sql.join(conditions, sql` and `) as RawBuilder<boolean>,
    countFrom: fromWith(whereJoins),
    pageFrom: fromWith(
      new Set([...whereJoins, ...(sortField ? (source.columns[sortField]!.joins ?? []) : [])]),
    ),
    keys,
    desc,
    order: orderOf(keys, desc),
  };
}

/**
 * Paging, sort, free text and the filter language over any family (`planList`).
 *
 * The total costs as little as it can (issue 14): the page is read with one row more than asked, so a page
 * that ends the list gives the exact total with no count at all; otherwise the planner's estimate decides:
 * at most `exactCountUpTo` rows are counted exactly by a count bounded to that many, more are the planner's
 * estimate, marked `total_is_estimate` and never below the rows the page has shown to exist.
 */
export async function runList<T>(
  db: Kysely<DB>,
  source: ListSource<T>,
  query: ParsedListQuery,
  where: RawBuilder<boolean>,
  options: ListOptions = {},
): Promise<{ data: T[]; meta: ListMeta }> {
  const exactUpTo = options.exactCountUpTo ?? EXACT_COUNT_UP_TO;
  const { where: whereSql, countFrom, pageFrom, order } = planList(source, query, where);
  const limit = query.limit;
  const offset = (query.page - 1) * limit;
  // one row more than the page: whether the list goes on past it
  const page = await sql<{
    id: number;
  }>`select t.id from ${pageFrom} where ${whereSql} order by ${order} limit ${limit + 1} offset ${offset}`.execute(
    db,
  );
  const more = page.rows.length > limit;
  const ids = page.rows.slice(0, limit).map((r) => r.id);
  const meta = (total: number, estimate: boolean): ListMeta => ({
    total,
    total_is_estimate: estimate,
    page: query.page,
    limit,
  });
  // the page ends the list: the total is known
  if (!more && (ids.length > 0 || offset === 0))
    return { data: await source.load(db, ids), meta: meta(offset + ids.length, false) };
  // at least this many rows exist (the page and the one past it); an empty page past the end: at most `offset`
  const atLeast = more ? offset + limit + 1 : 0;
  const atMost = more ? Infinity : offset;
  const clamp = (n: number) => Math.min(atMost, Math.max(atLeast, n));
  const matching = sql`select 1 from ${countFrom} where ${whereSql}`;
  const total = async (): Promise<ListMeta> => {
    const compiled = matching.compile(db);
    const key = `${compiled.sql}\u0000${JSON.stringify(compiled.parameters)}`;
    const guess = options.estimates
      ? await options.estimates.get(key, () => plannerRows(db, matching))
      : await plannerRows(db, matching);
    if (atLeast > exactUpTo || guess > exactUpTo) return meta(clamp(Math.max(guess, exactUpTo + 1)), true);
    const counted = await sql<{
      n: number;
    }>`select count(*)::int as n from (${matching} limit ${exactUpTo + 1}) s`.execute(db);
    const n = counted.rows[0]?.n ?? 0;
    return n <= exactUpTo ? meta(n, false) : meta(clamp(Math.max(guess, exactUpTo + 1)), true);
  };
  // the records and the total side by side (on PostgreSQL, two connections of the pool)
  const [data, m] = await Promise.all([source.load(db, ids), total()]);
  return { data, meta: m };
}
