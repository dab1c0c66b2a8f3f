import { sql, type Kysely } from 'kysely';
import { AuditEvent, auditEventFields } from '@lintel/commands';
import type { DB } from '../../db/schema';
import { journalPlan, journalStore, runJournal } from '../../engine/journal';
import { exportReply } from '../../engine/export';
import { callerOf } from '../../engine/family';
import { declareEntityNames, entityKey, entityNames, tableNames } from '../../engine/entity-names';
import type { HandlerContext, SomeHandlers } from '../../pipeline/handler';

// the entities of the audit log that are not families: a sign-in names the account (the person's user in
// the project is its name), a profile change the user
declareEntityNames('account', async (q, projectId, ids) => {
  if (!ids.length) return new Map();
  const r = await sql<{ account_id: number; name: string }>`
    select account_id, name from users where project_id = ${projectId} and account_id in (${sql.join(ids)})`.execute(
    q,
  );
  return new Map(r.rows.map((row) => [row.account_id, row.name]));
});
declareEntityNames('profile', tableNames(sql`users t`, sql`t.name`));

/** The name an event recorded of its row (`data.after` or `data.before`): what a deleted row was called. */
function recordedName(data: Record<string, unknown>): string | null {
  for (const k of ['after', 'before']) {
    const rec = data[k];
    if (rec && typeof rec === 'object' && typeof (rec as { name?: unknown }).name === 'string')
      return (rec as { name: string }).name;
  }
  return null;
}

async function loadEvents(q: Kysely<DB>, ids: readonly number[]): Promise<AuditEvent[]> {
  if (!ids.length) return [];
  const rows = await sql<{
    id: number;
    project_id: number | null;
    created_at: Date;
    user_id: number | null;
    user_name: string | null;
    action: string;
    entity: string | null;
    entity_id: string | null;
    ip: string | null;
    data: Record<string, unknown>;
  }>`
    select t.id, t.project_id, t.created_at, t.user_id, u.name as user_name, t.action, t.entity, t.entity_id,
      t.ip, t.data
    from audit_events t left join users u on u.id = t.user_id where t.id in (${sql.join(ids)})`.execute(q);
  // the rows' names now, a query per entity and project of the page
  const refsByProject = new Map<number, { entity: string; id: number }[]>();
  for (const r of rows.rows) {
    if (r.project_id === null || !r.entity || !r.entity_id || !/^\d{1,9}$/.test(r.entity_id)) continue;
    const refs = refsByProject.get(r.project_id) ?? [];
    refs.push({ entity: r.entity, id: Number(r.entity_id) });
    refsByProject.set(r.project_id, refs);
  }
  const names = new Map<string, string>();
  for (const [project, refs] of refsByProject)
    for (const [k, v] of await entityNames(q, project, refs)) names.set(`${project}/${k}`, v);
  const byId = new Map(rows.rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => {
    const r = byId.get(id);
    if (!r) return [];
    const now =
      r.project_id !== null && r.entity && r.entity_id
        ? names.get(`${r.project_id}/${entityKey(r.entity, Number(r.entity_id))}`)
        : undefined;
    return [
      {
        id: r.id,
        created_at: r.created_at.toISOString(),
        user: r.user_id !== null ? { id: r.user_id, name: r.user_name ?? '' } : null,
        action: r.action,
        entity: r.entity,
        entity_name: now ?? (r.entity ? recordedName(r.data) : null),
        entity_id: r.entity_id,
        ip: r.ip,
        data: r.data,
      },
    ];
  });
}

/** The audit log as a journal: kept LINTEL_AUDIT_RETENTION_DAYS days (default 365). */
export const auditEventStore = journalStore<AuditEvent>({
  noun: 'audit_event',
  table: 'audit_events',
  timeColumn: 'created_at',
  retention: { defaultDays: 365, env: 'LINTEL_AUDIT_RETENTION_DAYS' },
  from: sql`audit_events t`,
  filterable: Object.fromEntries(Object.entries(auditEventFields).filter(([, f]) => f.filterable)),
  sortable: Object.entries(auditEventFields)
    .filter(([, f]) => f.sortable)
    .map(([k]) => k),
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
});

/** Who sees which events: the audit log of the caller's project (the gate is `audit.view`). */
const visible = (ctx: HandlerContext) => sql<boolean>`t.project_id = ${callerOf(ctx).projectId}`;

export const auditEventHandlers = {
  /** The project's audit log, newest first (keyset by time and id). */
  'audit_event.list': async (ctx, args) => runJournal(ctx.app.db, auditEventStore, args, visible(ctx)),

  /** The events of the query, all of them, streamed (engine/export.ts). */
  'audit_event.export': async (ctx, args) =>
    exportReply(
      ctx.app,
      { load: auditEventStore.load, record: AuditEvent },
      journalPlan(auditEventStore, args, visible(ctx)),
      args.format,
    ),
} satisfies SomeHandlers;
