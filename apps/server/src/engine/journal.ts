import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import { checkFilters } from '@lintel/core';
import {
  JOURNAL_MAX_OFFSET,
  decodeJournalCursor,
  encodeJournalCursor,
  type ParsedJournalQuery,
} from '@lintel/commands';
import type { DB } from '../db/schema';
import { AppError } from '../errors';
import { escapeLike, filterSql, type ListSource } from './list';
import { keysetReader, type OrderedRows } from './export';

/**
 * The generic store of a journal (issue 14 item 2): an append-only table read newest first by keyset over
 * `(time, id)`. Everything else of the list — filters, search, the record loader — is a `ListSource`.
 */
export interface JournalStore<T> extends ListSource<T> {
  /** the command noun, e.g. `audit_event` (names the retention job and its setting) */
  noun: string;
  /** the table, unaliased, for the retention's deletes */
  table: string;
  /** the time column of `table` */
  timeColumn: string;
  /** days kept by default; `config.retentionDays[noun]` or the environment variable overrides it */
  retention: { defaultDays: number; env: string };
  /**
   * What else the retention undoes with the rows it deletes (device events: their pictures' room and files):
   * the columns of each deleted row it needs, a step in the deleting transaction, and one after its commit.
   */
  pruned?: {
    returning: readonly string[];
    inTransaction(trx: Transaction<DB>, rows: readonly Record<string, unknown>[]): Promise<void>;
    afterCommit(env: PruneEnv, rows: readonly Record<string, unknown>[]): Promise<void>;
  };
}

/** What a journal's `pruned.afterCommit` may reach. */
export interface PruneEnv {
  storageDir: string;
}

export function journalStore<T>(store: JournalStore<T>): JournalStore<T> {
  return store;
}

const MIN_DATE = Date.parse('0001-01-01T00:00:00Z');
const MAX_DATE = Date.parse('9999-12-31T23:59:59.999Z');
const goodDate = (v: unknown) => {
  const t = Date.parse(String(v));
  return t >= MIN_DATE && t <= MAX_DATE;
};

