import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import { z, type ZodObject, type ZodType } from 'zod';
import type { AnyResource, ParsedListExportQuery } from '@lintel/commands';
import type { ParsedListQuery } from '@lintel/core';
import type { ServerContext } from '../context';
import type { DB } from '../db/schema';
import { audit } from '../audit/audit';
import { AppError, parseInput } from '../errors';
import { signedIn, type AllHandlers, type HandlerContext } from '../pipeline/handler';
import { Caller } from './caller';
import { planList, runList, type ListSource } from './list';
import { exportReply } from './export';
import { scopePredicate, scopesFor, type ScopeRules, type ScopeSql } from './scope';
import { checkPlacement } from './table-store';
import { assertRelated, ownerGroups, placedIn, relatedIds, relationsOf } from './relations';
import { declareEntityNames, tableNames } from './entity-names';

export interface FamilyCtx {
  app: ServerContext;
  caller: Caller;
  ip: string;
}

/** Why a row was not deleted, and what depends on it. */
export interface Kept {
  reason: string;
  dependencies?: Record<string, number>;
}

export interface FamilyStore<R extends AnyResource, Rec = z.output<R['record']>> extends ListSource<Rec> {
  resource: R;
  /** name of the entity in the audit log */
  entity: string;
  scopes: ScopeRules;
  scopeSql: ScopeSql;
  /** `t.created_by`, for "users may always view what they created" */
  createdBy: RawBuilder<unknown> | null;
  /** checks and writes a new row; returns its id */
  create(trx: Transaction<DB>, args: z.output<R['createArgs']>, ctx: FamilyCtx): Promise<number>;
  update(
    trx: Transaction<DB>,
    id: number,
    args: z.output<R['updateArgs']>,
    ctx: FamilyCtx,
    before: Rec,
  ): Promise<void>;
  /**
   * The check of an update that places the row in other groups (default: `checkPlacement`, the family's
   * create scopes); a store whose placement rules are its own gives them here.
   */
  placement?(trx: Transaction<DB>, changes: Record<string, unknown>, caller: Caller): Promise<void>;
  /** after the create committed: e-mails and events, which must not hold the transaction */
  afterCreate?(ctx: FamilyCtx, id: number, args: z.output<R['createArgs']>): Promise<void>;
  /** after an update committed */
  afterUpdate?(ctx: FamilyCtx, id: number, before: Rec, after: Rec): Promise<void>;
  /**
   * after a delete committed: what is not the database's (a device's broker connection); never for a dry
   * run, which rolls back
   */
  afterRemove?(ctx: FamilyCtx, id: number, before: Rec): Promise<void> | void;
  /**
   * Authority over the row as it is, beyond the scope (`assertMay`): e.g. a user's current role and groups.
   * Update and delete call it before the change; a refusal is an AppError.
   */
  authority?(q: Kysely<DB>, id: number, ctx: FamilyCtx, action: 'edit' | 'delete'): Promise<void>;
  /** deletes the row, or says why it stays */
  remove(
    trx: Transaction<DB>,
    id: number,
    ctx: FamilyCtx,
    options: Record<string, unknown>,
  ): Promise<Kept | null>;
}

export function callerOf(ctx: HandlerContext): Caller {
  return new Caller(ctx.app.db, signedIn(ctx), ctx.app.authCache);
}

/** For writes: the caller is read ahead, since nothing may query beside a transaction on PGlite. */
export async function familyCtx(ctx: HandlerContext): Promise<FamilyCtx> {
  return { app: ctx.app, caller: await callerOf(ctx).prefetch(), ip: ctx.caller.ip };
}

/** For reads outside a transaction: the caller's groups and roles are read only if a scope needs them. */
function readCtx(ctx: HandlerContext): FamilyCtx {
  return { app: ctx.app, caller: callerOf(ctx), ip: ctx.caller.ip };
}

