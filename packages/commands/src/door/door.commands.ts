import { z } from 'zod';
import { Timeouts } from '@lintel/core';
import { defineCommand } from '../command';
import { Ref } from '../refs';
import { IdParam } from '../resource';
import { CallGates } from '../call/call.commands';
import { DeviceProtocol, DeviceStatus, DeviceType } from '../device/device.resource';
import { LockNumber } from '../device/device.remote';

/**
 * Doors for the concierge (issue 23 items 4 and 8; spec part 1 §2.5 "Door management: pick a door device, open
 * it, or call its SIP number", §3 "Concierge device: token, name, sip_number.number"; part 2 §7 "Call
 * management: GET /calls/management/devices; POST /calls/management/devices/open/{token}"). A door is a
 * device that opens (a panel, an access controller, a barrier) within the caller's call scope; the spec's
 * token is the device's id here (docs/decisions.md "Doors for the concierge").
 */

/** The device types that hold a lock a concierge may open. */
export const DoorTypes = ['panel', 'accesscontroller', 'barrier'] as const;

export const Door = z.object({
  id: z.number().int(),
  name: z.string(),
  type: DeviceType,
  protocol: DeviceProtocol,
  status: DeviceStatus,
  serial_number: z.string(),
  domain: Ref.nullable(),
  /** the device's active SIP number, to call it; null when it has none */
  sip_number: z.object({ number: z.string() }).nullable(),
});
export type Door = z.infer<typeof Door>;

/** Door management is call management: the same gates and licence as the calls in progress. */
const doorGates = { anyPermission: [...CallGates], licence: ['sip' as const] };

/** The doors the caller may open, by name; `search` in the name, serial number or SIP number. */
export const doorList = defineCommand({
  id: 'door.list',
  http: { method: 'GET', path: '/calls/management/devices' },
  args: z
    .object({
      search: z.string().max(100).optional(),
      limit: z.coerce.number().int().min(1).max(200).default(50),
    })
    .strict(),
  result: z.object({ data: z.array(Door), meta: z.object({ total: z.number().int() }) }),
  gates: doorGates,
});

/** Opens a door now: the device's lock (1 unless said) through the device gateway. */
export const doorOpen = defineCommand({
  id: 'door.open',
  http: { method: 'POST', path: '/calls/management/devices/open/:id' },
  args: IdParam.extend({ lock: LockNumber.default(1) }).strict(),
  result: z.object({ id: z.number().int(), lock: z.number().int(), opened: z.literal(true) }),
  gates: doorGates,
  timeoutMs: Timeouts.remoteControl,
});
