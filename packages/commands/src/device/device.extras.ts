import { z } from 'zod';
import { ListQuery, listReply } from '@lintel/core';
import { defineCommand, NoArgs } from '../command';
import { IdParam, type ResourceField } from '../resource';
import { Timestamp } from '../refs';
import { DeviceProtocol, DeviceStatus, DeviceType, IpAddress, Port, SerialNumber } from './device.resource';

/** The device's own description, as `GET /api/info` of the device answers it (../shared/DEVICES.md). */
export const DeviceInfo = z
  .object({
    firmware_version: z.string().optional(),
    framework_version: z.string().optional(),
    frontend_version: z.string().optional(),
    api_version: z.string().optional(),
    device_name: z.string().optional(),
    device_type: z.string().optional(),
    device_serial_number: z.string().optional(),
    hybrid_enable: z.boolean().optional(),
    hybrid_version: z.string().optional(),
    commit: z.string().optional(),
  })
  .strip();

/**
 * The documented fields of a device's `/api/info` reply, each kept only when it has its documented type:
 * whatever else the address answered is dropped (issue 20 item 3: a device's address may be any service).
 */
export function deviceInfoOf(body: unknown): z.infer<typeof DeviceInfo> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return {};
  const out: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(DeviceInfo.shape)) {
    const value = (body as Record<string, unknown>)[key];
    if (value !== undefined && schema.safeParse(value).success) out[key] = value;
  }
  return out as z.infer<typeof DeviceInfo>;
}

/**
 * What the installer types into the device's management settings: the platform's address for its protocol
 * and the device's own credentials (login: the serial number; the password Lintel issued). Shown only to
 * whoever may edit the device.
 */
export const DeviceCredentials = z.object({
  protocol: DeviceProtocol,
  login: z.string(),
  password: z.string(),
  /** the platform's HTTP address a device on http pushes to (`POST {url}/heartbeat`) */
  http_url: z.string(),
  /** the broker a device on mqtt connects to, and the topics it may use (its own only) */
  mqtt: z.object({
    url: z.string(),
    client_id: z.string(),
    topics: z.object({
      request: z.string(),
      response: z.string(),
      push: z.string(),
      /** where the platform answers a push once it stored what the push carried (device events) */
      push_reply: z.string(),
      status: z.string(),
    }),
  }),
});
export type DeviceCredentials = z.infer<typeof DeviceCredentials>;

export const deviceCredentials = defineCommand({
  id: 'device.credentials',
  http: { method: 'GET', path: '/devices/:id/credentials' },
  args: IdParam,
  result: DeviceCredentials,
  gates: { anyPermission: ['devices.edit'] },
});

/** Issues the device a new password (the old one stops working on the broker and over HTTP at once). */
export const deviceCredentialsReset = defineCommand({
  id: 'device.credentials_reset',
  http: { method: 'POST', path: '/devices/:id/credentials/reset' },
  args: IdParam,
  result: DeviceCredentials,
  gates: { anyPermission: ['devices.edit'] },
});

/** Asks the device itself for its description, through the gateway (MQTT or HTTP alike). */
export const deviceInfo = defineCommand({
  id: 'device.info',
  http: { method: 'GET', path: '/devices/:id/info' },
  args: IdParam,
  result: DeviceInfo,
  gates: { anyPermission: ['devices.view', 'devices.view_descendant', 'devices.view_all'] },
});

/**
 * Brings the external broker's device accounts in step with the devices now (MQTT_DYNSEC: Mosquitto's
 * dynamic-security plugin): the missing made, those of devices gone deleted, by a durable job. `queued` is
 * false when Lintel keeps no broker accounts (the embedded broker checks the devices itself).
 */
export const deviceBrokerSync = defineCommand({
  id: 'device.broker_sync',
  http: { method: 'POST', path: '/devices/broker-sync' },
  args: NoArgs,
  result: z.object({ queued: z.boolean() }),
  gates: { anyPermission: ['devices.edit'] },
});

// ----- the device's side: what devices send to the platform (../shared/DEVICES.md) ---------------------
// Called by devices only (the `device` principal: over MQTT by their serial's topics, over HTTP with their
// login and password), never by people: hidden from the palette and the CLI.

