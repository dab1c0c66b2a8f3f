/**
 * The device sync's planner (issue 21 item 4; docs/decisions.md "Access control: the sync to the devices").
 *
 * A change to what devices must hold (an identifier, a rule or its relations, a schedule, a holiday, a group
 * membership, a revoke…) leaves a row in `access_sync_changes`, written by a trigger in the change's own
 * transaction (migration 0058). The planner takes a project's rows, reads its access control whole
 * (`loadProjectAccess`), derives what each device must hold (`wantedAt` of @lintel/core), compares it with
 * the device's ledger by digest, and writes — in one transaction with the ledger's new state — `entities`
 * device tasks of at most `batchSize` requests each carrying only the difference. A restart between two
 * plans plans nothing twice (the ledger says what the tasks carry); a change committed while a plan runs
 * leaves its row for the next one.
 */
import { sql, type Transaction } from 'kysely';
import { IDENTIFIER_ITEM_URI, TIME_PROFILE_URI, wantedAt, type DeviceHolding } from '@lintel/core';
import type { ServerContext } from '../context';
import type { DB } from '../db/schema';
import { accessSyncConfig } from './config';
import { createTask } from '../devices/tasks';
import { loadProjectAccess, type ProjectAccess } from './load';
import { AccessCache } from './acs';
import {
  digestOf,
  identifierPutBody,
  profilePutBody,
  readLedger,
  upsertLedger,
  type BatchItem,
  type LedgerRow,
} from './ledger';

/** The advisory lock of a project's planner (one plan of a project at a time, across instances): "ACSP". */
const PLANNER_LOCK = 0x41435350;

const path = (base: string, key: string) => `${base}/${encodeURIComponent(key)}`;

/**
 * The requests that take a device from what its ledger says it holds to what it must hold, in the order of
 * `diffDeviceAccess`: profiles it lacks, identifiers to remove, identifiers it lacks or holds otherwise,
 * profiles no longer named. Compared by digest; a row with no digest (body unknown) is sent again.
 */
export function planDevice(
  want: DeviceHolding,
  ledger: readonly LedgerRow[],
  digests: Map<string, string> = new Map(),
): BatchItem[] {
  const held = new Map<string, LedgerRow>();
  for (const r of ledger) if (r.state !== 'delete') held.set(`${r.kind}:${r.key}`, r);
  const cachedDigest = (body: Record<string, unknown>) => {
    const text = JSON.stringify(body);
    let d = digests.get(text);
    if (d === undefined) {
      d = digestOf(body);
      digests.set(text, d);
    }
    return d;
  };
  const profilePuts: BatchItem[] = [];
  const wantedProfiles = new Set<string>();
  for (const p of [...want.time_profiles].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))) {
    wantedProfiles.add(p.key);
    const body = profilePutBody(p);
    const digest = cachedDigest(body);
    if (held.get(`profile:${p.key}`)?.digest !== digest)
      profilePuts.push({
        method: 'PUT',
        uri: path(TIME_PROFILE_URI, p.key),
        body,
        kind: 'profile',
        key: p.key,
        digest,
      });
  }
  const wantedIds = new Set<string>();
  const idPuts: BatchItem[] = [];
  for (const i of [...want.identifiers].sort((a, b) => (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0))) {
    wantedIds.add(i.uid);
    const body = identifierPutBody(i);
    const digest = cachedDigest(body);
    if (held.get(`identifier:${i.uid}`)?.digest !== digest)
      idPuts.push({
        method: 'PUT',
        uri: path(IDENTIFIER_ITEM_URI, i.uid),
        body,
        kind: 'identifier',
        key: i.uid,
        digest,
      });
  }
  const idDeletes: BatchItem[] = [];
  const profileDeletes: BatchItem[] = [];
  for (const r of [...held.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))) {
    if (r.kind === 'identifier' && !wantedIds.has(r.key))
      idDeletes.push({
        method: 'DELETE',
        uri: path(IDENTIFIER_ITEM_URI, r.key),
        kind: 'identifier',
        key: r.key,
        digest: null,
      });
    if (r.kind === 'profile' && !wantedProfiles.has(r.key))
      profileDeletes.push({
        method: 'DELETE',
        uri: path(TIME_PROFILE_URI, r.key),
        kind: 'profile',
        key: r.key,
        digest: null,
      });
  }
  return [...profilePuts, ...idDeletes, ...idPuts, ...profileDeletes];
}

