import { sql, type Kysely, type Transaction } from 'kysely';
import { DeviceSettings } from '@lintel/commands';
import type { ServerContext } from '../context';
import type { DB } from '../db/schema';
import { AppError } from '../errors';
import { DeviceTaskChangedEvent } from '../events/define';
import { z } from 'zod';
import type { JobRow } from '../jobs/queue';
import { defineJob } from '../jobs/define';
import type { DeviceRequest } from './gateway';
import { notifyAboutDevice } from './notices';
import {
  applyBatchOutcome,
  isBatch,
  isInventory,
  markChanged,
  releaseTasks,
  replaceFromInventory,
  type EntitiesRequest,
} from '../access-sync/ledger';
import { sendBatch, readInventory } from '../access-sync/send';
import { scheduleReplan } from '../access-sync/replan';

/** The job kind that sends one device task through the gateway. */
export const DEVICE_TASK_JOB = 'device.task';

export type DeviceTaskKind = 'settings' | 'restart' | 'reinit' | 'init' | 'entities';
export type DeviceTaskState = 'new' | 'queued' | 'started' | 'stopped' | 'error' | 'completed' | 'waiting';

/** The request id a task's every send carries: the device applies a request id once (idempotent). */
export const taskRequestId = (taskId: number): string => `task-${taskId}`;

/**
 * What each kind sends, over the protocol of ../shared/DEVICES.md (docs/decisions.md "Device tasks" and
 * "Device commands, the rest"): `init` is reinit with the management section. An `entities` task is not one
 * request but requests of the identifier API (`EntitiesRequest`, access-sync/ledger.ts): a batch of the
 * difference the planner made, or the reading of the device's lists (a full resync) — never a `replace`.
 */
export function taskRequest(
  kind: Exclude<DeviceTaskKind, 'entities'>,
  settings: unknown,
  extra: { management?: unknown } = {},
): DeviceRequest {
  switch (kind) {
    case 'init':
      return {
        method: 'PUT',
        uri: '/api/v1/settings',
        body: { ...(settings as object), management: extra.management, replace: true },
      };
    case 'settings':
      return { method: 'PUT', uri: '/api/v1/settings', body: settings };
    case 'reinit':
      return { method: 'PUT', uri: '/api/v1/settings', body: { ...(settings as object), replace: true } };
    case 'restart':
      return { method: 'POST', uri: '/api/v1/system/reboot/run', body: {} };
  }
}

type Q = Kysely<DB> | Transaction<DB>;

interface TaskRow {
  id: number;
  project_id: number;
  device_id: number;
  domain_id: number;
  kind: DeviceTaskKind;
  request: DeviceRequest | EntitiesRequest;
  state: DeviceTaskState;
  attempts: number;
  error: string | null;
}

/** Sets tasks' state and emits the change for each (in the caller's transaction). */
async function setState(
  app: ServerContext,
  q: Q,
  where: ReturnType<typeof sql<boolean>>,
  state: DeviceTaskState,
  extra: { error?: string | null; started?: boolean } = {},
): Promise<TaskRow[]> {
  const now = app.clock.now();
  const r = await sql<TaskRow>`update device_tasks set state = ${state}, updated_at = ${now},
      attempts = attempts + ${extra.started ? 1 : 0},
      error = case when ${extra.error !== undefined} then ${extra.error ?? null} else error end,
      completed_at = case when ${state === 'completed'} then ${now}::timestamptz else completed_at end
    where ${where}
    returning id, project_id, device_id, domain_id, kind, state, attempts, error`.execute(q);
  // a batch that will not be sent leaves what it carried of unknown outcome (access-sync/ledger.ts)
  if (state === 'error' || state === 'stopped')
    await releaseTasks(
      q,
      r.rows.filter((t) => t.kind === 'entities').map((t) => Number(t.id)),
    );
  for (const t of r.rows)
    await app.outbox.emit(q, DeviceTaskChangedEvent, {
      taskId: t.id,
      deviceId: t.device_id,
      projectId: t.project_id,
      domainId: t.domain_id,
      kind: t.kind,
      state,
      error: t.error,
      attempts: t.attempts,
      at: now.toISOString(),
    });
  return r.rows;
}

/**
 * Moves a device's queue on, in the caller's transaction: if none of its tasks is being sent, the oldest open
 * one is queued (its job enqueued) when the device is online, and every open one waits when it is offline.
 * The device's row is locked, so this and the online transition (status.ts, which locks it too) agree.
 */
