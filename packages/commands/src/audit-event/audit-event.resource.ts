import { z } from 'zod';
import { defineJournal } from '../journal';
import { Ref, Timestamp } from '../refs';
import type { ResourceField } from '../resource';

export const AuditEvent = z.object({
  id: z.number().int(),
  created_at: Timestamp,
  user: Ref.nullable(),
  action: z.string(),
  entity: z.string().nullable(),
  /** the name of the row the event is about: its name now, else the one the event recorded (a deleted row) */
  entity_name: z.string().nullable(),
  entity_id: z.string().nullable(),
  ip: z.string().nullable(),
  data: z.record(z.string(), z.unknown()),
});
export type AuditEvent = z.infer<typeof AuditEvent>;

export const auditEventFields: Record<string, ResourceField> = {
  // a journal sorts by its time only (newest or oldest first)
  id: { kind: 'number', default: true, filterable: true },
  created_at: { kind: 'date', default: true, filterable: true, sortable: true },
  user: { kind: 'ref', default: true, filterable: true },
  action: { kind: 'text', default: true, filterable: true },
  entity: { kind: 'text', default: true, filterable: true },
  entity_name: { kind: 'text', default: true },
  // the name says which row; the id stays to filter by and to show on request
  entity_id: { kind: 'text', filterable: true },
  ip: { kind: 'text', default: true, filterable: true },
};

/** The audit log is a journal: newest first, keyset paged by (created_at, id), kept for a set number of days. */
export const auditEventJournal = defineJournal({
  noun: 'audit_event',
  segment: 'audit-events',
  record: AuditEvent,
  time: 'created_at',
  fields: auditEventFields,
  gates: { view: ['audit.view'] },
});

export const auditEventList = auditEventJournal.list;
export const auditEventExport = auditEventJournal.export;