/** The time of a row as text with microseconds, so a cursor stands exactly between two rows. */
const timeText = (e: RawBuilder<unknown>) =>
  sql<string>`to_char(${e} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

type Problem = { field: string; rule: string; params?: Record<string, unknown> };

/** The WHERE of a journal query (scope, time range, filters, search); bad input is `check_fields_data`. */
export function journalWhere<T>(
  store: JournalStore<T>,
  query: Omit<ParsedJournalQuery, 'page' | 'limit'>,
  where: RawBuilder<boolean>,
): RawBuilder<boolean> {
  const filters = query.filters ?? [];
  const problems: Problem[] = checkFilters(filters, store.filterable);
  filters.forEach((f, i) => {
    if (
      store.filterable[f.field]?.kind !== 'date' ||
      problems.some((p) => p.field.startsWith(`filters.${i}.`))
    )
      return;
    if (!goodDate(f.value))
      problems.push({ field: `filters.${i}.value`, rule: 'invalid_type', params: { expected: 'date' } });
  });
  for (const k of ['from', 'to'] as const)
    if (query[k] !== undefined && !goodDate(query[k]))
      problems.push({ field: k, rule: 'invalid_type', params: { expected: 'date' } });
  const timeField = store.timeColumn;
  if (query.sort !== undefined && query.sort !== `-${timeField}` && query.sort !== timeField)
    problems.push({ field: 'sort', rule: 'one_of', params: { values: [`-${timeField}`, timeField] } });
  if (query.cursor !== undefined && !decodeJournalCursor(query.cursor))
    problems.push({ field: 'cursor', rule: 'invalid_format' });
  if (problems.length) throw new AppError('check_fields_data', { fields: problems });

  const time = store.columns[timeField]!.expr!;
  const conditions: RawBuilder<boolean>[] = [where];
  if (query.from)
    conditions.push(sql<boolean>`${time} >= ${new Date(query.from).toISOString()}::timestamptz`);
  if (query.to) conditions.push(sql<boolean>`${time} < ${new Date(query.to).toISOString()}::timestamptz`);
  if (filters.length) {
    const parts = filters.map((f) => filterSql(f, store.filterable[f.field]!, store.columns[f.field]!));
    conditions.push(sql<boolean>`(${sql.join(parts, query.match === 'any' ? sql` or ` : sql` and `)})`);
  }
  const search = query.search?.trim();
  if (search && store.search.length) {
    const pattern = `%${escapeLike(search)}%`;
    conditions.push(
      sql<boolean>`(${sql.join(
        store.search.map((e) => sql`${e} ilike ${pattern}`),
        sql` or `,
      )})`,
    );
  }
  return sql.join(conditions, sql` and `) as RawBuilder<boolean>;
}

interface KeyRow {
  id: number;
  ts: string;
}

/**
 * One page of a journal. Without a cursor: the newest rows (below `to` if given), or with `page` > 1 the
 * console table's page-number paging, bounded to the first JOURNAL_MAX_OFFSET rows. With a cursor: the rows
 * just beyond it, by keyset — an index range scan however deep it is.
 */
export async function runJournal<T>(
  db: Kysely<DB>,
  store: JournalStore<T>,
  query: ParsedJournalQuery,
  where: RawBuilder<boolean>,
): Promise<{
  data: T[];
  meta: { total: number; page: number; limit: number; next: string | null; prev: string | null };
}> {
  const whereSql = journalWhere(store, query, where);
  const cursor = query.cursor ? decodeJournalCursor(query.cursor)! : null;
  const offset = cursor ? 0 : (query.page - 1) * query.limit;
  if (offset > JOURNAL_MAX_OFFSET)
    throw new AppError('check_fields_data', {
      fields: [
        {
          field: 'page',
          rule: 'less_or_equal',
          params: { max: Math.floor(JOURNAL_MAX_OFFSET / query.limit) + 1 },
        },
      ],
    });
  const time = store.columns[store.timeColumn]!.expr!;
  const newestFirst = query.sort !== store.timeColumn;
  // reading towards "prev" walks the other way and turns the page round afterwards
  const backwards = cursor?.dir === 'newer';
  const desc = newestFirst !== backwards;
  const order = desc ? sql`${time} desc, t.id desc` : sql`${time} asc, t.id asc`;
  const keyset = cursor
    ? desc
      ? sql<boolean>`(${time}, t.id) < (${cursor.t}::timestamptz, ${cursor.id})`
      : sql<boolean>`(${time}, t.id) > (${cursor.t}::timestamptz, ${cursor.id})`
    : sql<boolean>`true`;
  const [count, page] = await Promise.all([
    sql<{
      n: number;
    }>`select count(*)::int as n from (select 1 from ${store.from} where ${whereSql} limit ${JOURNAL_MAX_OFFSET + 1}) x`.execute(
      db,
    ),
    sql<KeyRow>`select t.id, ${timeText(time)} as ts from ${store.from} where ${whereSql} and ${keyset}
      order by ${order} limit ${query.limit + 1} offset ${offset}`.execute(db),
  ]);
  const more = page.rows.length > query.limit;
  const rows = page.rows.slice(0, query.limit);
  if (backwards) rows.reverse();
  const first = rows[0];
  const last = rows[rows.length - 1];
  const at = (r: KeyRow, dir: 'older' | 'newer') => encodeJournalCursor({ t: r.ts, id: Number(r.id), dir });
  // forwards: more rows beyond the last one if the page overflowed; rows before the first if we came from
  // somewhere (a cursor, an offset, a `to`) — backwards the other way round
  const next = last && (backwards ? true : more) ? at(last, 'older') : null;
  const prev =
    first && (backwards ? more : cursor !== null || offset > 0 || query.to !== undefined)
      ? at(first, 'newer')
      : null;
  const data = await store.load(
    db,
    rows.map((r) => Number(r.id)),
  );
  return { data, meta: { total: count.rows[0]?.n ?? 0, page: query.page, limit: query.limit, next, prev } };
}

/**
 * What an export of a journal reads (engine/export.ts): the rows of the query (scope, time range, filters,
 * search), newest first or oldest first, by `(time, id)`.
 */
export function journalPlan<T>(
  store: JournalStore<T>,
  query: Omit<ParsedJournalQuery, 'page' | 'limit' | 'cursor'>,
  where: RawBuilder<boolean>,
): OrderedRows {
  return {
    from: store.from,
    where: journalWhere(store, query, where),
    keys: [store.columns[store.timeColumn]!.expr!, sql`t.id`],
    desc: query.sort !== store.timeColumn,
  };
}

/**
 * Every row of a journal query in its order, read in keyset batches on any database (the export's
 * PGlite path, `keysetReader`): never more than one batch held, never an OFFSET.
 */
export async function* journalRows<T>(
  db: Kysely<DB>,
  store: JournalStore<T>,
  query: Omit<ParsedJournalQuery, 'page' | 'limit' | 'cursor'>,
  where: RawBuilder<boolean>,
  batch = 1000,
): AsyncGenerator<T[]> {
  const reader = keysetReader(db, journalPlan(store, query, where), batch);
  for (;;) {
    const ids = await reader.next();
    if (!ids.length) return;
    yield await store.load(db, ids);
  }
}

/**
 * Retention: deletes the rows older than `cutoff` in batches of `batch` rows, each batch one short
 * statement over an id range (the oldest ids first), so a prune of millions never holds a long lock.
 */
export async function pruneJournal(
  db: Kysely<DB>,
  store: Pick<JournalStore<unknown>, 'table' | 'timeColumn' | 'pruned'>,
  cutoff: Date,
  batch = 10_000,
  /** which rows this prune is about (a project's own retention: `project_id = …`); default all */
  where: RawBuilder<unknown> = sql`true`,
  env: PruneEnv = { storageDir: '' },
): Promise<{ deleted: number; batches: number }> {
  const table = sql.table(store.table);
  const time = sql.ref(store.timeColumn);
  const pruned = store.pruned;
  let deleted = 0;
  let batches = 0;
  for (;;) {
    // the id range of the next batch: ids are given in time order, so the oldest rows have the lowest ids
    const range = await sql<{ lo: number | null; hi: number | null }>`
      select min(id) as lo, max(id) as hi from (
        select id from ${table} where ${time} < ${cutoff} and ${where} order by id limit ${batch}) b`.execute(
      db,
    );
    const { lo, hi } = range.rows[0] ?? { lo: null, hi: null };
    if (lo === null || hi === null) return { deleted, batches };
    const remove = sql`delete from ${table} where id between ${lo} and ${hi} and ${time} < ${cutoff} and ${where}`;
    if (pruned) {
      const rows = await db.transaction().execute(async (trx) => {
        const r = await sql<Record<string, unknown>>`${remove} returning ${sql.join(
          pruned.returning.map((c) => sql.ref(c)),
        )}`.execute(trx);
        await pruned.inTransaction(trx, r.rows);
        return r.rows;
      });
      await pruned.afterCommit(env, rows);
      deleted += rows.length;
    } else {
      const r = await remove.execute(db);
      deleted += Number(r.numAffectedRows ?? 0);
    }
    batches += 1;
  }
}

/** The retention of a journal in days: the configuration's, else the environment's, else its default. */
export function retentionDays(
  store: Pick<JournalStore<unknown>, 'noun' | 'retention'>,
  configured: Partial<Record<string, number>> | undefined,
  env: NodeJS.ProcessEnv = process.env,
): number {
  const fromEnv = env[store.retention.env];
  return (
    configured?.[store.noun] ??
    (fromEnv && /^\d+$/.test(fromEnv) ? Number(fromEnv) : store.retention.defaultDays)
  );
}