export async function advance(app: ServerContext, trx: Transaction<DB>, deviceId: number): Promise<void> {
  const d = await sql<{
    status: string;
  }>`select status from devices where id = ${deviceId} for update`.execute(trx);
  const device = d.rows[0];
  if (!device) return;
  const busy = await sql`select 1 from device_tasks where device_id = ${deviceId}
    and state in ('queued', 'started') limit 1`.execute(trx);
  if (busy.rows.length) return;
  if (device.status !== 'online') {
    await setState(app, trx, sql<boolean>`device_id = ${deviceId} and state = 'new'`, 'waiting');
    return;
  }
  const next = await sql<{ id: number }>`select id from device_tasks where device_id = ${deviceId}
    and state in ('new', 'waiting') order by id limit 1`.execute(trx);
  const head = next.rows[0];
  if (!head) return;
  // the rest are behind it again, not waiting for the device
  await setState(
    app,
    trx,
    sql<boolean>`device_id = ${deviceId} and state = 'waiting' and id <> ${head.id}`,
    'new',
  );
  await setState(app, trx, sql<boolean>`id = ${head.id}`, 'queued');
  await app.jobs.enqueue(trx, DEVICE_TASK_JOB, { taskId: head.id });
}

/** A new task for a device, in the caller's transaction (with the change it carries); its id. */
export async function createTask(
  app: ServerContext,
  trx: Transaction<DB>,
  deviceId: number,
  kind: DeviceTaskKind,
  createdBy: number | null,
  /** an entities task's requests (the planner's batch); default: the reading of the device's lists */
  entities: EntitiesRequest = { inventory: true },
): Promise<number> {
  const d = await sql<{
    project_id: number;
    domain_id: number;
    protocol: string;
    management: unknown;
    device_settings: unknown;
  }>`select project_id, domain_id, protocol, management, device_settings from devices
    where id = ${deviceId}`.execute(trx);
  const device = d.rows[0];
  if (!device) throw new AppError('item_not_found');
  // the platform does not talk to it: nothing can be sent
  if (device.protocol === 'none') throw new AppError('device_protocol_none');
  const settings = DeviceSettings.parse(device.device_settings ?? {});
  const request =
    kind === 'entities' ? entities : taskRequest(kind, settings, { management: device.management });
  const now = app.clock.now();
  const r = await sql<{ id: number }>`insert into device_tasks
      (project_id, device_id, domain_id, kind, request, state, created_by, created_at, updated_at)
    values (${device.project_id}, ${deviceId}, ${device.domain_id}, ${kind},
      ${JSON.stringify(request)}::jsonb, 'new', ${createdBy}, ${now}, ${now})
    returning id`.execute(trx);
  const id = Number(r.rows[0]!.id);
  await app.outbox.emit(trx, DeviceTaskChangedEvent, {
    taskId: id,
    deviceId,
    projectId: device.project_id,
    domainId: device.domain_id,
    kind,
    state: 'new',
    error: null,
    attempts: 0,
    at: now.toISOString(),
  });
  await advance(app, trx, deviceId);
  return id;
}

/** A finished, failed or stopped task is queued again (the "restart queue" of the spec). */
export async function retryTask(app: ServerContext, trx: Transaction<DB>, taskId: number): Promise<void> {
  const p = await sql<{
    protocol: string;
  }>`select d.protocol from device_tasks t join devices d on d.id = t.device_id
    where t.id = ${taskId}`.execute(trx);
  if (p.rows[0]?.protocol === 'none') throw new AppError('device_protocol_none');
  const r = await setState(app, trx, sql<boolean>`id = ${taskId} and state in ('error', 'stopped')`, 'new', {
    error: null,
  });
  if (r[0]) await advance(app, trx, r[0].device_id);
  // a batch sent again after later ones: the devices are planned again once it is through (ledger.ts)
}

/**
 * The device's protocol became none: its open tasks are stopped (with `device_protocol_none`), as nothing
 * can reach it; how many.
 */
export async function stopAllOf(app: ServerContext, trx: Transaction<DB>, deviceId: number): Promise<number> {
  const r = await setState(
    app,
    trx,
    sql<boolean>`device_id = ${deviceId} and state in ('new', 'queued', 'started', 'waiting')`,
    'stopped',
    { error: 'device_protocol_none' },
  );
  return r.length;
}