/** The rows of the family this caller may see (spec: view rule), or edit/delete within that. */
export async function visibleSql<R extends AnyResource>(
  store: FamilyStore<R>,
  caller: Caller,
  action: 'view' | 'edit' | 'delete',
): Promise<RawBuilder<boolean>> {
  const scopes = (a: 'view' | 'edit' | 'delete') =>
    new Set([...scopesFor(caller, store.scopes[a]), ...(store.scopes.always?.[a] ?? [])]);
  const view = await scopePredicate(
    caller,
    scopes('view'),
    store.scopeSql,
    store.createdBy,
    store.scopes.ownAlwaysVisible,
  );
  const base = sql<boolean>`t.project_id = ${caller.projectId} and ${view}`;
  if (action === 'view') return base;
  const act = await scopePredicate(caller, scopes(action), store.scopeSql, null, false);
  return sql<boolean>`${base} and ${act}`;
}

async function rowIs(
  q: Kysely<DB>,
  store: FamilyStore<AnyResource>,
  id: number,
  predicate: RawBuilder<boolean>,
): Promise<boolean> {
  const r = await sql<{
    id: number;
  }>`select t.id from ${store.from} where t.id = ${id} and ${predicate} limit 1`.execute(q);
  return r.rows.length > 0;
}

/**
 * 404 when the caller may not see the row (or it is in another project), 403 when he sees it but may not act
 * on it: outside his scope for the action, or beyond his authority over it as it is now (`store.authority`).
 */
export async function assertMay(
  q: Kysely<DB>,
  store: FamilyStore<AnyResource>,
  caller: Caller,
  id: number,
  action: 'edit' | 'delete',
  ctx?: FamilyCtx,
): Promise<void> {
  if (!(await rowIs(q, store, id, await visibleSql(store, caller, 'view'))))
    throw new AppError('item_not_found');
  if (!(await rowIs(q, store, id, await visibleSql(store, caller, action))))
    throw new AppError('method_prohibited');
  if (store.authority && ctx) await store.authority(q, id, ctx, action);
}

/** Whether an update places the row in other groups than it is in (its group column, or its groups). */
function movesGroups(
  resource: AnyResource,
  changes: Record<string, unknown>,
  before: Record<string, unknown>,
) {
  const next = placedIn(resource, changes);
  if (!next) return false;
  const groups = ownerGroups(resource);
  const was = groups ? before[groups.recordKey] : before[resource.scopes!.owner!.group!];
  const ids = (Array.isArray(was) ? was : [was]).map((g) =>
    typeof g === 'object' && g !== null ? Number((g as { id: unknown }).id) : Number(g),
  );
  return [...new Set(ids)].sort().join() !== [...next].sort().join();
}

export async function loadOne<Rec>(q: Kysely<DB>, store: ListSource<Rec>, id: number): Promise<Rec> {
  const [rec] = await store.load(q, [id]);
  if (!rec) throw new AppError('item_not_found');
  return rec;
}

// distributes over a union of families (the plain ones), so each family's relation verbs count
export type FamilyIds<R extends AnyResource> = R extends AnyResource
  ? Extract<
      | `${R['noun']}.${'list' | 'export' | 'get' | 'create' | 'update' | 'delete' | 'delete_all'}`
      | `${R['noun']}.${keyof R['relationCommands'] & string}`,
      keyof AllHandlers
    >
  : never;

