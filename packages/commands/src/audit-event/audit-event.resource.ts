import { z } from 'zod';
import { ListQuery, listReply } from '@lintel/core';
import { defineCommand } from '../command';
import { Ref, Timestamp } from '../refs';
import type { ResourceField } from '../resource';

export const AuditEvent = z.object({
  id: z.number().int(),
  created_at: Timestamp,
  user: Ref.nullable(),
  action: z.string(),
  entity: z.string().nullable(),
  entity_id: z.string().nullable(),
  ip: z.string().nullable(),
  data: z.record(z.string(), z.unknown()),
});
export type AuditEvent = z.infer<typeof AuditEvent>;

export const auditEventFields: Record<string, ResourceField> = {
  id: { kind: 'number', default: true, filterable: true, sortable: true },
  created_at: { kind: 'date', default: true, filterable: true, sortable: true },
  user: { kind: 'ref', default: true, filterable: true },
  action: { kind: 'text', default: true, filterable: true, sortable: true },
  entity: { kind: 'text', default: true, filterable: true, sortable: true },
  entity_id: { kind: 'text', default: true, filterable: true },
  ip: { kind: 'text', default: true, filterable: true },
};

export const auditEventList = defineCommand({
  id: 'audit_event.list',
  http: { method: 'GET', path: '/audit-events' },
  args: ListQuery,
  result: listReply(AuditEvent),
  gates: { anyPermission: ['audit.view'] },
});
