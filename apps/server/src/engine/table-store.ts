import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { z } from 'zod';
import type { AnyResource, ScopeKind } from '@lintel/commands';
import type { DB } from '../db/schema';
import { DUMMY_PASSWORD } from '@lintel/core';
import { AppError } from '../errors';
import {
  assertRowLimit,
  registerGroupBatchCounter,
  registerGroupCounter,
  rowsInGroup,
  rowsInGroups,
} from '../licensing/limits';
import { assertLicenceCount } from '../licensing/licence.service';
import type { Caller } from './caller';
import type { FamilyCtx, FamilyStore, Kept } from './family';
import type { ColumnSql } from './list';
import type { ScopeRule } from './scope';
import {
  assertRelated,
  placedIn,
  relationByRecordKey,
  relationColumn,
  ownerScopeSql,
  relationSelect,
  rowValues,
  writeRelations,
} from './relations';

export { ownerScopeSql };

/** What a family's table needs beyond its declaration: only what SQL cannot guess. */
export interface TableStoreOptions {
  /** the family's table; rows have `id`, `project_id` and the record's fields as columns */
  table: string;
  /** audit log entity (default the noun) */
  entity?: string;
  /** record fields that are not columns: SQL over the row, aliased `t` (counts of related rows) */
  computed?: Readonly<Record<string, RawBuilder<unknown>>>;
  /** a write's values as stored (a colour in lower case) */
  prepare?: (values: Record<string, unknown>) => Record<string, unknown>;
  /** rows of other tables that keep a row: `{domains: {table: 'domains', column: 'domain_type_id'}}` */
  dependents?: Readonly<Record<string, { table: string; column: string }>>;
}

const col = (name: string) => sql.ref(`t.${name}`);

/** The scope rules of one kind of action: declared, or every gate permission over the whole project. */
function rules(
  declared: Readonly<Record<string, ScopeKind>> | undefined,
  gates: readonly string[],
): ScopeRule[] {
  return declared
    ? Object.entries(declared).map(([permission, scope]) => ({ permission, scope }))
    : gates.map((permission) => ({ permission, scope: 'all' as const }));
}

/** A duplicate of a unique field: `value_not_unique` naming the field the database refused. */
export function uniqueError(resource: AnyResource, err: unknown): never {
  const e = err as { code?: string; detail?: string; constraint?: string };
  if (e.code === '23505') {
    const said = `${e.detail ?? ''} ${e.constraint ?? ''}`;
    const field = resource.unique.find((f) => new RegExp(`\\b${f}\\b`).test(said)) ?? resource.unique[0];
    throw new AppError('value_not_unique', field ? { field } : {});
  }
  throw err;
}

/**
 * The create-placement check: each group a new row is placed in (its group column, or its many-to-many
 * groups) must be in the project and within the reach of the caller's create permissions (all, descendants,
 * own groups), else the create is refused. A move on update is the same check (engine/family.ts).
 */
export async function checkPlacement(
  resource: AnyResource,
  trx: Kysely<DB>,
  values: Record<string, unknown>,
  caller: Caller,
): Promise<void> {
  const ids = placedIn(resource, values);
  if (!ids?.length) return;
  const field = (resource.scopes?.owner?.group ?? resource.scopes?.owner?.groups)!;
  const found = await sql<{
    id: number;
  }>`select id from domains where id in (${sql.join(ids)}) and project_id = ${caller.projectId}`.execute(trx);
  const missing = ids.filter((id) => !found.rows.some((r) => Number(r.id) === id));
  if (missing.length) throw new AppError('invalid_related_entity', { entity: 'domains', ids: missing });
  const reach = new Set(
    rules(resource.scopes?.create, resource.gates.create)
      .filter((r) => caller.has(r.permission))
      .map((r) => r.scope),
  );
  if (reach.has('all')) return;
  const within = new Set([
    ...(reach.has('descendants') ? await caller.subtree() : []),
    ...(reach.has('domain') ? await caller.domains() : []),
  ]);
  if (ids.every((id) => within.has(id))) return;
  throw new AppError('method_prohibited', { reason: 'placement', field });
}

/**
 * The family's declared counted limits (`limits`) for a row placed in, or moved to, the group of `values`:
 * counted under the limit's lock in the writing transaction (licensing/limits.ts).
 */
export async function checkLimits(
  resource: AnyResource,
  table: string,
  trx: Kysely<DB>,
  values: Record<string, unknown>,
  rowId: number | null,
): Promise<void> {
  const column = resource.scopes?.owner?.group;
  if (!column || values[column] === undefined || values[column] === null) return;
  for (const limit of resource.limits)
    await assertRowLimit(trx, {
      feature: limit.feature,
      table,
      column,
      groupId: Number(values[column]),
      rowId,
    });
}

const stored = (v: unknown) => (v !== null && typeof v === 'object' ? JSON.stringify(v) : v);

/**
 * The store of a plain family, derived from its declaration: columns and search for lists, the load of
 * records (dates as ISO text, `created_by_user` from the creator column), create with the placement check,
 * update, delete kept while dependents exist, the scope SQL, and unique errors named by field.
 */