/** The seven handlers of a generic family and its relations' verbs, keyed by command id. */
export function familyHandlers<R extends AnyResource>(
  store: FamilyStore<R>,
): Pick<AllHandlers, FamilyIds<R>> {
  const { noun } = store.resource;
  type H = (ctx: HandlerContext, args: never) => Promise<unknown>;
  const s = store as unknown as FamilyStore<AnyResource>;
  // the audit log names this family's rows by their name column (engine/entity-names.ts)
  const name = store.columns.name?.expr;
  if (name) declareEntityNames(store.entity, tableNames(store.from, name));
  const handlers: Record<string, H> = {
    [`${noun}.list`]: (async (ctx: HandlerContext, args: ParsedListQuery) => {
      const c = readCtx(ctx);
      return runList(ctx.app.db, store, args, await visibleSql(s, c.caller, 'view'), {
        exactCountUpTo: ctx.app.config.listExactCount,
        estimates: ctx.app.estimates,
      });
    }) as H,

    /** The list's rows, all of them, streamed: the same plan (scope, filters, search, sort) as the list. */
    [`${noun}.export`]: (async (ctx: HandlerContext, args: ParsedListExportQuery) => {
      const c = readCtx(ctx);
      const plan = planList(store, args, await visibleSql(s, c.caller, 'view'));
      return exportReply(
        ctx.app,
        { load: store.load, lines: store.loadLines, record: store.resource.record },
        { from: plan.pageFrom, where: plan.where, keys: plan.keys, desc: plan.desc },
        args.format,
      );
    }) as H,

    [`${noun}.get`]: (async (ctx: HandlerContext, args: { id: number }) => {
      const c = readCtx(ctx);
      if (!(await rowIs(ctx.app.db, s, args.id, await visibleSql(s, c.caller, 'view'))))
        throw new AppError('item_not_found');
      return loadOne(ctx.app.db, store, args.id);
    }) as H,

    [`${noun}.create`]: (async (ctx: HandlerContext, args: Record<string, unknown>) => {
      const c = await familyCtx(ctx);
      const data = await ctx.app.db.transaction().execute(async (trx) => {
        const id = await s.create(trx, args as never, c);
        const rec = (await loadOne(trx, store, id)) as { id: number };
        await audit(trx, {
          projectId: c.caller.projectId,
          userId: c.caller.userId,
          action: 'create',
          entity: store.entity,
          entityId: id,
          ip: c.ip,
          data: { after: rec as object },
        });
        return rec;
      });
      await s.afterCreate?.(c, data.id, args as never);
      return { data: s.afterCreate ? await loadOne(ctx.app.db, store, data.id) : data };
    }) as H,

    [`${noun}.update`]: (async (ctx: HandlerContext, args: { id: number } & Record<string, unknown>) => {
      const c = await familyCtx(ctx);
      const { id, ...changes } = args;
      const data = await ctx.app.db.transaction().execute((trx) => updateRow(s, trx, c, id, changes));
      await s.afterUpdate?.(c, id, data.before, data.after);
      return { data: data.after };
    }) as H,

    [`${noun}.delete`]: (async (ctx: HandlerContext, args: { id: number } & Record<string, unknown>) => {
      const c = await familyCtx(ctx);
      const { id, ...options } = args;
      const gone = await ctx.app.db.transaction().execute(async (trx) => {
        await assertMay(trx, s, c.caller, id, 'delete', c);
        const before = await loadOne(trx, store, id);
        const kept = await s.remove(trx, id, c, options);
        if (kept)
          throw new AppError(
            'cant_perform_action',
            { reason: kept.reason, dependencies: kept.dependencies ?? {} },
            409,
          );
        await audit(trx, {
          projectId: c.caller.projectId,
          userId: c.caller.userId,
          action: 'delete',
          entity: store.entity,
          entityId: id,
          ip: c.ip,
          data: { before: before as object },
        });
        return before;
      });
      await s.afterRemove?.(c, id, gone as never);
      return { ok: true as const };
    }) as H,

    /** Each item on its own: the reply says exactly which went and why the others stayed. */
    [`${noun}.delete_all`]: (async (
      ctx: HandlerContext,
      args: { items: number[] } & Record<string, unknown>,
    ) => {
      const c = await familyCtx(ctx);
      const { items, dry_run: dryRun, ...options } = args as typeof args & { dry_run?: boolean };
      const deleted: number[] = [];
      const not_deleted: Array<{ id: number; reason: string; dependencies?: Record<string, number> }> = [];
      for (const id of [...new Set(items)]) {
        try {
          const gone = await ctx.app.db.transaction().execute(async (trx) => {
            await assertMay(trx, s, c.caller, id, 'delete', c);
            const before = await loadOne(trx, store, id);
            const kept = await s.remove(trx, id, c, options);
            if (kept) throw Object.assign(new AppError('cant_perform_action'), { kept });
            await audit(trx, {
              projectId: c.caller.projectId,
              userId: c.caller.userId,
              action: 'delete',
              entity: store.entity,
              entityId: id,
              ip: c.ip,
              data: { before: before as object },
            });
            // a dry run did all a delete does, and rolls it back: its events with it (the outbox's rows)
            if (dryRun) throw DRY_RUN;
            return before;
          });
          deleted.push(id);
          await s.afterRemove?.(c, id, gone as never);
        } catch (err) {
          if (err === DRY_RUN) {
            deleted.push(id);
            continue;
          }
          if (!(err instanceof AppError)) throw err;
          const kept = (err as AppError & { kept?: Kept }).kept;
          not_deleted.push(
            kept ? { id, reason: kept.reason, dependencies: kept.dependencies } : { id, reason: err.key },
          );
        }
      }
      return { deleted, not_deleted };
    }) as H,
  };
  Object.assign(handlers, relationVerbHandlers(s));
  return handlers as unknown as Pick<AllHandlers, FamilyIds<R>>;
}

