import { sql, type Kysely, type RawBuilder } from 'kysely';
import { z, type ZodType } from 'zod';
import {
  allResources,
  type AnyResource,
  type JoinTable,
  type PlainResource,
  type ResourceRef,
  type resources,
} from '@lintel/commands';
import type { DB } from '../db/schema';
import { AppError } from '../errors';
import type { Caller } from './caller';
import { inIds } from './caller';
import type { ColumnSql } from './list';
import type { ScopeSql } from './scope';

/**
 * The tables of the families whose store is their own (a plain family declares its `table`): the typed
 * record makes a new family with a store of its own fail the build until its table is named here.
 */
type OwnStoreNoun = Exclude<(typeof resources)[number], PlainResource>['noun'];
const OWN_TABLES: Record<OwnStoreNoun, string> = {
  user: 'users',
  role: 'roles',
  group: 'domains',
  device: 'devices',
  marker: 'markers',
  domain_type: 'domain_types',
  sip_number: 'sip_numbers',
  sip_trunk: 'sip_trunks',
  identifier: 'identifiers',
  integration: 'integrations',
};

/** The table that holds a family's rows (`id`, `project_id`, its name column). */
export function familyTable(noun: string): string {
  const declared = allResources().find((r) => r.noun === noun)?.table;
  const table = declared ?? (OWN_TABLES as Record<string, string>)[noun];
  if (!table) throw new Error(`no table known for the family ${noun}`);
  return table;
}

/** Tables a store of its own writes beside its family's table and join tables: a user's account. */
const ALSO_WRITES: Partial<Record<OwnStoreNoun, readonly string[]>> = { user: ['accounts'] };

/** Every table a family writes: its own, the join tables of its declared relations, and any its store adds. */
export function familyTables(resource: AnyResource): string[] {
  return [
    familyTable(resource.noun),
    ...((ALSO_WRITES as Record<string, readonly string[] | undefined>)[resource.noun] ?? []),
    ...relationsOf(resource).flatMap((r) => (r.join ? [r.join.table] : [])),
  ];
}

/** One declared reference of a family, as the store reads and writes it. */
export interface Relation {
  /** the argument field (and, for one id, the row's column) */
  key: string;
  ref: ResourceRef;
  /** the join table of a many-to-many reference */
  join?: JoinTable;
  /** the record field showing it */
  recordKey: string;
  /** the related family's table */
  table: string;
  /** the keys of the objects the record shows, or null when it shows ids */
  shape: string[] | null;
}

const unwrap = (s: ZodType): ZodType => {
  let t = s;
  while (t instanceof z.ZodOptional || t instanceof z.ZodNullable || t instanceof z.ZodDefault)
    t = (t as z.ZodOptional).unwrap() as ZodType;
  return t;
};

/** The record's view of a relation: the keys of its objects, or null for bare ids (or when absent). */
function shapeOf(resource: AnyResource, recordKey: string): string[] | null {
  const field = (resource.record.shape as Record<string, ZodType | undefined>)[recordKey];
  if (!field) return null;
  let inner = unwrap(field);
  if (inner instanceof z.ZodArray) inner = unwrap(inner.element as ZodType);
  return inner instanceof z.ZodObject ? Object.keys(inner.shape) : null;
}

const col = (name: string) => sql.ref(`t.${name}`);

const cache = new WeakMap<AnyResource, Relation[]>();

/** The family's declared references that its store keeps: join tables, and single ids in a column. */
export function relationsOf(resource: AnyResource): Relation[] {
  let out = cache.get(resource);
  if (out) return out;
  out = Object.entries(resource.refs)
    .filter(([, ref]) => ref.many !== true)
    .map(([key, ref]) => {
      const recordKey = ref.record ?? key;
      return {
        key,
        ref,
        join: typeof ref.many === 'object' ? ref.many : undefined,
        recordKey,
        table: familyTable(ref.family),
        shape: shapeOf(resource, recordKey),
      };
    });
  cache.set(resource, out);
  return out;
}

export const relationByRecordKey = (resource: AnyResource, recordKey: string) =>
  relationsOf(resource).find((r) => r.recordKey === recordKey);

const objectOf = (shape: string[]) =>
  sql`json_build_object(${sql.join(shape.map((k) => sql`${sql.lit(k)}, ${sql.ref(`r.${k}`)}`))})`;