/** A device's heartbeat (every 10 s): it is online, and here is what it says of itself. */
export const deviceGatewayHeartbeat = defineCommand({
  id: 'device_gateway.heartbeat',
  http: { method: 'POST', path: '/device-gateway/heartbeat' },
  access: 'device',
  hidden: true,
  args: z
    .object({
      firmware_version: z.string().max(64).optional(),
      uptime: z.number().int().min(0).optional(),
    })
    .loose(),
  result: z.object({ status: z.literal('online'), interval: z.number().int() }),
});

/** A device's status message (`device/status/v0/{serial}`, its last will saying `offline`). */
export const deviceGatewayStatus = defineCommand({
  id: 'device_gateway.status',
  http: { method: 'POST', path: '/device-gateway/status' },
  access: 'device',
  hidden: true,
  args: z.object({ status: z.enum(['online', 'offline']) }),
  result: z.object({ status: z.enum(['online', 'offline']) }),
});

// ----- device tasks (spec part 1 §3 Device task, §4 task states; part 2 §7 "tasks with restart, reinit") -----

export const DeviceTaskStates = [
  'new',
  'queued',
  'started',
  'stopped',
  'error',
  'completed',
  'waiting',
] as const;
export const DeviceTaskState = z.enum(DeviceTaskStates);
export const DeviceTaskKinds = ['settings', 'restart', 'reinit', 'init', 'entities'] as const;
export const DeviceTaskKind = z.enum(DeviceTaskKinds);

/**
 * A change that must reach a device. `new`: behind an earlier task of its device; `queued`: about to be sent
 * (or sent again after a failure, with back-off); `started`: sent, awaiting the device's reply; `waiting`: the
 * device is offline, sent when it comes online; `completed`: the device acknowledged it; `error`: the device
 * refused it or did not answer after every attempt (`error` holds the catalogue code); `stopped`: stopped by
 * a person.
 */
export const DeviceTask = z.object({
  id: z.number().int(),
  device: z.object({ id: z.number().int(), name: z.string(), serial_number: z.string() }),
  domain_id: z.number().int(),
  kind: DeviceTaskKind,
  state: DeviceTaskState,
  attempts: z.number().int(),
  error: z.string().nullable(),
  created_at: Timestamp,
  updated_at: Timestamp,
  completed_at: Timestamp.nullable(),
});
export type DeviceTask = z.infer<typeof DeviceTask>;

const deviceTaskGate = { anyPermission: ['devices.tasks' as const] };

/**
 * The tasks' columns as lists read them (issue 25 item 7): the filter language, search (the device's name
 * and serial number) and sort, as every family's list — /devices/tasks is the generic table over them.
 */
export const deviceTaskFields: Record<string, ResourceField> = {
  id: { kind: 'number', filterable: true, sortable: true },
  device: { kind: 'ref', default: true, filterable: true, sortable: true },
  kind: { kind: 'enum', values: DeviceTaskKinds, default: true, filterable: true, sortable: true },
  state: {
    kind: 'enum',
    values: DeviceTaskStates,
    tones: {
      new: 'neutral',
      queued: 'neutral',
      started: 'warn',
      waiting: 'warn',
      stopped: 'neutral',
      error: 'bad',
      completed: 'good',
    },
    default: true,
    filterable: true,
    sortable: true,
  },
  attempts: { kind: 'number', default: true, filterable: true, sortable: true },
  error: { kind: 'text', default: true, filterable: true },
  created_at: { kind: 'date', filterable: true, sortable: true },
  updated_at: { kind: 'date', default: true, filterable: true, sortable: true },
  completed_at: { kind: 'date', filterable: true, sortable: true },
};

/**
 * Device tasks, newest first by default: every device the caller sees, or one device's (`device_id`), or by
 * state; and, as every list, `filters`/`match`, `search` and `sort` over `deviceTaskFields`.
 */
