import { sql } from 'kysely';
import { deviceTopics, DeviceTiming } from '@lintel/core';
import {
  deviceInfoOf,
  getCommand,
  IpAddress,
  type DeviceCredentials,
  deviceTaskFields,
  type DeviceTask,
  type RawDevice,
} from '@lintel/commands';
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
import { signedIn, type HandlerContext, type SomeHandlers } from '../../pipeline/handler';
import { markOffline, markOnline } from '../../devices/status';
import { DEVICE_GATEWAY_PATH } from '../../devices/gateway';
import { createTask, retryTask, stopAllOf, stopTask, type DeviceTaskKind } from '../../devices/tasks';
import type { Caller } from '../../engine/caller';
import { runList, type ListSource } from '../../engine/list';
import { deviceStore, issuePassword } from './device.store';
import { queueBrokerAccount, queueBrokerReconcile } from '../../devices/dynsec';

interface StoredDevice {
  id: number;
  serial_number: string;
  password: string;
  protocol: 'http' | 'mqtt' | 'none';
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

/** The tasks as the generic list reads them (`deviceTaskFields`): the task is `t`, its device `d`. */
const taskList: ListSource<DeviceTask> = {
  from: sql`device_tasks t join devices d on d.id = t.device_id`,
  filterable: Object.fromEntries(
    Object.entries(deviceTaskFields)
      .filter(([, f]) => f.filterable)
      .map(([name, f]) => [name, { kind: f.kind, values: f.values }]),
  ),
  sortable: Object.keys(deviceTaskFields).filter((name) => deviceTaskFields[name]!.sortable),
  columns: {
    id: { expr: sql`t.id` },
    device: { expr: sql`t.device_id` },
    kind: { expr: sql`t.kind` },
    state: { expr: sql`t.state` },
    attempts: { expr: sql`t.attempts` },
    error: { expr: sql`t.error` },
    created_at: { expr: sql`t.created_at` },
    updated_at: { expr: sql`t.updated_at` },
    completed_at: { expr: sql`t.completed_at` },
  },
  search: [sql`d.name`, sql`d.serial_number`],
  async load(q, ids) {
    if (!ids.length) return [];
    const r = await sql<TaskDbRow>`${taskSelect} where dt.id in (${sql.join(ids)})`.execute(q);
    const byId = new Map(r.rows.map((row) => [Number(row.id), taskOf(row)]));
    return ids.map((id) => byId.get(Number(id))).filter((x): x is DeviceTask => !!x);
  },
};

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

/** The device is one the caller sees (view scope), else not found. */
async function assertSees(c: FamilyCtx, deviceId: number): Promise<void> {
  const seen =
    await sql`select t.id from ${deviceStore.from} where t.id = ${deviceId} and ${await visibleSql(deviceStore, c.caller, 'view')}`.execute(
      c.app.db,
    );
  if (!seen.rows.length) throw new AppError('item_not_found');
}

/** New tasks for a device the caller may see (`edit`: may edit), made and queued in one transaction. */
async function newTasks(
  ctx: HandlerContext,
  deviceId: number,
  kinds: DeviceTaskKind[],
  action: 'view' | 'edit',
): Promise<DeviceTask[]> {
  const c = await familyCtx(ctx);
  if (action === 'edit') await assertMay(c.app.db, deviceStore, c.caller, deviceId, 'edit');
  else await assertSees(c, deviceId);
  const ids = await c.app.db.transaction().execute(async (trx) => {
    const out: number[] = [];
    for (const kind of kinds) out.push(await createTask(c.app, trx, deviceId, kind, c.caller.userId));
    return out;
  });
  return Promise.all(ids.map((id) => readTask(ctx, c.caller, id)));
}

const newTask = async (
  ctx: HandlerContext,
  deviceId: number,
  kind: DeviceTaskKind,
  action: 'view' | 'edit',
) => ({
  task: (await newTasks(ctx, deviceId, [kind], action))[0]!,
});

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
    // only the documented fields: whatever else the address answered never reaches the caller
    return deviceInfoOf(reply.body);
  },

  'device.tasks': async (ctx, args) => {
    const caller = callerOf(ctx);
    const visible = await visibleSql(deviceStore, caller, 'view');
    // the list of every family (filters, search, sort, the bounded count) over the tasks of the devices the
    // caller sees; `device_id` and `state` stay as the short forms the CLI and links use
    const where = sql<boolean>`t.project_id = ${caller.projectId}
      and t.device_id in (select t.id from ${deviceStore.from} where ${visible})
      and (${args.device_id ?? null}::int is null or t.device_id = ${args.device_id ?? null})
      and (${args.state ?? null}::text is null or t.state = ${args.state ?? null})`;
    const query = { ...args, sort: args.sort ?? '-id' };
    return runList(ctx.app.db, taskList, query, where, {
      exactCountUpTo: ctx.app.config.listExactCount,
    });
  },

  'device.activity': async (ctx) => {
    const caller = callerOf(ctx);
    const visible = await visibleSql(deviceStore, caller, 'view');
    const now = ctx.app.clock.now();
    const events = caller.hasAny(['devices.view_events']);
    const tasks = caller.hasAny(['devices.view_tasks', 'devices.tasks']);
    // the 24 hours up to now (the last one is the current hour); the devices counted are those seen now
    const r = await sql<{
      at: Date;
      events: number;
      granted: number;
      denied: number;
      online: number;
      failed_tasks: number;
    }>`with seen as (select t.id, t.created_at from ${deviceStore.from} where ${visible}),
      hours as (
        select h, h + interval '1 hour' as h_end
        from generate_series(date_trunc('hour', ${now}::timestamptz) - interval '23 hours',
          date_trunc('hour', ${now}::timestamptz), interval '1 hour') h)
      select hours.h as at,
        (select count(*)::int from device_events e where e.project_id = ${caller.projectId}
          and e.device_id in (select id from seen) and e.created_at >= hours.h and e.created_at < hours.h_end) as events,
        (select count(*)::int from device_events e where e.project_id = ${caller.projectId}
          and e.device_id in (select id from seen) and e.created_at >= hours.h and e.created_at < hours.h_end
          and e.kind = 'identifier_used') as granted,
        (select count(*)::int from device_events e where e.project_id = ${caller.projectId}
          and e.device_id in (select id from seen) and e.created_at >= hours.h and e.created_at < hours.h_end
          and e.kind = 'identifier_refused') as denied,
        (select count(*)::int from seen where seen.created_at < hours.h_end and (
          select c.status from device_status_changes c where c.device_id = seen.id and c.at < hours.h_end
          order by c.at desc, c.id desc limit 1) = 'online') as online,
        (select count(*)::int from device_tasks dt where dt.project_id = ${caller.projectId}
          and dt.device_id in (select id from seen) and dt.state = 'error'
          and dt.updated_at >= hours.h and dt.updated_at < hours.h_end) as failed_tasks
      from hours order by hours.h`.execute(ctx.app.db);
    const totals = await sql<{ devices: number; failing: number }>`select
      (select count(*)::int from ${deviceStore.from} where ${visible}) as devices,
      (select count(*)::int from device_tasks dt where dt.project_id = ${caller.projectId} and dt.state = 'error'
        and dt.device_id in (select t.id from ${deviceStore.from} where ${visible})) as failing`.execute(
      ctx.app.db,
    );
    return {
      hours: r.rows.map((h) => ({
        at: new Date(h.at).toISOString(),
        events: events ? Number(h.events) : null,
        granted: events ? Number(h.granted) : null,
        denied: events ? Number(h.denied) : null,
        online: Number(h.online),
        failed_tasks: tasks ? Number(h.failed_tasks) : null,
      })),
      devices: Number(totals.rows[0]?.devices ?? 0),
      failing_tasks: tasks ? Number(totals.rows[0]?.failing ?? 0) : null,
    };
  },

  'device.apply_settings': (ctx, args) => newTask(ctx, args.id, 'settings', 'edit'),
  'device.restart': (ctx, args) => newTask(ctx, args.id, 'restart', 'view'),
  'device.reinit': (ctx, args) => newTask(ctx, args.id, 'reinit', 'view'),
  'device.task_retry': (ctx, args) => changeTask(ctx, args.id, retryTask),
  'device.task_stop': (ctx, args) => changeTask(ctx, args.id, stopTask),

  // ----- the rest of spec part 2 §7 (docs/decisions.md "Device commands, the rest") -----

  'device.raw_list': async (ctx, args) => {
    const caller = callerOf(ctx);
    const visible = await visibleSql(deviceStore, caller, 'view');
    const search = args.search
      ? `%${args.search.toLowerCase().replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`
      : null;
    const r = await sql<{
      id: number;
      name: string;
      serial_number: string;
      type: RawDevice['type'];
      status: RawDevice['status'];
      protocol: RawDevice['protocol'];
      domain_id: number;
    }>`select t.id, t.name, t.serial_number, t.type, t.status, t.protocol, t.domain_id
      from ${deviceStore.from} where ${visible}
        and (${args.type ?? null}::text is null or t.type = ${args.type ?? null})
        and (${search}::text is null or lower(t.name) like ${search} or lower(t.serial_number) like ${search})
      order by lower(t.name), t.id limit ${args.limit}`.execute(ctx.app.db);
    return { data: r.rows.map((d) => ({ ...d, id: Number(d.id), domain_id: Number(d.domain_id) })) };
  },

  'device.set_protocol': async (ctx, args) => {
    const c = await familyCtx(ctx);
    const out = await c.app.db.transaction().execute(async (trx) => {
      await assertMay(trx, deviceStore, c.caller, args.id, 'edit');
      const before = await sql<{
        protocol: string;
        serial_number: string;
      }>`select protocol, serial_number from devices where id = ${args.id} for update`.execute(trx);
      const was = before.rows[0]!;
      if (was.protocol === args.protocol) return { stopped: 0, serial: was.serial_number, changed: false };
      await sql`update devices set protocol = ${args.protocol}, updated_at = ${c.app.clock.now()}
        where id = ${args.id}`.execute(trx);
      const stopped = args.protocol === 'none' ? await stopAllOf(c.app, trx, args.id) : 0;
      await audit(trx, {
        projectId: c.caller.projectId,
        userId: c.caller.userId,
        action: 'update',
        entity: 'device',
        entityId: args.id,
        ip: c.ip,
        data: { changes: { protocol: { from: was.protocol, to: args.protocol } }, stopped_tasks: stopped },
      });
      return { stopped, serial: was.serial_number, changed: true };
    });
    // its connections under the old protocol end (an mqtt device set to http or none is not let in again)
    if (out.changed) ctx.app.devices.forget(out.serial);
    return { id: args.id, protocol: args.protocol, stopped_tasks: out.stopped };
  },

  'device.init_apply': async (ctx, args) => ({
    tasks: await newTasks(ctx, args.id, ['init', 'entities'], 'edit'),
  }),

  'device.sync_entities': (ctx, args) => newTask(ctx, args.id, 'entities', 'view'),

  'device.sync_errors': async (ctx, args) => {
    const c = await familyCtx(ctx);
    await assertSees(c, args.id);
    const r = await sql<{
      entity: string;
      item_key: string;
      error: string;
      task_id: number | null;
      created_at: Date;
    }>`select entity, item_key, error, task_id, created_at from device_sync_errors
      where device_id = ${args.id} order by entity, item_key`.execute(ctx.app.db);
    const of = (entity: string) =>
      r.rows
        .filter((e) => e.entity === entity)
        .map((e) => ({
          key: e.item_key,
          error: e.error,
          task_id: e.task_id === null ? null : Number(e.task_id),
          at: new Date(e.created_at).toISOString(),
        }));
    return { identifiers: of('identifier'), schedules: of('schedule') };
  },

  'device.pool': async (ctx) => {
    signedIn(ctx);
    const r = await sql<{
      serial_number: string;
      ip_address: string | null;
      firmware_version: string | null;
      contacts: number;
      first_seen_at: Date;
      last_seen_at: Date;
    }>`select p.serial_number, p.ip_address, p.firmware_version, p.contacts, p.first_seen_at, p.last_seen_at
      from device_pool p where not exists (select 1 from devices d where d.serial_number = p.serial_number)
      order by p.last_seen_at desc, p.serial_number`.execute(ctx.app.db);
    return {
      data: r.rows.map((p) => ({
        ...p,
        contacts: Number(p.contacts),
        first_seen_at: new Date(p.first_seen_at).toISOString(),
        last_seen_at: new Date(p.last_seen_at).toISOString(),
      })),
    };
  },

  'device.from_pool': async (ctx, args) => {
    const c = await familyCtx(ctx);
    const create = getCommand('device.create').args;
    const id = await c.app.db.transaction().execute(async (trx) => {
      const p = await sql<{
        ip_address: string | null;
      }>`select ip_address from device_pool where serial_number = ${args.serial_number} for update`.execute(
        trx,
      );
      if (!p.rows[0]) throw new AppError('item_not_found');
      const ip = p.rows[0].ip_address?.replace(/^::ffff:/, '') ?? null;
      const id = await deviceStore.create(
        trx,
        create.parse({
          name: args.name,
          type: args.type,
          serial_number: args.serial_number,
          ip_address: ip && IpAddress.safeParse(ip).success ? ip : null,
          protocol: 'http',
          domain_id: args.domain_id,
        }) as never,
        c,
      );
      await sql`delete from device_pool where serial_number = ${args.serial_number}`.execute(trx);
      await audit(trx, {
        projectId: c.caller.projectId,
        userId: c.caller.userId,
        action: 'create',
        entity: 'device',
        entityId: id,
        ip: c.ip,
        data: { from_pool: { serial_number: args.serial_number } },
      });
      return id;
    });
    return { id, name: args.name, serial_number: args.serial_number };
  },

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
