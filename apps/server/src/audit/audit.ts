import type { Kysely, Transaction } from 'kysely';
import type { AuditAction } from '@lintel/core';
import type { DB } from '../db/schema';

export interface AuditEntry {
  projectId: number | null;
  userId: number | null;
  /** one of the declared actions (`AuditActions`), each with its words in both languages */
  action: AuditAction;
  entity?: string;
  entityId?: string | number;
  ip?: string | null;
  data?: Record<string, unknown>;
}

/** Writes one audit event: who, when, what, from where, and the before/after in `data`. */
export async function audit(q: Kysely<DB> | Transaction<DB>, e: AuditEntry): Promise<void> {
  await q
    .insertInto('audit_events')
    .values({
      project_id: e.projectId,
      user_id: e.userId,
      action: e.action,
      entity: e.entity ?? null,
      entity_id: e.entityId === undefined ? null : String(e.entityId),
      ip: e.ip ?? null,
      data: JSON.stringify(e.data ?? {}),
    })
    .execute();
}
