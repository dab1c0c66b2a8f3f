import { z } from 'zod';
import { Timeouts } from '@lintel/core';
import { defineCommand } from '../command';
import { IdParam } from '../resource';
import { Timestamp } from '../refs';
import { DeviceInfo } from './device.extras';
import { DeviceProtocol, DeviceStatus, DeviceType, SerialNumber } from './device.resource';

// ----- remote control (spec part 1 §2.1, §4 "Remote control needs a device with protocol mqtt that is online";
// part 2 §7 "remote-control session PUT {serial_number, login, password} (timeout 60 s) and PATCH") -----
// Every remote action needs `devices.edit` and the device within the caller's scope, and an online device on
// mqtt: otherwise `device_offline` / `device_protocol_not_mqtt` (docs/decisions.md "Remote control").

/** The device a remote-control session or action is about. */
export const RemoteDevice = z.object({
  id: z.number().int(),
  name: z.string(),
  serial_number: z.string(),
  type: DeviceType,
  protocol: DeviceProtocol,
  status: DeviceStatus,
  last_heartbeat_at: Timestamp.nullable(),
});
export type RemoteDevice = z.infer<typeof RemoteDevice>;

/**
 * A remote-control session: the short-lived handle the remote-control tab is opened with (its address holds
 * this id, never the device's login or password). It ends `expires_at` unless kept alive (PATCH).
 */
export const RemoteSession = z.object({
  session: z.string(),
  expires_at: Timestamp,
  device: RemoteDevice,
});
export type RemoteSession = z.infer<typeof RemoteSession>;

/** A lock of the device: 1 (first) or 2 (second), as the device's API numbers them. */
export const LockNumber = z.coerce.number().int().min(1).max(2);

/** What the device says of itself and of its locks, read through the gateway. */
export const RemoteState = z.object({
  device: RemoteDevice,
  info: DeviceInfo,
  /** the device's locks as it reports them (empty when it does not) */
  locks: z.array(z.object({ lock: z.number().int(), open: z.boolean() })),
  read_at: Timestamp,
});
export type RemoteState = z.infer<typeof RemoteState>;

const remoteGate = { anyPermission: ['devices.edit' as const] };

/**
 * Opens a remote-control session for an online mqtt device (PUT, timeout 60 s). `login` and `password`, when
 * given, are the device's own credentials (`device_login` / `device_password`), checked against the stored
 * ones; the reply is a session id the tab is opened with.
 */
export const deviceRemoteSession = defineCommand({
  id: 'device.remote_session',
  http: { method: 'PUT', path: '/devices/remote-control/session' },
  args: z
    .object({
      serial_number: SerialNumber,
      login: z.string().max(64).optional(),
      password: z.string().max(64).meta({ secret: true }).optional(),
    })
    .strict(),
  result: RemoteSession,
  gates: remoteGate,
  timeoutMs: Timeouts.remoteControl,
  hidden: true,
});

/** Keeps a remote-control session alive (another 60 s) and says how its device is now. */
export const deviceRemoteSessionKeepalive = defineCommand({
  id: 'device.remote_session_keepalive',
  http: { method: 'PATCH', path: '/devices/remote-control/session' },
  args: z.object({ session: z.string().min(1).max(128) }).strict(),
  result: RemoteSession,
  gates: remoteGate,
  hidden: true,
});

/** Reads the device's state through the gateway: its description (`/api/info`) and its locks. */
export const deviceRemoteState = defineCommand({
  id: 'device.remote_state',
  http: { method: 'GET', path: '/devices/:id/remote' },
  args: IdParam,
  result: RemoteState,
  gates: remoteGate,
  timeoutMs: Timeouts.remoteControl,
});

/** Opens a lock of the device now (the device's `lock/open/remote/accepted/{lock}`). */
export const deviceRemoteOpenLock = defineCommand({
  id: 'device.remote_open_lock',
  http: { method: 'POST', path: '/devices/:id/remote/open-lock' },
  args: IdParam.extend({ lock: LockNumber.default(1) }).strict(),
  result: z.object({ lock: z.number().int(), opened: z.literal(true) }),
  gates: remoteGate,
  timeoutMs: Timeouts.remoteControl,
});

/** Reboots the device now (its `system/reboot/run`), not as a queued task. */
export const deviceRemoteReboot = defineCommand({
  id: 'device.remote_reboot',
  http: { method: 'POST', path: '/devices/:id/remote/reboot' },
  args: IdParam,
  result: z.object({ rebooting: z.literal(true) }),
  gates: remoteGate,
  timeoutMs: Timeouts.remoteControl,
});
