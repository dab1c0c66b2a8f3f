import { z } from 'zod';
import { AlarmSensors, DecisionReasons, IdentifierTypes } from '@lintel/core';
import { defineCommand } from '../command';
import { defineJournal } from '../journal';
import { Ref, Timestamp } from '../refs';
import type { ResourceField } from '../resource';

/**
 * Device events (spec part 1 §3 "device event", part 2 §7 Devices "events list and download"): what the
 * devices push — an identifier used or refused, a door opened, a call, an alarm sensor — kept as a journal
 * (keyset by time and id, a retention), read by those with `devices.view_events` within their device scope.
 */

/** What happened at the device (../shared/DEVICES.md: "identifier used or refused, door opened, calls, alarm sensors"). */
export const DeviceEventKinds = [
  'identifier_used',
  'identifier_refused',
  'door_opened',
  'call',
  'alarm',
] as const;
export const DeviceEventKind = z.enum(DeviceEventKinds);

/** How it ended: access granted or denied, a call answered, missed or rejected, a sensor triggered. */
export const DeviceEventResults = [
  'granted',
  'denied',
  'answered',
  'missed',
  'rejected',
  'triggered',
] as const;
export const DeviceEventResult = z.enum(DeviceEventResults);

/** Why an identifier was refused, as a device says it. */
export const DeviceEventReasons = ['unknown', 'expired', 'revoked', 'schedule', 'passes', 'other'] as const;

/** How a door was opened without an identifier. */
export const DoorOpenSources = ['button', 'remote', 'emergency', 'call'] as const;

export const DeviceEvent = z.object({
  id: z.number().int(),
  /** when it happened, by the device's clock (never later than the platform received it) */
  created_at: Timestamp,
  /** when the platform stored it */
  received_at: Timestamp,
  /** the device now (null: deleted since) */
  device: Ref.nullable(),
  /** the device's serial number when it pushed the event */
  serial_number: z.string(),
  /** the device's group when it pushed the event: who may read the event */
  domain: Ref.nullable(),
  kind: DeviceEventKind,
  identifier_type: z.string().nullable(),
  identifier_number: z.string().nullable(),
  /** the lock, 1 (first) or 2 (second) */
  lock: z.number().int().nullable(),
  result: DeviceEventResult.nullable(),
  /** a refusal's reason, a door's opening source, an alarm's sensor */
  reason: z.string().nullable(),
  /** the number called or calling */
  number: z.string().nullable(),
  /** the event's picture, `/storage/logs/{image}` */
  image: z.string().nullable(),
  /** the device's own id of the event (an event pushed twice is stored once) */
  event_id: z.string(),
});
export type DeviceEvent = z.infer<typeof DeviceEvent>;

export const deviceEventFields: Record<string, ResourceField> = {
  created_at: { kind: 'date', default: true, filterable: true, sortable: true },
  device: { kind: 'ref', default: true, filterable: true },
  kind: { kind: 'enum', values: DeviceEventKinds, default: true, filterable: true },
  identifier_number: { kind: 'text', default: true, filterable: true },
  identifier_type: { kind: 'text', filterable: true },
  lock: { kind: 'number', default: true, filterable: true },
  result: { kind: 'enum', values: DeviceEventResults, default: true, filterable: true },
  reason: { kind: 'text', filterable: true },
  number: { kind: 'text', filterable: true },
  image: { kind: 'text', default: true },
  serial_number: { kind: 'text', filterable: true },
  domain: { kind: 'ref', filterable: true },
  received_at: { kind: 'date', filterable: true },
  event_id: { kind: 'text', filterable: true },
  id: { kind: 'number', filterable: true },
};

/** The device events journal: newest first, keyset paged by (created_at, id), kept a set number of days. */
export const deviceEventJournal = defineJournal({
  noun: 'device_event',
  segment: 'devices/events',
  record: DeviceEvent,
  time: 'created_at',
  fields: deviceEventFields,
  gates: { view: ['devices.view_events'] },
});

export const deviceEventList = deviceEventJournal.list;
export const deviceEventExport = deviceEventJournal.export;

// ----- what a device pushes: `POST /logs` (over MQTT the uri of a push on server/request/v0/{serial}) -----

/** The device's identifier types (../shared/DEVICES.md) and the platform's own names are both taken. */
const DeviceIdentifierTypes = [...IdentifierTypes, 'inputCode', 'face_id'] as const;
/** A device's word for an identifier type, in the platform's vocabulary. */
export const identifierTypeOf = (t: string): string =>
  t === 'inputCode' ? 'access_code' : t === 'face_id' ? 'face' : t;

/** The largest picture a device may attach to an event (decoded). */
export const DEVICE_EVENT_IMAGE_MAX_BYTES = 256 * 1024;
/** How many events one push may carry. */
export const DEVICE_EVENTS_PER_PUSH = 100;

export const DeviceLogEntry = z
  .object({
    /** the device's own id of the event: unique per device, the key that stores a repeated push once */
    event_id: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[A-Za-z0-9._:-]+$/, { message: 'invalid_format' }),
    /** when it happened (ISO 8601); the platform's time when absent */
    time: z.iso
      .datetime({ offset: true })
      // not before 1970 (a device whose clock was never set says 1970): year 0000 made the database fail
      .refine((t) => Date.parse(t) >= 0, { message: 'invalid_format' })
      .optional(),
    kind: DeviceEventKind,
    identifier_type: z.enum(DeviceIdentifierTypes).optional(),
    identifier_number: z.string().min(1).max(100).optional(),
    lock: z.number().int().min(1).max(2).optional(),
    result: DeviceEventResult.optional(),
    // a device deciding with the platform's function (the simulator) says the catalogue's code itself
    reason: z
      .enum([...DeviceEventReasons, ...DoorOpenSources, ...AlarmSensors, ...DecisionReasons])
      .optional(),
    number: z.string().min(1).max(32).optional(),
    /** a JPEG or PNG picture of the event, base64 */
    image: z
      .string()
      .max(Math.ceil((DEVICE_EVENT_IMAGE_MAX_BYTES * 4) / 3) + 4)
      .regex(/^[A-Za-z0-9+/]+={0,2}$/, { message: 'invalid_format' })
      .optional(),
  })
  .strict();
export type DeviceLogEntry = z.infer<typeof DeviceLogEntry>;

/**
 * A device's logs (../shared/DEVICES.md: "pushes its logs"): up to 100 events a push. Answered once they are
 * stored — over HTTP the reply, over MQTT `{request_id, status, body}` on `server/response/v0/{serial}` — so a
 * device keeps an event until its push is answered and sends it again otherwise; an event it sent before
 * (its `event_id`) is not stored twice.
 */
export const deviceGatewayLogs = defineCommand({
  id: 'device_gateway.logs',
  http: { method: 'POST', path: '/device-gateway/logs' },
  access: 'device',
  hidden: true,
  args: z.object({ events: z.array(DeviceLogEntry).min(1).max(DEVICE_EVENTS_PER_PUSH) }).strict(),
  result: z.object({
    /** the events of the push now stored, by the device's ids (new or stored before) */
    stored: z.array(z.string()),
    /** how many of them were stored before (a push sent again) */
    duplicates: z.number().int(),
    /**
     * the events stored without the picture they carried: its device, or all devices together, at the
     * pictures' quota (LINTEL_DEVICE_PICTURES_MAX_BYTES, LINTEL_PICTURES_MAX_BYTES); absent when none
     */
    pictures_refused: z.array(z.string()).optional(),
  }),
});
