import { sql, type Kysely, type Transaction } from 'kysely';
import type { ServerContext } from '../context';
import type { DB } from '../db/schema';

/** The kinds of entity an `entities` task carries to a device (spec part 2 §7 "sync errors"). */
export type DeviceEntity = 'identifier' | 'schedule';

/** One entity as the device is sent it: `key` is how the device names it back (an identifier's `uid`). */
export type EntityItem = { key: string } & Record<string, unknown>;

/**
 * Where a kind of entity comes from for one device: the access-control issue adds its identifiers and
 * schedules here (`addEntitySource`); until then a device is sent empty lists.
 */
export interface EntitySource {
  entity: DeviceEntity;
  items(
    q: Kysely<DB> | Transaction<DB>,
    device: { id: number; project_id: number; domain_id: number },
  ): Promise<EntityItem[]>;
}

const sources = new WeakMap<ServerContext, EntitySource[]>();

/** Adds where a kind of entity comes from (for this server). */
export function addEntitySource(app: ServerContext, source: EntitySource): void {
  sources.set(app, [...(sources.get(app) ?? []), source]);
}

/** The body of an entities task: every entity the device must hold, by kind (it replaces what it held). */
export async function entitiesBody(
  app: ServerContext,
  q: Kysely<DB> | Transaction<DB>,
  device: { id: number; project_id: number; domain_id: number },
): Promise<{ identifiers: EntityItem[]; schedules: EntityItem[]; replace: true }> {
  const body = { identifiers: [] as EntityItem[], schedules: [] as EntityItem[], replace: true as const };
  for (const s of sources.get(app) ?? [])
    (s.entity === 'identifier' ? body.identifiers : body.schedules).push(...(await s.items(q, device)));
  return body;
}

interface ItemError {
  key: string;
  error: string;
}

/** The per-item errors of a device's reply (`{errors: {identifiers: [{key, error}], schedules: [...]}}`). */
function errorsOf(body: unknown): Array<ItemError & { entity: DeviceEntity }> {
  const errors = (body as { errors?: Record<string, unknown> } | null)?.errors;
  if (typeof errors !== 'object' || errors === null) return [];
  const out: Array<ItemError & { entity: DeviceEntity }> = [];
  for (const [field, entity] of [
    ['identifiers', 'identifier'],
    ['schedules', 'schedule'],
  ] as const) {
    const list = errors[field];
    if (!Array.isArray(list)) continue;
    for (const e of list.slice(0, 10_000) as unknown[]) {
      const item = e as { key?: unknown; error?: unknown };
      if (typeof item?.key !== 'string' || !item.key) continue;
      out.push({
        entity,
        key: item.key.slice(0, 255),
        error: typeof item.error === 'string' && item.error ? item.error.slice(0, 1000) : 'refused',
      });
    }
  }
  return out;
}

/**
 * A device answered an entities task: what it refused replaces the device's sync errors (what it took is
 * no longer an error), in the caller's transaction.
 */
export async function recordSyncErrors(
  app: ServerContext,
  trx: Transaction<DB>,
  task: { id: number; project_id: number; device_id: number },
  replyBody: unknown,
): Promise<number> {
  await sql`delete from device_sync_errors where device_id = ${task.device_id}`.execute(trx);
  const errors = errorsOf(replyBody);
  const now = app.clock.now();
  for (const e of errors)
    await sql`insert into device_sync_errors (project_id, device_id, entity, item_key, error, task_id, created_at)
      values (${task.project_id}, ${task.device_id}, ${e.entity}, ${e.key}, ${e.error}, ${task.id}, ${now})
      on conflict (device_id, entity, item_key) do update set error = excluded.error`.execute(trx);
  return errors.length;
}
