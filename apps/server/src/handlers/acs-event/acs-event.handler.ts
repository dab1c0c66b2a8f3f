import { sql, type Kysely } from 'kysely';
import { AcsEvent, acsEventFields } from '@lintel/commands';
import type { DB } from '../../db/schema';
import { journalPlan, journalStore, runJournal } from '../../engine/journal';
import { exportReply } from '../../engine/export';
import { callerOf } from '../../engine/family';
import type { HandlerContext, SomeHandlers } from '../../pipeline/handler';

interface AcsRow {
  id: number;
  created_at: Date;
  received_at: Date;
  device_id: number | null;
  device_name: string | null;
  serial_number: string;
  domain_id: number | null;
  domain_name: string | null;
  identifier_id: number | null;
  identifier_name: string | null;
  identifier_type: string | null;
  identifier_number: string | null;
  owner_id: number | null;
  owner_name: string | null;
  owner_type: 'user' | 'guest' | null;
  decision: AcsEvent['decision'];
  reason: AcsEvent['reason'];
  rule_id: number | null;
  rule_name: string | null;
  lock: number | null;
  event_id: string;
}

const ref = (id: number | null, name: string | null) =>
  id === null ? null : { id: Number(id), name: name ?? '' };

/** The rows by id, with the names as they are now (else as the event recorded them). */
async function loadEvents(q: Kysely<DB>, ids: readonly number[]): Promise<AcsEvent[]> {
  if (!ids.length) return [];
  const rows = await sql<AcsRow>`
    select t.id, t.created_at, t.received_at, t.device_id, d.name as device_name, t.serial_number, t.domain_id,
      g.name as domain_name, t.identifier_id, coalesce(nullif(i.name, ''), t.identifier_name) as identifier_name,
      t.identifier_type, t.identifier_number, t.owner_id, coalesce(u.name, t.owner_name) as owner_name,
      t.owner_type, t.decision, t.reason, t.rule_id, coalesce(r.name, t.rule_name) as rule_name, t.lock,
      t.event_id
    from acs_events t left join devices d on d.id = t.device_id left join domains g on g.id = t.domain_id
      left join identifiers i on i.id = t.identifier_id left join users u on u.id = t.owner_id
      left join access_rules r on r.id = t.rule_id
    where t.id in (${sql.join(ids)})`.execute(q);
  const byId = new Map(rows.rows.map((r) => [Number(r.id), r]));
  return ids.flatMap((id) => {
    const r = byId.get(id);
    if (!r) return [];
    return [
      {
        id: Number(r.id),
        created_at: new Date(r.created_at).toISOString(),
        received_at: new Date(r.received_at).toISOString(),
        device:
          r.device_id !== null ? { id: Number(r.device_id), name: r.device_name ?? r.serial_number } : null,
        serial_number: r.serial_number,
        domain: ref(r.domain_id, r.domain_name),
        identifier:
          r.identifier_id !== null ? ref(r.identifier_id, r.identifier_name || r.identifier_number) : null,
        identifier_type: r.identifier_type,
        identifier_number: r.identifier_number,
        owner: ref(r.owner_id, r.owner_name),
        owner_type: r.owner_type,
        decision: r.decision,
        reason: r.reason,
        rule: ref(r.rule_id, r.rule_name),
        lock: r.lock === null ? null : Number(r.lock),
        event_id: r.event_id,
      },
    ];
  });
}

const column = (name: string) => ({ expr: sql.ref(`t.${name}`) });

/** The ACS log as a journal: kept LINTEL_ACS_EVENTS_RETENTION_DAYS days (default 365). */
export const acsEventStore = journalStore<AcsEvent>({
  noun: 'acs_event',
  table: 'acs_events',
  timeColumn: 'created_at',
  retention: { defaultDays: 365, env: 'LINTEL_ACS_EVENTS_RETENTION_DAYS' },
  from: sql`acs_events t`,
  filterable: Object.fromEntries(Object.entries(acsEventFields).filter(([, f]) => f.filterable)),
  sortable: Object.entries(acsEventFields)
    .filter(([, f]) => f.sortable)
    .map(([k]) => k),
  columns: {
    id: column('id'),
    created_at: column('created_at'),
    received_at: column('received_at'),
    device: column('device_id'),
    domain: column('domain_id'),
    identifier: column('identifier_id'),
    owner: column('owner_id'),
    rule: column('rule_id'),
    serial_number: column('serial_number'),
    identifier_type: column('identifier_type'),
    identifier_number: column('identifier_number'),
    owner_type: column('owner_type'),
    decision: column('decision'),
    reason: column('reason'),
    lock: column('lock'),
    event_id: column('event_id'),
  },
  search: [sql`t.identifier_number`, sql`t.owner_name`, sql`t.identifier_name`, sql`t.serial_number`],
  load: loadEvents,
});

/** `access_control_events.view` reaches the whole project (a permission of the system section). */
const visible = (ctx: HandlerContext) => sql<boolean>`t.project_id = ${callerOf(ctx).projectId}`;

export const acsEventHandlers = {
  /** The decisions at the doors, newest first (keyset by time and id). */
  'acs_event.list': async (ctx, args) => runJournal(ctx.app.db, acsEventStore, args, visible(ctx)),

  /** Every decision of the query, streamed (engine/export.ts). */
  'acs_event.export': async (ctx, args) =>
    exportReply(
      ctx.app,
      { load: acsEventStore.load, record: AcsEvent },
      journalPlan(acsEventStore, args, visible(ctx)),
      args.format,
    ),
} satisfies SomeHandlers;