/**
 * The record's value of a relation for the row `rowId` (SQL): the related objects (by name, then id) or ids
 * of a join table, as a JSON array; the related object of a single id, or the id itself.
 */
export function relationSelect(rel: Relation, rowId: RawBuilder<unknown>): RawBuilder<unknown> {
  const { join, shape } = rel;
  if (join) {
    const j = sql.table(join.table);
    const owner = sql.ref(`j.${join.owner}`);
    const column = sql.ref(`j.${join.column}`);
    if (!shape)
      return sql`coalesce((select json_agg(${column} order by ${column}) from ${j} j where ${owner} = ${rowId}), '[]'::json)`;
    const order = shape.includes('name') ? sql`r.name, r.id` : sql`r.id`;
    return sql`coalesce((select json_agg(${objectOf(shape)} order by ${order}) from ${j} j join ${sql.table(rel.table)} r on r.id = ${column} where ${owner} = ${rowId}), '[]'::json)`;
  }
  const id = sql.ref(`t.${rel.key}`);
  if (!shape || rel.recordKey === rel.key) return id;
  return sql`(select ${objectOf(shape)} from ${sql.table(rel.table)} r where r.id = ${id})`;
}

/**
 * The same values as `relationSelect` of a join-table relation, for the rows whose ids are `ids` (SQL, an
 * `int[]`), as a subquery of `(owner, value)` to left-join on the owner: one grouped read of the join table
 * for all the rows instead of one subquery per row (a list page's records: half the backends' cost of the
 * statement went to the per-row subqueries). Its owners without related rows have no row: read the value as
 * `coalesce(alias.value, '[]'::json)`.
 */
export function relationAggregate(rel: Relation, ids: RawBuilder<unknown>): RawBuilder<unknown> {
  const { join, shape } = rel;
  if (!join) throw new Error(`relationAggregate: ${rel.key} is not a join table`);
  const j = sql.table(join.table);
  const owner = sql.ref(`j.${join.owner}`);
  const column = sql.ref(`j.${join.column}`);
  if (!shape)
    return sql`(select ${owner} as owner, json_agg(${column} order by ${column}) as value from ${j} j where ${owner} = any(${ids}) group by ${owner})`;
  const order = shape.includes('name') ? sql`r.name, r.id` : sql`r.id`;
  return sql`(select ${owner} as owner, json_agg(${objectOf(shape)} order by ${order}) as value from ${j} j join ${sql.table(rel.table)} r on r.id = ${column} where ${owner} = any(${ids}) group by ${owner})`;
}

/**
 * How lists read a relation: over the join table, `has` (the set holds the id) and `equals` (the set is
 * exactly the ids: none of its rows outside them, and as many distinct rows as ids); or the id column.
 */
export function relationColumn(rel: Relation): ColumnSql {
  const join = rel.join;
  if (!join) return { expr: sql.ref(`t.${rel.key}`) };
  const j = sql.table(join.table);
  const owner = sql.ref(`f.${join.owner}`);
  const column = sql.ref(`f.${join.column}`);
  return {
    has: (v) => sql<boolean>`exists (select 1 from ${j} f where ${owner} = t.id and ${column} = ${v})`,
    equals: (ids) =>
      ids.length
        ? sql<boolean>`(not exists (select 1 from ${j} f where ${owner} = t.id and not (${inIds(column, ids)})) and (select count(distinct ${column}) from ${j} f where ${owner} = t.id) = ${ids.length})`
        : sql<boolean>`not exists (select 1 from ${j} f where ${owner} = t.id)`,
  };
}

/** The rows whose relation `rel` (a join table) holds one of `ids`: the view scope of a many-groups owner. */
export function relationHolds(rel: Relation, ids: readonly number[]): RawBuilder<boolean> {
  const join = rel.join!;
  return ids.length
    ? sql<boolean>`exists (select 1 from ${sql.table(join.table)} s where ${sql.ref(`s.${join.owner}`)} = t.id and ${inIds(sql.ref(`s.${join.column}`), ids)})`
    : sql<boolean>`false`;
}

/** The relation that places the family's rows in several groups (`scopes.owner.groups`), if declared. */
export function ownerGroups(resource: AnyResource): Relation | undefined {
  const key = resource.scopes?.owner?.groups;
  if (!key) return undefined;
  const rel = relationsOf(resource).find((r) => r.key === key);
  if (!rel?.join || rel.ref.family !== 'group')
    throw new Error(`${resource.noun}: scopes.owner.groups names ${key}, which is no join table to groups`);
  return rel;
}