export const deviceTasks = defineCommand({
  id: 'device.tasks',
  http: { method: 'GET', path: '/devices/tasks' },
  args: ListQuery.extend({
    device_id: z.coerce.number().int().min(1).max(2_147_483_647).optional(),
    state: DeviceTaskState.optional(),
  }).strict(),
  result: listReply(DeviceTask),
  gates: { anyPermission: ['devices.view_tasks', 'devices.tasks'] },
});

const TaskReply = z.object({ task: DeviceTask });

/** Sends the device its settings as they are stored (a task). */
export const deviceApplySettings = defineCommand({
  id: 'device.apply_settings',
  http: { method: 'POST', path: '/devices/:id/settings/apply' },
  args: IdParam,
  result: TaskReply,
  gates: { anyPermission: ['devices.edit'] },
});

/** Restarts the device (a task: sent when it is online, completed on its reply). */
export const deviceRestart = defineCommand({
  id: 'device.restart',
  http: { method: 'POST', path: '/devices/:id/restart' },
  args: IdParam,
  result: TaskReply,
  gates: deviceTaskGate,
});

/** Initialises the device again: it is sent its whole configuration, replacing what it held (a task). */
export const deviceReinit = defineCommand({
  id: 'device.reinit',
  http: { method: 'POST', path: '/devices/:id/reinit' },
  args: IdParam,
  result: TaskReply,
  gates: deviceTaskGate,
});

/** A task that failed or was stopped is queued again (the spec's "restart queue"). */
export const deviceTaskRetry = defineCommand({
  id: 'device.task_retry',
  http: { method: 'POST', path: '/devices/tasks/:id/retry' },
  args: IdParam,
  result: TaskReply,
  gates: deviceTaskGate,
});

/** A task not yet acknowledged is stopped: never sent again. */
export const deviceTaskStop = defineCommand({
  id: 'device.task_stop',
  http: { method: 'POST', path: '/devices/tasks/:id/stop' },
  args: IdParam,
  result: TaskReply,
  gates: deviceTaskGate,
});

// ----- network search (spec part 2 §7 "POST network search {start_ip,end_ip,request_id}; PUT found devices") -----

const Ipv4 = z.ipv4({ message: 'ipv4_address' });
/** A request id names a search for its user: the client makes it (a UUID), so it can catch up by it. */
export const SearchRequestId = z
  .string()
  .trim()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9._:-]+$/, { message: 'request_id_chars' });

/** A device that answered `GET /api/info` during a search. */
export const FoundDevice = z.object({
  ip_address: z.string(),
  port: z.number().int(),
  serial_number: z.string(),
  /** as the device names its kind; one of the platform's types when it is one */
  device_type: z.string(),
  device_name: z.string(),
  firmware_version: z.string(),
  /** a device with this serial number is registered already (in this installation) */
  registered: z.boolean(),
  /** that device's id, when it is in the caller's project */
  device_id: z.number().int().nullable(),
});
export type FoundDevice = z.infer<typeof FoundDevice>;

export const DeviceSearchStates = ['running', 'done', 'interrupted'] as const;

/** A search as it stands: how far it got and what it found so far. */
export const DeviceSearch = z.object({
  request_id: z.string(),
  start_ip: z.string(),
  end_ip: z.string(),
  port: z.number().int(),
  state: z.enum(DeviceSearchStates),
  total: z.number().int(),
  probed: z.number().int(),
  /** addresses that accepted a connection but did not answer within the probe's time */
  timed_out: z.number().int(),
  found: z.array(FoundDevice),
  created_at: Timestamp,
  finished_at: Timestamp.nullable(),
});
export type DeviceSearch = z.infer<typeof DeviceSearch>;

const searchGate = { anyPermission: ['devices.create' as const] };

/**
 * Starts a network search: `GET http://{ip}:{port}/api/info` over `start_ip`…`end_ip` (IPv4, at most
 * `DeviceSearchLimits.maxAddresses`), in the background. Progress and each device found come on the
 * caller's `private-users.{id}` topic as `DeviceSearchEvent`s keyed by `request_id`; `device.search_result`
 * gives the search as it stands. The same `request_id` again answers the search it named.
 */
