/**
 * The ledger of what each device holds (migration 0058, `device_access_ledger`) and the requests of the
 * identifier API that carry a difference (../shared/DEVICES.md `/api/v1/access/identifier/item…`): how a
 * batch's outcome and a device's own list are written into it, and what a task that failed leaves there.
 */
import { createHash } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import { canonical, identifierBody, type DeviceIdentifierItem, type DeviceTimeProfile } from '@lintel/core';
import type { DB } from '../db/schema';

type Q = Kysely<DB> | Transaction<DB>;

export type LedgerKind = 'identifier' | 'profile';
export type LedgerState = 'held' | 'put' | 'delete' | 'refused';

/** One request of a batch, with what it means for the ledger. */
export interface BatchItem {
  method: 'PUT' | 'DELETE';
  uri: string;
  body?: unknown;
  kind: LedgerKind;
  key: string;
  /** the digest of the body a PUT sends */
  digest: string | null;
}

/** What an `entities` device task carries: a batch of the identifier API, or the reading of its lists. */
export type EntitiesRequest = { batch: BatchItem[] } | { inventory: true };

export const isBatch = (r: unknown): r is { batch: BatchItem[] } =>
  typeof r === 'object' && r !== null && Array.isArray((r as { batch?: unknown }).batch);
export const isInventory = (r: unknown): r is { inventory: true } =>
  typeof r === 'object' && r !== null && (r as { inventory?: unknown }).inventory === true;

/** The digest of a body as sent (its canonical JSON): 128 bits of SHA-256, base64url. */
export function digestOf(body: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify(canonical(body)))
    .digest('base64url')
    .slice(0, 22);
}

/** An identifier item's body as the platform sends it with `PUT …/item/{uid}` (uid and the platform's fields). */
export const identifierPutBody = (i: DeviceIdentifierItem): Record<string, unknown> =>
  canonical({ uid: i.uid, ...identifierBody(i) }) as Record<string, unknown>;

const PROFILE_FIELDS = [
  'key',
  'name',
  'time_zone',
  'valid_from',
  'valid_to',
  'repeat_mode',
  'days',
  'from',
  'to',
  'holidays',
] as const;
/** A time profile's body as the platform sends it (only its own fields: a device may add some). */
export const profilePutBody = (p: DeviceTimeProfile): Record<string, unknown> =>
  canonical(Object.fromEntries(PROFILE_FIELDS.map((f) => [f, p[f]]))) as Record<string, unknown>;

export interface LedgerRow {
  kind: LedgerKind;
  key: string;
  digest: string | null;
  state: LedgerState;
  task_id: number | null;
}

export async function readLedger(q: Q, deviceId: number): Promise<LedgerRow[]> {
  const r = await sql<LedgerRow>`select kind, key, digest, state, task_id from device_access_ledger
    where device_id = ${deviceId}`.execute(q);
  return r.rows;
}

const CHUNK = 1000;

/** Writes ledger rows (insert or replace), in chunks. */
export async function upsertLedger(
  q: Q,
  deviceId: number,
  rows: ReadonlyArray<{
    kind: LedgerKind;
    key: string;
    digest: string | null;
    state: LedgerState;
    task_id: number | null;
  }>,
): Promise<void> {
  for (let i = 0; i < rows.length; i += CHUNK) {
    const chunk = rows.slice(i, i + CHUNK);
    await sql`insert into device_access_ledger (device_id, kind, key, digest, state, task_id)
      values ${sql.join(chunk.map((r) => sql`(${deviceId}, ${r.kind}, ${r.key}, ${r.digest}, ${r.state}, ${r.task_id})`))}
      on conflict (device_id, kind, key) do update set
        digest = case when excluded.state = 'delete' then device_access_ledger.digest else excluded.digest end,
        state = excluded.state, task_id = excluded.task_id`.execute(q);
  }
}

/** The identifier an item's uid names (`identifier-{id}`), or null for an item not of the platform. */
export function identifierIdOf(uid: string): number | null {
  const m = /^identifier-([1-9][0-9]{0,9})$/.exec(uid);
  const id = m ? Number(m[1]) : NaN;
  return Number.isSafeInteger(id) && id <= 2_147_483_647 ? id : null;
}