const idsOf = (v: unknown): number[] =>
  v === undefined || v === null ? [] : [...new Set((Array.isArray(v) ? v : [v]).map(Number))];

/**
 * Each id a write names in a declared relation is a row of the caller's project, else the write is
 * `invalid_related_entity` naming the table and the ids that are not.
 */
export async function assertRelated(
  q: Kysely<DB>,
  resource: AnyResource,
  projectId: number,
  values: Record<string, unknown>,
): Promise<void> {
  for (const rel of relationsOf(resource)) {
    const ids = idsOf(values[rel.key]);
    if (!ids.length) continue;
    const found = await sql<{
      id: number;
    }>`select id from ${sql.table(rel.table)} where project_id = ${projectId} and id in (${sql.join(ids)})`.execute(
      q,
    );
    const missing = ids.filter((id) => !found.rows.some((f) => Number(f.id) === id));
    if (missing.length) throw new AppError('invalid_related_entity', { entity: rel.table, ids: missing });
  }
}

/**
 * The join rows of a write: each many-to-many relation the values name is replaced by the list given (a
 * create's lists are its first); a relation the values leave out stays as it is.
 */
export async function writeRelations(
  q: Kysely<DB>,
  resource: AnyResource,
  rowId: number,
  values: Record<string, unknown>,
  replace: boolean,
): Promise<void> {
  for (const rel of relationsOf(resource)) {
    if (!rel.join || values[rel.key] === undefined) continue;
    const { table, owner, column } = rel.join;
    if (replace) await sql`delete from ${sql.table(table)} where ${sql.ref(owner)} = ${rowId}`.execute(q);
    const ids = idsOf(values[rel.key]);
    if (ids.length)
      await sql`insert into ${sql.table(table)} (${sql.ref(owner)}, ${sql.ref(column)}) values ${sql.join(
        ids.map((id) => sql`(${rowId}, ${id})`),
      )}`.execute(q);
  }
}

/** The ids a row holds in a many-to-many relation, in id order. */
export async function relatedIds(q: Kysely<DB>, rel: Relation, rowId: number): Promise<number[]> {
  const { table, owner, column } = rel.join!;
  const r = await sql<{
    id: number;
  }>`select ${sql.ref(column)} as id from ${sql.table(table)} where ${sql.ref(owner)} = ${rowId} order by ${sql.ref(column)}`.execute(
    q,
  );
  return r.rows.map((row) => Number(row.id));
}

/** The values of a write without its join-table relations: what goes in the row's own columns. */
export function rowValues(resource: AnyResource, values: Record<string, unknown>): Record<string, unknown> {
  const joined = new Set(relationsOf(resource).flatMap((r) => (r.join ? [r.key] : [])));
  return Object.fromEntries(Object.entries(values).filter(([k]) => !joined.has(k)));
}

/** The groups a write places the row in: its group column, or its many-to-many groups; null if it names none. */
export function placedIn(resource: AnyResource, values: Record<string, unknown>): number[] | null {
  const owner = resource.scopes?.owner;
  const key = owner?.group ?? owner?.groups;
  if (!key || values[key] === undefined || values[key] === null) return null;
  return idsOf(values[key]);
}

/**
 * Where rows of this family sit for a scope: by their group column, or their many-to-many groups, else by
 * their maker's groups.
 */
export function ownerScopeSql(resource: AnyResource): ScopeSql {
  const owner = resource.scopes?.owner ?? {};
  const groups = ownerGroups(resource);
  const placed = async (ids: readonly number[]): Promise<RawBuilder<boolean>> => {
    if (owner.group) return inIds(col(owner.group), ids);
    if (groups) return relationHolds(groups, ids);
    if (owner.creator)
      return ids.length
        ? sql<boolean>`exists (select 1 from user_domains s where s.user_id = ${col(owner.creator)} and ${inIds(sql`s.domain_id`, ids)})`
        : sql<boolean>`false`;
    return sql<boolean>`false`;
  };
  return async (scope: string, caller: Caller) => {
    if (scope === 'descendants') return placed(await caller.subtree());
    if (scope === 'domain') return placed(await caller.domains());
    if (scope === 'own' && owner.creator) return sql<boolean>`${col(owner.creator)} = ${caller.userId}`;
    return sql<boolean>`false`;
  };
}

export type { Caller };