export function tableStore<R extends AnyResource>(resource: R, opts: TableStoreOptions): FamilyStore<R> {
  type Rec = z.output<R['record']>;
  const table = sql.table(opts.table);
  const computed = opts.computed ?? {};
  const creator = resource.scopes?.owner?.creator;
  const keys = Object.keys(resource.record.shape);
  const secrets = new Set(resource.secrets);
  const exprOf = (key: string): RawBuilder<unknown> => {
    if (computed[key]) return computed[key];
    // never the value: the placeholder says one is stored
    if (secrets.has(key)) return sql`(case when ${col(key)} is not null then ${DUMMY_PASSWORD}::text end)`;
    const rel = relationByRecordKey(resource, key);
    if (rel) return relationSelect(rel, sql`t.id`);
    if (key === 'created_by_user' && creator)
      return sql`(select json_build_object('id', u.id, 'name', u.name) from users u where u.id = ${col(creator)})`;
    return col(key);
  };
  const columns: Record<string, ColumnSql> = {};
  for (const name of Object.keys(resource.fields)) {
    const rel = computed[name] ? undefined : relationByRecordKey(resource, name);
    columns[name] = rel ? relationColumn(rel) : { expr: exprOf(name) };
  }
  const given = opts.prepare ?? ((v: Record<string, unknown>) => v);
  // the placeholder sent back keeps the stored secret (spec part 2 §5)
  const prepare = (v: Record<string, unknown>) =>
    given(
      Object.fromEntries(Object.entries(v).filter(([k, x]) => !(secrets.has(k) && x === DUMMY_PASSWORD))),
    );
  const unique = (err: unknown) => uniqueError(resource, err);
  // what a group uses of each declared limit, for the check of a new maximum (licensing/group-licences.ts)
  const groupColumn = resource.scopes?.owner?.group;
  if (resource.limits.length && !groupColumn)
    throw new Error(
      `${resource.noun}: counted limits need scopes.owner.group (a store of its own counts others)`,
    );
  if (groupColumn)
    for (const limit of resource.limits) {
      registerGroupCounter(limit.feature, (q, groupId) =>
        rowsInGroup(q, { table: opts.table, column: groupColumn, groupId }),
      );
      registerGroupBatchCounter(limit.feature, (q, groupIds) =>
        rowsInGroups(q, { table: opts.table, column: groupColumn, groupIds }),
      );
    }

  return {
    resource,
    entity: opts.entity ?? resource.noun,
    from: sql`${table} t`,
    filterable: resource.filterable,
    sortable: resource.sortable,
    columns,
    search: resource.search.map(col),
    createdBy: creator ? col(creator) : null,
    scopes: {
      view: rules(resource.scopes?.view, resource.gates.view),
      edit: rules(resource.scopes?.edit, resource.gates.edit),
      delete: rules(resource.scopes?.delete, resource.gates.delete),
      ownAlwaysVisible: resource.scopes?.ownAlwaysVisible ?? !!creator,
    },
    scopeSql: ownerScopeSql(resource),

    async load(q: Kysely<DB>, ids: readonly number[]): Promise<Rec[]> {
      if (ids.length === 0) return [];
      const select = sql.join(keys.map((k) => sql`${exprOf(k)} as ${sql.ref(k)}`));
      const rows = await sql<
        Record<string, unknown>
      >`select ${select} from ${table} t where t.id in (${sql.join(ids)})`.execute(q);
      const byId = new Map(
        rows.rows.map((r) => [
          Number(r.id),
          Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v instanceof Date ? v.toISOString() : v])),
        ]),
      );
      return ids.flatMap((id) => (byId.has(id) ? [byId.get(id) as Rec] : []));
    },

    async create(trx, args, ctx: FamilyCtx) {
      const values = prepare({ ...(args as Record<string, unknown>) });
      await checkPlacement(resource, trx, values, ctx.caller);
      await assertRelated(trx, resource, ctx.caller.projectId, values);
      await checkLimits(resource, opts.table, trx, values, null);
      if (resource.licenceCount)
        await assertLicenceCount(ctx.app, trx, ctx.caller.projectId, resource.licenceCount);
      const row: Record<string, unknown> = {
        project_id: ctx.caller.projectId,
        ...rowValues(resource, values),
      };
      if (creator) row[creator] = ctx.caller.userId;
      const names = Object.keys(row);
      const r = await sql<{
        id: number;
      }>`insert into ${table} (${sql.join(names.map((n) => sql.ref(n)))}) values (${sql.join(names.map((n) => stored(row[n])))}) returning id`
        .execute(trx)
        .catch(unique);
      await writeRelations(trx, resource, r.rows[0]!.id, values, false);
      return r.rows[0]!.id;
    },

    async update(trx, id, args, ctx, before) {
      const all = prepare({ ...(args as Record<string, unknown>) });
      await assertRelated(trx, resource, ctx.caller.projectId, all);
      await writeRelations(trx, resource, id, all, true);
      const values = Object.entries(rowValues(resource, all)).filter(([, v]) => v !== undefined);
      if (!values.length) return;
      // a move into another group is counted there (the placement itself is checked by familyHandlers)
      const group = resource.scopes?.owner?.group;
      const moved = Object.fromEntries(values);
      if (group && moved[group] !== undefined && moved[group] !== (before as Record<string, unknown>)[group])
        await checkLimits(resource, opts.table, trx, moved, id);
      await sql`update ${table} set ${sql.join(values.map(([k, v]) => sql`${sql.ref(k)} = ${stored(v)}`))} where id = ${id}`
        .execute(trx)
        .catch(unique);
    },

    async remove(trx, id): Promise<Kept | null> {
      const dependencies: Record<string, number> = {};
      for (const [name, d] of Object.entries(opts.dependents ?? {})) {
        const n = await sql<{
          n: number;
        }>`select count(*)::int as n from ${sql.table(d.table)} where ${sql.ref(d.column)} = ${id}`.execute(
          trx,
        );
        if (n.rows[0]!.n) dependencies[name] = n.rows[0]!.n;
      }
      if (Object.keys(dependencies).length) return { reason: 'has_dependencies', dependencies };
      await sql`delete from ${table} where id = ${id}`.execute(trx);
      return null;
    },
  } as FamilyStore<R>;
}