/**
 * An update of one row inside `trx`, as `<noun>.update` and the relation verbs make it: the caller's scope
 * and authority over the row, the placement of a move, the store's write, the audit entry.
 */
async function updateRow(
  s: FamilyStore<AnyResource>,
  trx: Transaction<DB>,
  c: FamilyCtx,
  id: number,
  changes: Record<string, unknown>,
): Promise<{ before: Record<string, unknown>; after: Record<string, unknown> }> {
  await assertMay(trx, s, c.caller, id, 'edit', c);
  const before: Record<string, unknown> = await loadOne(trx, s, id);
  // authority over what the row becomes: a move to another group is a placement, as on create
  if (movesGroups(s.resource, changes, before as Record<string, unknown>))
    await (s.placement
      ? s.placement(trx, changes, c.caller)
      : checkPlacement(s.resource, trx, changes, c.caller));
  // an empty PATCH changes nothing (and an empty SET is no SQL)
  if (Object.keys(changes).length) await s.update(trx, id, changes as never, c, before);
  const after: Record<string, unknown> = await loadOne(trx, s, id);
  await audit(trx, {
    projectId: c.caller.projectId,
    userId: c.caller.userId,
    action: 'update',
    entity: s.entity,
    entityId: id,
    ip: c.ip,
    data: { before: before as object, after: after as object },
  });
  return { before, after };
}

/**
 * The add and remove verbs of each many-to-many relation of the family (`Resource.relationVerbs`): the row
 * locked, the ids checked (each a row of the caller's project, else `invalid_related_entity`), the new list
 * computed from the stored one and, when it differs, written as an update of that list alone — so the scope,
 * the authority, the placement of a groups relation, the store's own checks and the audit are the update's.
 * A list that is already so changes nothing and writes no audit entry.
 */
function relationVerbHandlers(s: FamilyStore<AnyResource>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const verbs of s.resource.relationVerbs) {
    const rel = relationsOf(s.resource).find((r) => r.key === verbs.key)!;
    const field = (s.resource.updateArgs.shape as Record<string, ZodType | undefined>)[verbs.key];
    for (const verb of ['add', 'remove'] as const)
      out[verbs[verb].id] = async (ctx: HandlerContext, args: { id: number } & Record<string, unknown>) => {
        const c = await familyCtx(ctx);
        const ids = [...new Set(args[verbs.key] as number[])];
        const data = await ctx.app.db.transaction().execute(async (trx) => {
          await assertMay(trx, s, c.caller, args.id, 'edit', c);
          // one change of a row's list at a time: two adds at once both land
          await sql`select t.id from ${s.from} where t.id = ${args.id} for update of t`.execute(trx);
          await assertRelated(trx, s.resource, c.caller.projectId, { [verbs.key]: ids });
          const stored = await relatedIds(trx, rel, args.id);
          const next =
            verb === 'add'
              ? [...stored, ...ids.filter((i) => !stored.includes(i))]
              : stored.filter((i) => !ids.includes(i));
          if (next.length === stored.length) return { after: await loadOne(trx, s, args.id) };
          // the list it becomes is one the update would take (a rule's at least one device, a maximum)
          if (field) parseInput(z.object({ [verbs.key]: field }), { [verbs.key]: next });
          return updateRow(s, trx, c, args.id, { [verbs.key]: next });
        });
        if ('before' in data) await s.afterUpdate?.(c, args.id, data.before, data.after);
        return { data: data.after };
      };
  }
  return out;
}

export type { ZodObject };

/** Thrown to roll back a dry run's transaction once it has done all the delete would. */
const DRY_RUN = Symbol('dry run');