export const deviceSearch = defineCommand({
  id: 'device.search',
  http: { method: 'POST', path: '/devices/search' },
  args: z
    .object({
      start_ip: Ipv4,
      end_ip: Ipv4,
      /** made by the server when left out */
      request_id: SearchRequestId.optional(),
      /** the port of the devices' HTTP API (80 by default) */
      port: z.coerce.number().int().min(1).max(65_535).default(80),
    })
    .strict(),
  result: DeviceSearch,
  gates: searchGate,
});

/** A search the caller started, as it stands (a console that reconnects catches up with it). */
export const deviceSearchResult = defineCommand({
  id: 'device.search_result',
  http: { method: 'GET', path: '/devices/search/:request_id' },
  args: z.object({ request_id: SearchRequestId }).strict(),
  result: DeviceSearch,
  gates: searchGate,
});

/** One found device to add: what the search reported, and the name it gets (the device's own by default). */
export const FoundDeviceItem = z
  .object({
    serial_number: SerialNumber,
    /** the platform's kind: a device reporting another kind cannot be added as it is */
    device_type: DeviceType,
    ip_address: IpAddress,
    port: Port.default(80),
    name: z.string().trim().min(1).max(255).optional(),
  })
  .strict();

/**
 * Adds found devices (spec: "PUT found devices {items}") into a group, all or none: a serial number already
 * registered (or given twice) is `serial_number_in_use` naming it, and nothing is added.
 */
export const deviceAddFound = defineCommand({
  id: 'device.add_found',
  http: { method: 'PUT', path: '/devices/found' },
  args: z
    .object({
      domain_id: z.number().int().min(1).max(2_147_483_647),
      items: z.array(FoundDeviceItem).min(1).max(1024),
    })
    .strict(),
  result: z.object({
    data: z.array(z.object({ id: z.number().int(), name: z.string(), serial_number: z.string() })),
  }),
  gates: { anyPermission: ['devices.create' as const] },
});

// ----- the rest of spec part 2 §7's device calls (docs/decisions.md "Device commands, the rest") -----

/** One device in a picker or a script: no paging, no settings. */
export const RawDevice = z.object({
  id: z.number().int(),
  name: z.string(),
  serial_number: z.string(),
  type: DeviceType,
  status: DeviceStatus,
  protocol: DeviceProtocol,
  domain_id: z.number().int(),
});
export type RawDevice = z.infer<typeof RawDevice>;

/** At most this many devices in one raw list (a larger installation narrows it by `search` or `type`). */
export const RAW_LIST_LIMIT = 5000;

/**
 * The spec's "raw list": the devices the caller sees (view scope), by name, light — for pickers and scripts.
 * `search` matches the name or serial number (case-insensitive); no count, at most `RAW_LIST_LIMIT`.
 */
export const deviceRawList = defineCommand({
  id: 'device.raw_list',
  http: { method: 'GET', path: '/devices/raw' },
  args: z
    .object({
      search: z.string().trim().max(255).optional(),
      type: DeviceType.optional(),
      limit: z.coerce.number().int().min(1).max(RAW_LIST_LIMIT).default(RAW_LIST_LIMIT),
    })
    .strict(),
  result: z.object({ data: z.array(RawDevice) }),
  gates: { anyPermission: ['devices.view', 'devices.view_descendant', 'devices.view_all'] },
});

/**
 * Sets how the platform talks to the device. `none`: not at all — its open tasks are stopped (with
 * `device_protocol_none`), and init, restart, apply settings, entities and task retry are refused.
 */
export const deviceSetProtocol = defineCommand({
  id: 'device.set_protocol',
  http: { method: 'PUT', path: '/devices/:id/protocol' },
  args: z
    .object({ id: z.coerce.number().int().min(1).max(2_147_483_647), protocol: DeviceProtocol })
    .strict(),
  result: z.object({ id: z.number().int(), protocol: DeviceProtocol, stopped_tasks: z.number().int() }),
  gates: { anyPermission: ['devices.edit'] },
});

/**
 * The edit page's "init device" (the spec's "init apply"): the device is sent its whole configuration,
 * replacing what it held — an `init` task (its settings and management, `replace: true`) and behind it an
 * `entities` task (every identifier and schedule it must hold).
 */
