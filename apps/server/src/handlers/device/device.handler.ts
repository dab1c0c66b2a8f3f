import { sql } from 'kysely';
import { deviceTopics, DeviceTiming } from '@lintel/core';
import { getCommand, type DeviceCredentials, type DeviceTask } from '@lintel/commands';
import { audit } from '../../audit/audit';
import { AppError } from '../../errors';
import {
  assertMay,
  callerOf,
  familyCtx,
  familyHandlers,
  visibleSql,
  type FamilyCtx,
} from '../../engine/family';
import { signedIn, type HandlerContext, type SomeHandlers } from '../../http/handler';
import { markOffline, markOnline } from '../../devices/status';
import { DEVICE_GATEWAY_PATH } from '../../devices/gateway';
import { createTask, retryTask, stopTask, type DeviceTaskKind } from '../../devices/tasks';
import type { Caller } from '../../engine/caller';
import { deviceStore, issuePassword } from './device.store';
import { queueBrokerAccount, queueBrokerReconcile } from '../../devices/dynsec';

interface StoredDevice {
  id: number;
  serial_number: string;
  password: string;
  protocol: 'http' | 'mqtt';
  status: string;
  ip_address: string | null;
  port: number;
}

const readStored = async (c: FamilyCtx, id: number): Promise<StoredDevice> => {
  const r = await sql<StoredDevice>`select id, serial_number, password, protocol, status, ip_address, port
    from devices where id = ${id}`.execute(c.app.db);
  if (!r.rows[0]) throw new AppError('item_not_found');
  return r.rows[0];
};

/** What the installer types into the device: shown only to those who may edit it (scope included). */
function credentialsOf(ctx: HandlerContext, d: StoredDevice): DeviceCredentials {
  return {
    protocol: d.protocol,
    login: d.serial_number,
    password: d.password,
    http_url: `${ctx.app.config.publicUrl}/api/v0${DEVICE_GATEWAY_PATH}`,
    mqtt: {
      url: ctx.app.devices.brokerUrl(),
      client_id: d.serial_number,
      topics: deviceTopics(d.serial_number),
    },
  };
}

interface TaskDbRow {
  id: number;
  device_id: number;
  device_name: string;
  serial_number: string;
  domain_id: number;
  kind: DeviceTask['kind'];
  state: DeviceTask['state'];
  attempts: number;
  error: string | null;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
}

const taskOf = (r: TaskDbRow): DeviceTask => ({
  id: r.id,
  device: { id: r.device_id, name: r.device_name, serial_number: r.serial_number },
  domain_id: r.domain_id,
  kind: r.kind,
  state: r.state,
  attempts: r.attempts,
  error: r.error,
  created_at: new Date(r.created_at).toISOString(),
  updated_at: new Date(r.updated_at).toISOString(),
  completed_at: r.completed_at ? new Date(r.completed_at).toISOString() : null,
});

/** The tasks of the devices the caller sees (view scope), matching `where`. */
async function tasksSql(caller: Caller, where: ReturnType<typeof sql<boolean>>) {
  const visible = await visibleSql(deviceStore, caller, 'view');
  return sql<boolean>`dt.project_id = ${caller.projectId}
    and dt.device_id in (select t.id from ${deviceStore.from} where ${visible}) and ${where}`;
}

const taskSelect = sql`select dt.id, dt.device_id, d.name as device_name, d.serial_number, dt.domain_id, dt.kind,
  dt.state, dt.attempts, dt.error, dt.created_at, dt.updated_at, dt.completed_at
  from device_tasks dt join devices d on d.id = dt.device_id`;

async function readTask(ctx: HandlerContext, caller: Caller, id: number): Promise<DeviceTask> {
  const r =
    await sql<TaskDbRow>`${taskSelect} where ${await tasksSql(caller, sql<boolean>`dt.id = ${id}`)}`.execute(
      ctx.app.db,
    );
  if (!r.rows[0]) throw new AppError('item_not_found');
  return taskOf(r.rows[0]);
}