const entityOf = (kind: LedgerKind) => (kind === 'identifier' ? 'identifier' : 'schedule');

/** The outcome of one request of a batch: applied (2xx, or a DELETE of what it does not hold), or refused. */
export interface ItemOutcome {
  item: BatchItem;
  ok: boolean;
  /** the device's reason for a refusal */
  error?: string;
}

/**
 * A batch task the device answered, in the caller's transaction: what it applied is held (or gone), what it
 * refused is `refused` and a sync error of the device; what it applied is no longer one. Rows a later task
 * carries again are left to it. True when a row not of this task was written (the task ran again after a
 * later one): the devices are planned again, so the latest difference is sent after it.
 */
export async function applyBatchOutcome(
  trx: Transaction<DB>,
  task: { id: number; project_id: number; device_id: number },
  outcomes: readonly ItemOutcome[],
  now: Date,
): Promise<boolean> {
  const rows = await readLedgerKeys(
    trx,
    task.device_id,
    outcomes.map((o) => o.item),
  );
  let foreign = false;
  const writes: Parameters<typeof upsertLedger>[2][number][] = [];
  const removes: BatchItem[] = [];
  for (const o of outcomes) {
    const row = rows.get(`${o.item.kind}:${o.item.key}`);
    // a later task carries this key again: its outcome will say
    if (row && row.task_id !== null && row.task_id !== task.id) continue;
    if (!row || row.task_id === null) foreign = true;
    if (o.item.method === 'DELETE') {
      if (o.ok) removes.push(o.item);
      else writes.push({ kind: o.item.kind, key: o.item.key, digest: null, state: 'held', task_id: null });
    } else
      writes.push({
        kind: o.item.kind,
        key: o.item.key,
        digest: o.item.digest,
        state: o.ok ? 'held' : 'refused',
        task_id: null,
      });
  }
  await upsertLedger(trx, task.device_id, writes);
  for (const kind of ['identifier', 'profile'] as const) {
    const keys = removes.filter((r) => r.kind === kind).map((r) => r.key);
    for (let i = 0; i < keys.length; i += CHUNK)
      await sql`delete from device_access_ledger where device_id = ${task.device_id} and kind = ${kind}
        and key in (${sql.join(keys.slice(i, i + CHUNK))})`.execute(trx);
  }
  // an item removed takes the device's pass counter with it: its passes are now the platform's only
  const gone = removes.filter((r) => r.kind === 'identifier').flatMap((r) => identifierIdOf(r.key) ?? []);
  for (let i = 0; i < gone.length; i += CHUNK)
    await sql`delete from identifier_device_passes where device_id = ${task.device_id}
      and identifier_id in (${sql.join(gone.slice(i, i + CHUNK))})`.execute(trx);
  // the sync errors: what it refused now is one, what it took is no longer
  for (const kind of ['identifier', 'profile'] as const) {
    const taken = outcomes.filter((o) => o.ok && o.item.kind === kind).map((o) => o.item.key);
    for (let i = 0; i < taken.length; i += CHUNK)
      await sql`delete from device_sync_errors where device_id = ${task.device_id} and entity = ${entityOf(kind)}
        and item_key in (${sql.join(taken.slice(i, i + CHUNK))})`.execute(trx);
  }
  const refused = outcomes.filter((o) => !o.ok);
  for (let i = 0; i < refused.length; i += CHUNK)
    await sql`insert into device_sync_errors (project_id, device_id, entity, item_key, error, task_id, created_at)
      values ${sql.join(
        refused
          .slice(i, i + CHUNK)
          .map(
            (o) =>
              sql`(${task.project_id}, ${task.device_id}, ${entityOf(o.item.kind)}, ${o.item.key.slice(0, 255)}, ${(o.error ?? 'refused').slice(0, 1000)}, ${task.id}, ${now})`,
          ),
      )}
      on conflict (device_id, entity, item_key) do update set error = excluded.error, task_id = excluded.task_id,
        created_at = excluded.created_at`.execute(trx);
  return foreign;
}