export const deviceInitApply = defineCommand({
  id: 'device.init_apply',
  http: { method: 'POST', path: '/devices/:id/init' },
  args: IdParam,
  result: z.object({ tasks: z.array(DeviceTask) }),
  gates: { anyPermission: ['devices.edit'] },
});

/** Sends the device every entity it must hold (identifiers, schedules) — an `entities` task. */
export const deviceSyncEntities = defineCommand({
  id: 'device.sync_entities',
  http: { method: 'POST', path: '/devices/:id/entities/sync' },
  args: IdParam,
  result: TaskReply,
  gates: deviceTaskGate,
});

/** An entity the device refused at its last synchronisation. */
export const DeviceSyncError = z.object({
  key: z.string(),
  error: z.string(),
  task_id: z.number().int().nullable(),
  at: Timestamp,
});

/** The entities that failed to reach the device at its last entities task, by kind. */
export const deviceSyncErrors = defineCommand({
  id: 'device.sync_errors',
  http: { method: 'GET', path: '/devices/:id/sync-errors' },
  args: IdParam,
  result: z.object({ identifiers: z.array(DeviceSyncError), schedules: z.array(DeviceSyncError) }),
  gates: { anyPermission: ['devices.view', 'devices.view_descendant', 'devices.view_all'] },
});

/** A device that called the platform over HTTP with a serial number no device has: kept to be adopted. */
export const PoolDevice = z.object({
  serial_number: z.string(),
  ip_address: z.string().nullable(),
  firmware_version: z.string().nullable(),
  contacts: z.number().int(),
  first_seen_at: Timestamp,
  last_seen_at: Timestamp,
});

/** At most this many unknown devices are kept (the pool does not grow past it: newcomers are not noted). */
export const POOL_LIMIT = 500;

/** The pool of unregistered devices, the most recently seen first. */
export const devicePool = defineCommand({
  id: 'device.pool',
  http: { method: 'GET', path: '/devices/pool' },
  args: NoArgs,
  result: z.object({ data: z.array(PoolDevice) }),
  gates: { anyPermission: ['devices.create'] },
});

/** Registers a device of the pool into a group (over HTTP, with a password issued as for any device). */
export const deviceFromPool = defineCommand({
  id: 'device.from_pool',
  http: { method: 'POST', path: '/devices/from-pool' },
  args: z
    .object({
      serial_number: SerialNumber,
      domain_id: z.number().int().min(1).max(2_147_483_647),
      name: z.string().trim().min(1).max(255),
      type: DeviceType.default('panel'),
    })
    .strict(),
  result: z.object({ id: z.number().int(), name: z.string(), serial_number: z.string() }),
  gates: { anyPermission: ['devices.create'] },
});

// ----- the home's pictures (issue 25 item 11) -----

/** One hour of the last day: what the devices did in it, and how many were online at its end. */
export const DeviceActivityHour = z.object({
  /** the hour's start (the server's clock) */
  at: Timestamp,
  /** device events stored in the hour; null without `devices.view_events` */
  events: z.number().int().nullable(),
  /** access decisions: identifiers granted and refused; null without `devices.view_events` */
  granted: z.number().int().nullable(),
  denied: z.number().int().nullable(),
  /** devices online at the end of the hour (at now, for the current one) */
  online: z.number().int(),
  /** device tasks that failed in the hour; null without a task permission */
  failed_tasks: z.number().int().nullable(),
});
export type DeviceActivityHour = z.infer<typeof DeviceActivityHour>;

/**
 * The last 24 hours of the devices the caller sees, hour by hour, oldest first (the home's charts): events,
 * access decisions, devices online, failed tasks; and the devices seen and the tasks failing now.
 */
export const deviceActivity = defineCommand({
  id: 'device.activity',
  http: { method: 'GET', path: '/devices/activity' },
  args: NoArgs,
  result: z.object({
    hours: z.array(DeviceActivityHour),
    devices: z.number().int(),
    failing_tasks: z.number().int().nullable(),
  }),
  gates: { anyPermission: ['devices.view', 'devices.view_descendant', 'devices.view_all'] },
});