/** What a device must hold now (devices that take nothing from the platform — protocol none — hold nothing). */
export function wantedOf(data: ProjectAccess, deviceId: number): DeviceHolding {
  return wantedAt(
    deviceId,
    data.index,
    data.identifiers.values(),
    data.schedules,
    data.tz,
    data.holidaysAt(deviceId),
  );
}

export interface PlanOutcome {
  /** the change rows taken */
  changes: number;
  devices: number;
  tasks: number;
  requests: number;
}

/** Plans one project: the devices whose holding differs get tasks with the difference. */
export async function planProject(app: ServerContext, projectId: number): Promise<PlanOutcome> {
  const cfg = accessSyncConfig(app);
  return app.outbox.transaction(app.db, async (trx) => {
    await sql`select pg_advisory_xact_lock(${PLANNER_LOCK}, ${projectId})`.execute(trx);
    // the changes taken are committed ones: the data read next holds them; one committing later keeps its row
    const taken = await sql<{ id: number }>`delete from access_sync_changes where project_id = ${projectId}
        returning id`.execute(trx);
    const out: PlanOutcome = { changes: taken.rows.length, devices: 0, tasks: 0, requests: 0 };
    const data = await loadProjectAccess(trx, projectId);
    app.accessSync.forget(projectId);
    const digests = new Map<string, string>();
    for (const device of data.devices) {
      if (device.protocol === 'none') continue;
      const ledger = await readLedger(trx, device.id);
      if (!ledger.length && !data.index.rulesOfDevice(device.id).length) continue;
      const items = planDevice(wantedOf(data, device.id), ledger, digests);
      if (!items.length) continue;
      out.devices++;
      out.requests += items.length;
      out.tasks += await writeTasks(app, trx, device.id, items, cfg.batchSize);
    }
    return out;
  });
}

/** The difference as device tasks of `batchSize` requests, and the ledger's new state, in the transaction. */
async function writeTasks(
  app: ServerContext,
  trx: Transaction<DB>,
  deviceId: number,
  items: readonly BatchItem[],
  batchSize: number,
): Promise<number> {
  const size = Math.max(1, Math.floor(batchSize));
  let tasks = 0;
  for (let i = 0; i < items.length; i += size) {
    const batch = items.slice(i, i + size);
    const taskId = await createTask(app, trx, deviceId, 'entities', null, { batch });
    tasks++;
    await upsertLedger(
      trx,
      deviceId,
      batch.map((b) => ({
        kind: b.kind,
        key: b.key,
        digest: b.digest,
        state: b.method === 'DELETE' ? 'delete' : 'put',
        task_id: taskId,
      })),
    );
  }
  return tasks;
}

/**
 * The planner of this instance: every `pollMs` it plans the projects with changes (`poll`, which tests and
 * commands call too). Several instances may poll: the planner's lock makes one plan a project at a time, and
 * the other finds its changes taken.
 */
export class AccessSync {
  private timer: NodeJS.Timeout | null = null;
  private polling: Promise<PlanOutcome[]> | null = null;
  private again = false;
  private readonly cache = new AccessCache();

  constructor(private readonly contextOf: () => ServerContext) {}

  /** A project's access control as last read (again when planned since, or after a few seconds). */
  access(q: Transaction<DB> | ServerContext['db'], projectId: number): Promise<ProjectAccess> {
    return this.cache.get(q, projectId);
  }

  /** The project's access control changed: read it again next time. */
  forget(projectId: number): void {
    this.cache.forget(projectId);
  }

  /** Plans every project with changes now; the outcome per project. */
  poll(): Promise<PlanOutcome[]> {
    if (this.polling) {
      this.again = true;
      return this.polling;
    }
    this.polling = (async () => {
      const app = this.contextOf();
      const all: PlanOutcome[] = [];
      do {
        this.again = false;
        const r = await sql<{
          project_id: number;
        }>`select distinct project_id from access_sync_changes`.execute(app.db);
        for (const { project_id } of r.rows) all.push(await planProject(app, Number(project_id)));
      } while (this.again);
      return all;
    })().finally(() => (this.polling = null));
    return this.polling;
  }

  start(): void {
    const ms = accessSyncConfig(this.contextOf()).pollMs;
    if (ms <= 0) return;
    this.timer = setInterval(() => {
      if (this.polling) return;
      void this.poll().catch((err: Error) =>
        this.contextOf().log.error({ err: err.message }, 'access sync: planning failed'),
      );
    }, ms);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.polling?.catch(() => undefined);
  }
}