/** A task not yet acknowledged is stopped: it is not sent again; the device's next task goes on. */
export async function stopTask(app: ServerContext, trx: Transaction<DB>, taskId: number): Promise<void> {
  const r = await setState(
    app,
    trx,
    sql<boolean>`id = ${taskId} and state in ('new', 'queued', 'started', 'waiting')`,
    'stopped',
  );
  if (r[0]) await advance(app, trx, r[0].device_id);
}

const isSuccess = (status: number) => status >= 200 && status < 300;

/**
 * The job that sends one task (`device.task`): the device offline, the task waits (and is queued again when
 * the device comes online, status.ts); otherwise it is sent with its request id and completed only on the
 * device's reply. No reply (or a 5xx) is retried by the job queue with back-off; after the last attempt the
 * task is `error` with the catalogue code. A 4xx reply is the device refusing it: `error` at once.
 */
export function defineDeviceTaskJob(app: ServerContext): void {
  app.jobs.define(DeviceTaskJob, { maxAttempts: app.config.mqtt.taskAttempts });
}

/** `device.task`: the platform delivering a change already made (the user who made it passed its gates then). */
export const DeviceTaskJob = defineJob({
  kind: DEVICE_TASK_JOB,
  payload: z.object({ taskId: z.number().int() }),
  run: (ctx, { taskId }, job) => runTask(ctx.app, taskId, job),
});

async function runTask(app: ServerContext, taskId: number, job: JobRow): Promise<void> {
  const t =
    await sql<TaskRow>`select id, project_id, device_id, domain_id, kind, request, state, attempts, error
    from device_tasks where id = ${taskId}`.execute(app.db);
  const task = t.rows[0];
  // stopped, or already done by an earlier run whose outcome this one repeats
  if (!task || (task.state !== 'queued' && task.state !== 'started')) return;
  const d = await sql<{
    serial_number: string;
    protocol: string;
    status: string;
    ip_address: string | null;
    port: number;
  }>`select serial_number, protocol, status, ip_address, port from devices where id = ${task.device_id}`.execute(
    app.db,
  );
  const device = d.rows[0];
  if (!device) return;
  /** `anyway`: the platform has no broker (not the device's fault): wait for the reconnection whatever the device's status */
  const toWaiting = (anyway = false) =>
    app.db.transaction().execute(async (trx) => {
      const s = await sql<{
        status: string;
      }>`select status from devices where id = ${task.device_id} for update`.execute(trx);
      // it came online meanwhile: send it now (a retry at once), else it waits for the online transition
      if (s.rows[0]?.status === 'online' && !anyway) return false;
      await setState(
        app,
        trx,
        sql<boolean>`device_id = ${task.device_id} and (id = ${taskId} or state = 'new') and state not in ('completed', 'error', 'stopped')`,
        'waiting',
      );
      return true;
    });
  if (device.status !== 'online') {
    if (await toWaiting()) return;
  }
  const started = await app.db.transaction().execute((trx) =>
    setState(app, trx, sql<boolean>`id = ${taskId} and state in ('queued', 'started')`, 'started', {
      started: true,
    }),
  );
  if (!started.length) return;
  let failure: AppError;
  try {
    if (task.kind === 'entities') {
      const target = { ...device, status: 'online' };
      const now = () => app.clock.now();
      if (isBatch(task.request)) {
        // every request of the batch answered (a refusal is an item's, not the task's)
        const outcomes = await sendBatch(app, target, taskId, task.request.batch);
        await app.db.transaction().execute(async (trx) => {
          const done = await setState(
            app,
            trx,
            sql<boolean>`id = ${taskId} and state = 'started'`,
            'completed',
            {
              error: null,
            },
          );
          if (!done.length) return;
          if (await applyBatchOutcome(trx, task, outcomes, now())) await markChanged(trx, task.project_id);
          await advance(app, trx, task.device_id);
        });
        return;
      }
      if (!isInventory(task.request)) {
        await finish(app, task, 'wrong_parameters');
        return;
      }
      const held = await readInventory(app, target, taskId);
      if ('refused' in held) {
        await finish(app, task, 'device_not_available');
        return;
      }
      await app.db.transaction().execute(async (trx) => {
        const done = await setState(
          app,
          trx,
          sql<boolean>`id = ${taskId} and state = 'started'`,
          'completed',
          {
            error: null,
          },
        );
        if (!done.length) return;
        // what it holds is the ledger now; the planner sends the difference from it (removing the rest by name)
        await replaceFromInventory(trx, task.device_id, held);
        await markChanged(trx, task.project_id);
        await advance(app, trx, task.device_id);
      });
      return;
    }
    const reply = await app.devices.request(
      { ...device, status: 'online' },
      { ...(task.request as DeviceRequest), requestId: taskRequestId(taskId) },
    );
    if (isSuccess(reply.status)) {
      await app.db.transaction().execute(async (trx) => {
        const done = await setState(
          app,
          trx,
          sql<boolean>`id = ${taskId} and state = 'started'`,
          'completed',
          {
            error: null,
          },
        );
        if (!done.length) return;
        await advance(app, trx, task.device_id);
      });
      return;
    }
    failure = new AppError('device_not_available', { status: reply.status });
    // the device refused it (4xx): sending it again would not change its answer
    if (reply.status < 500) {
      await finish(app, task, failure.key);
      return;
    }
  } catch (err) {
    failure = err instanceof AppError ? err : new AppError('device_not_available');
    if (failure.key === 'device_offline' && (await toWaiting())) return;
    // the platform lost its broker: the attempt is not the device's; the task waits for the reconnection
    // (`resumeWaiting`) rather than spending its retries while the broker is down
    if (failure.data?.reason === 'broker' && (await toWaiting(true))) {
      // the broker came back while this attempt failed: the reconnection's `resumeWaiting` may have looked
      // before this task waited, and would leave it waiting for a reconnection already past (a restarted
      // server's panel sync stalled so). Connected now: it goes on as the reconnection would have sent it.
      if (app.devices.connected)
        await app.outbox.transaction(app.db, (trx) => advance(app, trx, task.device_id));
      return;
    }
  }
  const last = job.attempts >= job.max_attempts;
  if (last) await finish(app, task, failure.key);
  else
    await app.db.transaction().execute((trx) =>
      setState(app, trx, sql<boolean>`id = ${taskId} and state = 'started'`, 'queued', {
        error: failure.key,
      }),
    );
  throw failure;
}

