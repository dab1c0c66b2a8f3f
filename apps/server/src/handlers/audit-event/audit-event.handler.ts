import { sql, type Kysely } from 'kysely';
import { auditEventFields, type AuditEvent } from '@lintel/commands';
import type { DB } from '../../db/schema';
import { runList, type ListSource } from '../../engine/list';
import { callerOf } from '../../engine/family';
import type { SomeHandlers } from '../../http/handler';

async function loadEvents(q: Kysely<DB>, ids: readonly number[]): Promise<AuditEvent[]> {
  if (!ids.length) return [];
  const rows = await sql<{ id: number; created_at: Date; user_id: number | null; user_name: string | null; action: string; entity: string | null; entity_id: string | null; ip: string | null; data: Record<string, unknown> }>`
    select t.id, t.created_at, t.user_id, u.name as user_name, t.action, t.entity, t.entity_id, t.ip, t.data
    from audit_events t left join users u on u.id = t.user_id where t.id in (${sql.join(ids)})`.execute(q);
  const byId = new Map(rows.rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => {
    const r = byId.get(id);
    if (!r) return [];
    return [{ id: r.id, created_at: r.created_at.toISOString(), user: r.user_id !== null ? { id: r.user_id, name: r.user_name ?? '' } : null, action: r.action, entity: r.entity, entity_id: r.entity_id, ip: r.ip, data: r.data }];
  });
}

const source: ListSource<AuditEvent> = {
  from: sql`audit_events t`,
  filterable: Object.fromEntries(Object.entries(auditEventFields).filter(([, f]) => f.filterable)),
  sortable: Object.entries(auditEventFields).filter(([, f]) => f.sortable).map(([k]) => k),
  columns: {
    id: { expr: sql`t.id` },
    created_at: { expr: sql`t.created_at` },
    user: { expr: sql`t.user_id` },
    action: { expr: sql`t.action` },
    entity: { expr: sql`t.entity` },
    entity_id: { expr: sql`t.entity_id` },
    ip: { expr: sql`t.ip` },
  },
  search: [sql`t.action`, sql`t.entity`, sql`t.ip`],
  load: loadEvents,
};

export const auditEventHandlers = {
  /** The project's audit log, newest first unless sorted otherwise. */
  'audit_event.list': async (ctx, args) => {
    const caller = callerOf(ctx);
    return runList(ctx.app.db, source, { ...args, sort: args.sort ?? '-id' }, sql<boolean>`t.project_id = ${caller.projectId}`);
  },
} satisfies SomeHandlers;
