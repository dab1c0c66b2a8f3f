import { z, type ZodType } from 'zod';
import { Defaults, RealtimeTopics } from '@lintel/core';
import { defineResource } from '../resource';
import { Description, Id, Ref, Text, Timestamp } from '../refs';

/** The kinds of device of spec part 1 §3. */
export const DeviceTypes = [
  'panel',
  'monitor',
  'accesscontroller',
  'liftcontroller',
  'ip_camera',
  'barrier',
] as const;
export const DeviceType = z.enum(DeviceTypes);
/** How the platform and the device talk (../shared/DEVICES.md): HTTP both ways, or MQTT through a broker. */
export const DeviceProtocol = z.enum(Defaults.deviceProtocols);
export const DeviceStatus = z.enum(['online', 'offline']);

const isIpv4 = (s: string) => z.ipv4().safeParse(s).success;
const isIpv6 = (s: string) => z.ipv6().safeParse(s).success;
/** An IPv4 or IPv6 address (spec part 2 §5 "a valid URL or IP"): a malformed one is the rule `ip_address`. */
export const IpAddress = z
  .string()
  .trim()
  .max(45)
  .refine((s) => isIpv4(s) || isIpv6(s), { message: 'ip_address' });
export const Port = z.number().int().min(1).max(65_535);
/**
 * A serial number is the device's login and names its MQTT topics (`device/request/v0/{serial}`), so it holds
 * no character a topic gives meaning to (`/`, `+`, `#`) and no space.
 */
export const SerialNumber = z
  .string()
  .trim()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9._:-]+$/, { message: 'serial_chars' });

/** Coordinates: a number, or a typed text whose comma is a decimal point (spec part 2 §5). */
const coordinate = (limit: number) =>
  z.preprocess(
    (v) => (typeof v === 'string' ? (v.trim() === '' ? null : Number(v.trim().replace(',', '.'))) : v),
    z.number().min(-limit).max(limit).nullable(),
  );

/**
 * The device's settings by section, with the spec's defaults (part 1 §3, part 2 §9). The sections the spec
 * names without fields hold what a device maker would put there (docs/decisions.md "Devices").
 */
