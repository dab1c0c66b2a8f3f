import { sql, type Kysely, type RawBuilder } from 'kysely';
import { checkFilters, type Filter, type FilterableField, type ParsedListQuery } from '@lintel/core';
import type { DB } from '../db/schema';
import { AppError } from '../errors';

/** How a list reads one field in SQL. `has` is for many-valued fields (a user's groups, markers). */
export interface ColumnSql {
  expr?: RawBuilder<unknown>;
  has?: (value: number) => RawBuilder<boolean>;
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
  /** records for ids, in the given order (inside a transaction, pass the transaction) */
  load(q: Kysely<DB>, ids: readonly number[]): Promise<T[]>;
}

const MIN_DATE = Date.parse('0001-01-01T00:00:00Z');
const MAX_DATE = Date.parse('9999-12-31T23:59:59.999Z');

const escapeLike = (v: string) => v.replace(/[\\%_]/g, (c) => `\\${c}`);

function filterSql(f: Filter, def: FilterableField, col: ColumnSql): RawBuilder<boolean> {
  const v = f.value;
  if (def.kind === 'refs') return col.has!(Number(v));
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
      if (v === null) return f.rule === 'equals' ? sql<boolean>`${e} is null` : sql<boolean>`${e} is not null`;
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
 * Paging, sort, free text and the filter language over any family. Field names and rules are checked
 * against the family's declaration before any SQL is written; values only ever travel as parameters.
 */
export async function runList<T>(
  db: Kysely<DB>,
  source: ListSource<T>,
  query: ParsedListQuery,
  where: RawBuilder<boolean>,
): Promise<{ data: T[]; meta: { total: number; page: number; limit: number } }> {
  const filters = query.filters ?? [];
  const problems = checkFilters(filters, source.filterable);
  // JavaScript reads dates PostgreSQL cannot (years past 9999 or before 1): refuse them like any bad date
  filters.forEach((f, i) => {
    if (source.filterable[f.field]?.kind !== 'date' || problems.some((p) => p.field.startsWith(`filters.${i}.`))) return;
    const t = Date.parse(String(f.value));
    if (!(t >= MIN_DATE && t <= MAX_DATE)) problems.push({ field: `filters.${i}.value`, rule: 'invalid_type', params: { expected: 'date' } });
  });
  const sortField = query.sort?.replace(/^-/, '');
  if (sortField && !source.sortable.includes(sortField)) problems.push({ field: 'sort', rule: 'one_of', params: { values: [...source.sortable] } });
  if (problems.length) throw new AppError('check_fields_data', { fields: problems });

  const conditions: RawBuilder<boolean>[] = [where];
  if (filters.length) {
    const parts = filters.map((f) => filterSql(f, source.filterable[f.field]!, source.columns[f.field]!));
    conditions.push(sql<boolean>`(${sql.join(parts, query.match === 'any' ? sql` or ` : sql` and `)})`);
  }
  const search = query.search?.trim();
  if (search && source.search.length) {
    const pattern = `%${escapeLike(search)}%`;
    conditions.push(sql<boolean>`(${sql.join(source.search.map((e) => sql`${e} ilike ${pattern}`), sql` or `)})`);
  }
  const whereSql = sql.join(conditions, sql` and `);
  const order = sortField
    ? // PostgreSQL's default null order, so that a btree index on the column can serve the sort
      sql`${source.columns[sortField]!.expr!} ${query.sort!.startsWith('-') ? sql`desc` : sql`asc`}, t.id ${query.sort!.startsWith('-') ? sql`desc` : sql`asc`}`
    : sql`t.id asc`;
  const offset = (query.page - 1) * query.limit;
  const [count, page] = await Promise.all([
    sql<{ n: number }>`select count(*)::int as n from ${source.from} where ${whereSql}`.execute(db),
    sql<{ id: number }>`select t.id from ${source.from} where ${whereSql} order by ${order} limit ${query.limit} offset ${offset}`.execute(db),
  ]);
  const data = await source.load(db, page.rows.map((r) => r.id));
  return { data, meta: { total: count.rows[0]?.n ?? 0, page: query.page, limit: query.limit } };
}