/**
 * The device said it is online (it connected, or came back): the task it has in flight, if that waits out a
 * back-off after a failed attempt, is sent now rather than at its back-off's end — the attempt failed because
 * the device was not there, and now it is (a server restarted under it, a panel rebooted).
 */
export async function retryNow(app: ServerContext, trx: Transaction<DB>, deviceId: number): Promise<void> {
  const now = app.clock.now();
  const r = await sql`update jobs set run_at = ${now}, updated_at = ${now}
    where kind = ${DEVICE_TASK_JOB} and state = 'waiting' and run_at > ${now}
      and (payload->>'taskId')::bigint in (select id from device_tasks where device_id = ${deviceId}
        and state in ('queued', 'started'))`.execute(trx);
  if (Number(r.numAffectedRows ?? 0) > 0) setImmediate(() => app.jobs.wake());
}

/**
 * The platform is connected to its broker again (devices/gateway.ts): the tasks that waited for it go on, for
 * every mqtt device that is online (the others wait for their own online transition, as before).
 */
export async function resumeWaiting(app: ServerContext): Promise<number> {
  const r = await sql<{ device_id: number }>`select distinct t.device_id from device_tasks t
    join devices d on d.id = t.device_id
    where t.state = 'waiting' and d.protocol = 'mqtt' and d.status = 'online'`.execute(app.db);
  for (const { device_id } of r.rows)
    await app.outbox.transaction(app.db, (trx) => advance(app, trx, device_id));
  return r.rows.length;
}

/** The task ends in `error` with the code; the device's next task goes on. */
async function finish(app: ServerContext, task: TaskRow, code: string): Promise<void> {
  await app.db.transaction().execute(async (trx) => {
    const r = await setState(app, trx, sql<boolean>`id = ${task.id} and state = 'started'`, 'error', {
      error: code,
    });
    if (!r.length) return;
    // a batch of the identifier API: what it carried is sent again by a plan after a back-off
    if (task.kind === 'entities') await scheduleReplan(app, trx, task);
    // the users the device's groups name for failed tasks hear of it, with the task's kind and code
    await notifyAboutDevice(app, trx, task.device_id, 'device_task_failed', {
      status: `${task.kind}: ${code}`,
      has_error: true,
    });
    await advance(app, trx, task.device_id);
  });
}