export const DeviceSettings = z.object({
  mqtt: z
    .object({
      keepalive: z.number().int().min(5).max(3600).default(60),
      qos: z.union([z.literal(0), z.literal(1)]).default(1),
    })
    .default({ keepalive: 60, qos: 1 }),
  sip: z
    .object({
      talk_timeout: z.number().int().min(10).max(3600).default(Defaults.talkTimeoutS),
      transport: z.enum(['UDP', 'TCP', 'TLS']).default(Defaults.transport),
      rtp_profile: z.number().int().min(0).max(9).default(0),
    })
    .default({ talk_timeout: Defaults.talkTimeoutS, transport: Defaults.transport, rtp_profile: 0 }),
  address: z
    .object({
      reregister_interval: z.number().int().min(30).max(86_400).default(Defaults.reregisterIntervalS),
      panel_mode: z.enum(['wall', 'unit', 'personal']).default('wall'),
      building: z.number().int().min(1).max(9999).nullable().default(null),
      unit: z.number().int().min(0).max(99).nullable().default(null),
      floor: z.number().int().min(0).max(98).nullable().default(null),
      room: z.number().int().min(0).max(99).nullable().default(null),
    })
    .default({
      reregister_interval: Defaults.reregisterIntervalS,
      panel_mode: 'wall',
      building: null,
      unit: null,
      floor: null,
      room: null,
    }),
  network: z
    .object({
      dhcp: z.boolean().default(true),
      subnet: z.string().trim().max(45).default(''),
      gateway: z.string().trim().max(45).default(''),
      dns: z.string().trim().max(255).default(''),
      mac: z
        .string()
        .trim()
        .regex(/^([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$|^$/, { message: 'mac_address' })
        .default(''),
    })
    .default({ dhcp: true, subnet: '', gateway: '', dns: '', mac: '' }),
  additional: z.object({ lock: z.enum(['all', 'first', 'second']).default('all') }).default({ lock: 'all' }),
  face_recognition: z
    .object({
      recognition_mode: z.enum(['3D', '2D']).default('3D'),
      similarity: z.enum(['low', 'medium', 'high']).default('high'),
    })
    .default({ recognition_mode: '3D', similarity: 'high' }),
  lift_controller: z
    .object({
      relay_open_time: z.number().int().min(1).max(600).default(Defaults.liftRelayOpenTimeS),
      device_mode: z.enum(['call-up', 'access']).default('call-up'),
      relay_mode: z.enum(['COM-NC', 'COM-NO']).default('COM-NC'),
    })
    .default({ relay_open_time: Defaults.liftRelayOpenTimeS, device_mode: 'call-up', relay_mode: 'COM-NC' }),
  alpr_camera: z
    .object({
      is_enabled: z.boolean().default(false),
      min_confidence: z.number().int().min(0).max(100).default(80),
    })
    .default({ is_enabled: false, min_confidence: 80 }),
  /**
   * the Axxon One camera the device shows (its display id on the server of `integration_id`, an integration
   * serving the device's group: else `integration_not_allowed`)
   */
  integration_axxon: z
    .object({
      is_enabled: z.boolean().default(false),
      integration_id: Id.nullable().default(null),
      camera_id: z.string().trim().max(255).default(''),
    })
    .default({ is_enabled: false, integration_id: null, camera_id: '' }),
});
export type DeviceSettings = z.output<typeof DeviceSettings>;

/** What the platform watches: heartbeats (offline after three missed) and logs pushed as they happen. */
export const DeviceManagement = z
  .object({ heartbeat: z.boolean().default(true), realtime_logging: z.boolean().default(true) })
  .default({ heartbeat: true, realtime_logging: true });

export const Device = z.object({
  id: z.number().int(),
  name: z.string(),
  description: z.string(),
  type: DeviceType,
  model: z.string(),
  ip_address: z.string().nullable(),
  port: z.number().int(),
  /** the device's login to the platform and its broker: its serial number */
  login: z.string(),
  /** never the stored password: the dummy placeholder when one is stored, else empty */
  password: z.string(),
  device_login: z.string(),
  device_password: z.string(),
  serial_number: z.string(),
  domain_id: z.number().int(),
  domain: Ref,
  protocol: DeviceProtocol,
  location_latitude: z.number().nullable(),
  location_longitude: z.number().nullable(),
  get_logs: z.boolean(),
  management: z.object({ heartbeat: z.boolean(), realtime_logging: z.boolean() }),
  device_settings: DeviceSettings,
  status: DeviceStatus,
  last_heartbeat_at: Timestamp.nullable(),
  status_changed_at: Timestamp.nullable(),
  firmware_version: z.string().nullable(),
  created_at: Timestamp,
  created_by_user: Ref.nullable(),
});
export type Device = z.infer<typeof Device>;

const DeviceInput = z.object({
  name: Text(255),
  description: Description.optional(),
  type: DeviceType,
  model: z.string().trim().max(64).optional(),
  ip_address: IpAddress.nullable().optional(),
  port: Port.default(Defaults.devicePort),
  serial_number: SerialNumber,
  /**
   * the device's password to the platform and its broker (at most 32, as the device's management settings
   * take): issued by Lintel when left out; the dummy placeholder keeps the stored one
   */
  password: z.string().min(8).max(32).meta({ secret: true }).optional(),
  device_login: z.string().trim().max(64).optional(),
  /** the platform's password to the device's own API */
  device_password: z.string().max(64).meta({ secret: true }).optional(),
  domain_id: Id,
  protocol: DeviceProtocol.default('http'),
  location_latitude: coordinate(90).optional(),
  location_longitude: coordinate(180).optional(),
  get_logs: z.boolean().default(true),
  management: DeviceManagement,
  device_settings: DeviceSettings.default(DeviceSettings.parse({})),
});

/**
 * The same object for a PATCH: every field optional and without its default, down through the nested
 * sections, so a change of one setting is merged into what is stored instead of resetting the others.
 */
function patchOf(o: z.ZodObject): z.ZodObject {
  const shape: Record<string, ZodType> = {};
  for (const [key, field] of Object.entries(o.shape as Record<string, ZodType>)) {
    let inner: ZodType = field;
    while (inner instanceof z.ZodDefault || inner instanceof z.ZodOptional)
      inner = (inner as z.ZodDefault | z.ZodOptional).unwrap() as ZodType;
    if (inner instanceof z.ZodObject) inner = patchOf(inner);
    shape[key] = inner.optional();
  }
  return z.object(shape).strict();
}

type DeepPartial<T> = T extends readonly unknown[]
  ? T
  : T extends object
    ? { [K in keyof T]?: DeepPartial<T[K]> }
    : T;
type DevicePatchShape = { [K in keyof typeof DeviceInput.shape]: ZodType };
/** What a device update may carry: any field, and any part of the nested settings. */
export const DevicePatch = patchOf(DeviceInput) as unknown as z.ZodObject<DevicePatchShape> &
  ZodType<DeepPartial<z.output<typeof DeviceInput>>>;
export type DevicePatch = DeepPartial<z.output<typeof DeviceInput>>;

export const deviceResource = defineResource({
  noun: 'device',
  segment: 'devices',
  record: Device,
  create: DeviceInput.strict(),
  update: DevicePatch,
  fields: {
    id: { kind: 'number', default: true, filterable: true, sortable: true },
    name: { kind: 'text', default: true, filterable: true, sortable: true },
    type: { kind: 'enum', values: DeviceTypes, default: true, filterable: true, sortable: true },
    model: { kind: 'text', filterable: true, sortable: true },
    serial_number: { kind: 'text', default: true, filterable: true, sortable: true },
    ip_address: { kind: 'text', default: true, filterable: true, sortable: true },
    port: { kind: 'number', filterable: true, sortable: true },
    protocol: { kind: 'enum', values: Defaults.deviceProtocols, default: true, filterable: true },
    domain: { kind: 'ref', default: true, filterable: true, sortable: true },
    status: {
      kind: 'enum',
      values: ['online', 'offline'],
      tones: { online: 'good', offline: 'bad' },
      default: true,
      filterable: true,
      sortable: true,
    },
    last_heartbeat_at: { kind: 'date', filterable: true, sortable: true },
    description: { kind: 'text', wide: true, filterable: true },
    created_at: { kind: 'date', filterable: true, sortable: true },
  },
  gates: {
    view: ['devices.view', 'devices.view_descendant', 'devices.view_all'],
    create: ['devices.create'],
    edit: ['devices.edit'],
    delete: ['devices.delete'],
  },
  ui: { path: '/devices', icon: 'device', section: 'devices', goKey: 'd' },
  // spec part 2 §6: view (the caller's groups), view descendant (their subtrees), view all; the device's
  // group places it. A new device goes in the caller's subtree; edit and delete reach every device he sees.
  scopes: {
    owner: { group: 'domain_id', creator: 'created_by' },
    view: { 'devices.view_all': 'all', 'devices.view_descendant': 'descendants', 'devices.view': 'domain' },
    create: { 'devices.create': 'descendants' },
    edit: { 'devices.edit': 'all' },
    delete: { 'devices.delete': 'all' },
  },
  unique: ['serial_number'],
  search: ['name', 'serial_number', 'ip_address'],
  // the record shows the group as `domain` ({id, name}); lists filter `domain` by its id
  refs: { domain_id: { family: 'group', many: false, record: 'domain' } },
  picker: { hint: 'serial_number' },
  // issue 25 item 3: every list of devices follows their status live (the gateway's status changes)
  live: [
    {
      topic: RealtimeTopics.devices,
      event: 'DeviceStatusChangedEvent',
      id: 'deviceId',
      set: { status: 'status', status_changed_at: 'at' },
    },
  ],
});
