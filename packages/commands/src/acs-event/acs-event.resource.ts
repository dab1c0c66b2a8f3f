import { z } from 'zod';
import { DecisionReasons } from '@lintel/core';
import { defineJournal } from '../journal';
import { Ref, Timestamp } from '../refs';
import type { ResourceField } from '../resource';

/**
 * The access-control log (spec part 2 §7 "access-control logs", issue 21 item 5): every decision at a door —
 * an identifier presented to a device, granted or denied — naming the identifier, its owner, the device, the
 * decision and, for a refusal, the reason as a catalogue code. Made from what the devices push (their logs,
 * `device_gateway.logs`): the device's own decision, with the reason the platform knows better when it knows
 * the identifier (a panel's "unknown" for a revoked card is `identifier_revoked`). A journal (keyset by time
 * and id, a retention), live on `private-access-control`, read with `access_control_events.view`.
 */

export const AcsDecisions = ['granted', 'denied'] as const;
export const AcsDecision = z.enum(AcsDecisions);
export const AcsReason = z.enum(DecisionReasons);

export const AcsEvent = z.object({
  id: z.number().int(),
  /** when it happened, by the device's clock (never later than the platform received it) */
  created_at: Timestamp,
  received_at: Timestamp,
  /** the device now (null: deleted since) */
  device: Ref.nullable(),
  serial_number: z.string(),
  /** the device's group when it decided */
  domain: Ref.nullable(),
  /** the identifier the platform knows by that type and number (null: none) */
  identifier: Ref.nullable(),
  identifier_type: z.string().nullable(),
  identifier_number: z.string().nullable(),
  /** the identifier's owner (a user) at the time; null for a guest identifier or an unknown one */
  owner: Ref.nullable(),
  /** `user`, `guest`, or null when the platform does not know the identifier */
  owner_type: z.enum(['user', 'guest']).nullable(),
  decision: AcsDecision,
  /** a refusal's reason, a catalogue code (errors.http.<reason>) */
  reason: AcsReason.nullable(),
  /** the rule that allowed or prohibited, when the platform knows it */
  rule: Ref.nullable(),
  lock: z.number().int().nullable(),
  /** the device's own id of the event */
  event_id: z.string(),
});
export type AcsEvent = z.infer<typeof AcsEvent>;

export const acsEventFields: Record<string, ResourceField> = {
  created_at: { kind: 'date', default: true, filterable: true, sortable: true },
  device: { kind: 'ref', default: true, filterable: true },
  identifier_number: { kind: 'text', default: true, filterable: true },
  identifier_type: { kind: 'text', default: true, filterable: true },
  owner: { kind: 'ref', default: true, filterable: true },
  decision: { kind: 'enum', values: AcsDecisions, default: true, filterable: true },
  reason: { kind: 'enum', values: DecisionReasons, default: true, filterable: true },
  lock: { kind: 'number', filterable: true },
  identifier: { kind: 'ref', filterable: true },
  rule: { kind: 'ref', filterable: true },
  owner_type: { kind: 'enum', values: ['user', 'guest'], filterable: true },
  serial_number: { kind: 'text', filterable: true },
  domain: { kind: 'ref', filterable: true },
  received_at: { kind: 'date', filterable: true },
  event_id: { kind: 'text', filterable: true },
  id: { kind: 'number', filterable: true },
};

/** The ACS log: newest first, keyset paged by (created_at, id), kept a set number of days. */
export const acsEventJournal = defineJournal({
  noun: 'acs_event',
  segment: 'access-control/events',
  record: AcsEvent,
  time: 'created_at',
  fields: acsEventFields,
  gates: { view: ['access_control_events.view'] },
});

export const acsEventList = acsEventJournal.list;
export const acsEventExport = acsEventJournal.export;