/** A new task for a device the caller may see (`edit`: may edit), made and queued in one transaction. */
async function newTask(ctx: HandlerContext, deviceId: number, kind: DeviceTaskKind, action: 'view' | 'edit') {
  const c = await familyCtx(ctx);
  if (action === 'edit') await assertMay(c.app.db, deviceStore, c.caller, deviceId, 'edit');
  else {
    const seen =
      await sql`select t.id from ${deviceStore.from} where t.id = ${deviceId} and ${await visibleSql(deviceStore, c.caller, 'view')}`.execute(
        c.app.db,
      );
    if (!seen.rows.length) throw new AppError('item_not_found');
  }
  const id = await c.app.db
    .transaction()
    .execute((trx) => createTask(c.app, trx, deviceId, kind, c.caller.userId));
  return { task: await readTask(ctx, c.caller, id) };
}

/** Stop or retry a task the caller sees. */
async function changeTask(ctx: HandlerContext, id: number, change: typeof retryTask) {
  const c = await familyCtx(ctx);
  await readTask(ctx, c.caller, id);
  await c.app.db.transaction().execute((trx) => change(c.app, trx, id));
  return { task: await readTask(ctx, c.caller, id) };
}

export const deviceHandlers = {
  ...familyHandlers(deviceStore),

  'device.credentials': async (ctx, args) => {
    const c = await familyCtx(ctx);
    await assertMay(c.app.db, deviceStore, c.caller, args.id, 'edit');
    const device = await readStored(c, args.id);
    await audit(c.app.db, {
      projectId: c.caller.projectId,
      userId: c.caller.userId,
      action: 'credentials_viewed',
      entity: 'device',
      entityId: args.id,
      ip: c.ip,
      data: {},
    });
    return credentialsOf(ctx, device);
  },

  'device.credentials_reset': async (ctx, args) => {
    const c = await familyCtx(ctx);
    const device = await c.app.db.transaction().execute(async (trx) => {
      await assertMay(trx, deviceStore, c.caller, args.id, 'edit');
      const password = issuePassword();
      const r =
        await sql<StoredDevice>`update devices set password = ${password}, updated_at = ${c.app.clock.now()}
        where id = ${args.id}
        returning id, serial_number, password, protocol, status, ip_address, port`.execute(trx);
      // the external broker's account takes the new password (MQTT_DYNSEC)
      await queueBrokerAccount(c.app, trx, r.rows[0]!.serial_number);
      await audit(trx, {
        projectId: c.caller.projectId,
        userId: c.caller.userId,
        action: 'credentials_reset',
        entity: 'device',
        entityId: args.id,
        ip: c.ip,
        data: {},
      });
      return r.rows[0]!;
    });
    ctx.app.devices.forget(device.serial_number);
    return credentialsOf(ctx, device);
  },

  'device.broker_sync': async (ctx) => {
    const c = await familyCtx(ctx);
    const job = await queueBrokerReconcile(c.app);
    if (job !== null)
      await audit(c.app.db, {
        projectId: c.caller.projectId,
        userId: c.caller.userId,
        action: 'broker_sync',
        entity: 'device',
        ip: c.ip,
        data: { job },
      });
    return { queued: job !== null };
  },

  'device.info': async (ctx, args) => {
    const c = await familyCtx(ctx);
    const seen =
      await sql`select t.id from ${deviceStore.from} where t.id = ${args.id} and ${await visibleSql(deviceStore, c.caller, 'view')}`.execute(
        c.app.db,
      );
    if (!seen.rows.length) throw new AppError('item_not_found');
    const device = await readStored(c, args.id);
    const reply = await ctx.app.devices.request(device, { method: 'GET', uri: '/api/info' });
    if (reply.status !== 200 || typeof reply.body !== 'object' || reply.body === null)
      throw new AppError('device_not_available', { serial: device.serial_number, status: reply.status });
    return reply.body as Record<string, unknown>;
  },

  'device.tasks': async (ctx, args) => {
    const caller = callerOf(ctx);
    const where = await tasksSql(
      caller,
      sql<boolean>`(${args.device_id ?? null}::int is null or dt.device_id = ${args.device_id ?? null})
        and (${args.state ?? null}::text is null or dt.state = ${args.state ?? null})`,
    );
    const total = await sql<{
      n: number;
    }>`select count(*)::int as n from device_tasks dt where ${where}`.execute(ctx.app.db);
    const rows = await sql<TaskDbRow>`${taskSelect} where ${where} order by dt.id desc
      limit ${args.limit} offset ${(args.page - 1) * args.limit}`.execute(ctx.app.db);
    return {
      data: rows.rows.map(taskOf),
      meta: { total: Number(total.rows[0]?.n ?? 0), page: args.page, limit: args.limit },
    };
  },

  'device.apply_settings': (ctx, args) => newTask(ctx, args.id, 'settings', 'edit'),
  'device.restart': (ctx, args) => newTask(ctx, args.id, 'restart', 'view'),
  'device.reinit': (ctx, args) => newTask(ctx, args.id, 'reinit', 'view'),
  'device.task_retry': (ctx, args) => changeTask(ctx, args.id, retryTask),
  'device.task_stop': (ctx, args) => changeTask(ctx, args.id, stopTask),

  // ----- network search -----

  'device.search': async (ctx, args) => {
    const caller = signedIn(ctx);
    return ctx.app.devices.searches.start({ userId: caller.userId, projectId: caller.projectId }, args);
  },

  'device.search_result': async (ctx, args) =>
    ctx.app.devices.searches.result(signedIn(ctx).userId, args.request_id),

  'device.add_found': async (ctx, args) => {
    const c = await familyCtx(ctx);
    // the same serial twice in one request: refused before anything is written
    const seen = new Set<string>();
    for (const item of args.items) {
      if (seen.has(item.serial_number))
        throw new AppError('serial_number_in_use', { serial_number: item.serial_number });
      seen.add(item.serial_number);
    }
    const create = getCommand('device.create').args;
    const data = await c.app.db.transaction().execute(async (trx) => {
      // one registered already (in any project: serial numbers are the installation's): nothing is added
      const taken = await sql<{ serial_number: string }>`select serial_number from devices
        where serial_number in (${sql.join(args.items.map((i) => i.serial_number))})
        order by serial_number`.execute(trx);
      if (taken.rows.length)
        throw new AppError('serial_number_in_use', {
          serial_number: taken.rows[0]!.serial_number,
          serial_numbers: taken.rows.map((r) => r.serial_number),
        });
      const out: Array<{ id: number; name: string; serial_number: string }> = [];
      for (const item of args.items) {
        const name = item.name ?? `${item.device_type} ${item.serial_number}`;
        const id = await deviceStore.create(
          trx,
          create.parse({
            name,
            type: item.device_type,
            serial_number: item.serial_number,
            ip_address: item.ip_address,
            port: item.port,
            protocol: 'http',
            domain_id: args.domain_id,
          }) as never,
          c,
        );
        await audit(trx, {
          projectId: c.caller.projectId,
          userId: c.caller.userId,
          action: 'create',
          entity: 'device',
          entityId: id,
          ip: c.ip,
          data: { found: { ip_address: item.ip_address, port: item.port } },
        });
        out.push({ id, name, serial_number: item.serial_number });
      }
      return out;
    });
    return { data };
  },

  // ----- what devices push (the `device` principal) -----

  'device_gateway.heartbeat': async (ctx, args) => {
    const p = ctx.principal;
    if (p.kind !== 'device') throw new AppError('method_prohibited');
    await markOnline(ctx.app, p.deviceId, 'heartbeat', {
      firmwareVersion: typeof args.firmware_version === 'string' ? args.firmware_version : undefined,
    });
    return { status: 'online' as const, interval: DeviceTiming.heartbeatS };
  },

  'device_gateway.status': async (ctx, args) => {
    const p = ctx.principal;
    if (p.kind !== 'device') throw new AppError('method_prohibited');
    if (args.status === 'online') await markOnline(ctx.app, p.deviceId, 'status');
    else await markOffline(ctx.app, p.deviceId, 'status');
    return { status: args.status };
  },
} satisfies SomeHandlers;