async function readLedgerKeys(
  q: Q,
  deviceId: number,
  items: readonly BatchItem[],
): Promise<Map<string, LedgerRow>> {
  const out = new Map<string, LedgerRow>();
  for (const kind of ['identifier', 'profile'] as const) {
    const keys = items.filter((i) => i.kind === kind).map((i) => i.key);
    for (let i = 0; i < keys.length; i += CHUNK) {
      const r = await sql<LedgerRow>`select kind, key, digest, state, task_id from device_access_ledger
        where device_id = ${deviceId} and kind = ${kind} and key in (${sql.join(keys.slice(i, i + CHUNK))})`.execute(
        q,
      );
      for (const row of r.rows) out.set(`${row.kind}:${row.key}`, row);
    }
  }
  return out;
}

/**
 * Batch tasks that will not be sent (failed after every attempt, stopped): what they carried is of unknown
 * outcome — the device may hold it or not. Their rows become `held` with no digest: the next difference sends
 * a wanted item again and removes an unwanted one again (both harmless when already so).
 */
export async function releaseTasks(q: Q, taskIds: readonly number[]): Promise<void> {
  if (!taskIds.length) return;
  await sql`update device_access_ledger set state = 'held', digest = null, task_id = null
    where task_id in (${sql.join(taskIds)})`.execute(q);
}

/**
 * A device's own lists (a full resync): what it holds becomes the ledger, item by item with the digest of
 * the body it shows; what it does not hold leaves the ledger — except the rows a task still open carries.
 */
export async function replaceFromInventory(
  trx: Transaction<DB>,
  deviceId: number,
  held: {
    identifiers: readonly DeviceIdentifierItem[];
    /** null: the device has no list of its profiles (they are kept as they are, body unknown) */
    time_profiles: readonly DeviceTimeProfile[] | null;
  },
): Promise<void> {
  const open = await sql<{ kind: LedgerKind; key: string }>`
    select l.kind, l.key from device_access_ledger l join device_tasks t on t.id = l.task_id
    where l.device_id = ${deviceId} and t.state in ('new', 'queued', 'started', 'waiting')`.execute(trx);
  const pending = new Set(open.rows.map((r) => `${r.kind}:${r.key}`));
  const keep = held.time_profiles === null ? sql`and kind <> 'profile'` : sql``;
  await sql`delete from device_access_ledger where device_id = ${deviceId} ${keep}
    and (task_id is null or task_id not in (select id from device_tasks
      where device_id = ${deviceId} and state in ('new', 'queued', 'started', 'waiting')))`.execute(trx);
  if (held.time_profiles === null)
    await sql`update device_access_ledger set digest = null, state = 'held'
      where device_id = ${deviceId} and kind = 'profile' and task_id is null`.execute(trx);
  const rows: Parameters<typeof upsertLedger>[2][number][] = [];
  for (const i of held.identifiers)
    if (typeof i?.uid === 'string' && !pending.has(`identifier:${i.uid}`)) {
      let digest: string | null = null;
      try {
        digest = digestOf(identifierPutBody(i));
      } catch {
        // an item the platform cannot read: held, body unknown
      }
      rows.push({ kind: 'identifier', key: i.uid, digest, state: 'held', task_id: null });
    }
  for (const p of held.time_profiles ?? [])
    if (typeof p?.key === 'string' && !pending.has(`profile:${p.key}`))
      rows.push({
        kind: 'profile',
        key: p.key,
        digest: digestOf(profilePutBody(p)),
        state: 'held',
        task_id: null,
      });
  // one row per key (a device listing a key twice)
  const unique = [...new Map(rows.map((r) => [`${r.kind}:${r.key}`, r])).values()];
  await upsertLedger(trx, deviceId, unique);
  // an item the device no longer holds took its pass counter with it (identifier_device_passes)
  const holds = held.identifiers.flatMap((i) =>
    typeof i?.uid === 'string' ? (identifierIdOf(i.uid) ?? []) : [],
  );
  await sql`delete from identifier_device_passes where device_id = ${deviceId}
    and identifier_id <> all(${sql.val(holds)}::int[])`.execute(trx);
}

/** Marks a project changed (a resync's list read, a batch that ran again): planned at the next poll. */
export async function markChanged(q: Q, projectId: number): Promise<void> {
  await sql`insert into access_sync_changes (project_id) values (${projectId})`.execute(q);
}
