import { sql, type Kysely } from 'kysely';
import { CallHistoryItem, callHistoryFields } from '@lintel/commands';
import type { DB } from '../../db/schema';
import { AppError } from '../../errors';
import { journalPlan, journalStore, runJournal } from '../../engine/journal';
import { exportReply } from '../../engine/export';
import type { AuthInfo } from '../../context';
import { signedIn, type SomeHandlers } from '../../pipeline/handler';
import {
  callEvent,
  joinCall,
  liveCalls,
  queueCallEvents,
  numbersOfUser,
  routeCall,
  stopCall,
} from '../../sip/calls';
import { sipAuthFailed } from '../../sip/abuse';
import { INTERCEPT, interceptionOf, setInterception } from '../../sip/interception';
import { callerOf } from '../../engine/family';

interface HistoryRow {
  id: number;
  created_at: Date;
  from_number: string;
  to_number: string;
  from_name: string | null;
  to_name: string | null;
  answered_by: string | null;
  status: CallHistoryItem['status'];
  direction: CallHistoryItem['direction'];
  duration: number;
  reason: CallHistoryItem['reason'];
  trunk_id: number | null;
  trunk_name: string | null;
}

/** The history's rows with the names of the numbers' people (a number's user, else its name). */
async function loadHistory(q: Kysely<DB>, ids: readonly number[]): Promise<CallHistoryItem[]> {
  if (!ids.length) return [];
  const rows = await sql<HistoryRow>`
    select t.id, t.created_at, t.from_number, t.to_number, t.answered_by, t.status, t.direction, t.duration,
      t.reason, t.trunk_id, (select k.name from sip_trunks k where k.id = t.trunk_id) as trunk_name,
      (select coalesce(u.name, n.name) from sip_numbers n left join users u on u.id = n.user_id
        where n.project_id = t.project_id and n.number = t.from_number limit 1) as from_name,
      (select coalesce(u.name, n.name) from sip_numbers n left join users u on u.id = n.user_id
        where n.project_id = t.project_id and n.number = t.to_number limit 1) as to_name
    from call_history t where t.id in (${sql.join(ids)})`.execute(q);
  const byId = new Map(rows.rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => {
    const r = byId.get(id);
    if (!r) return [];
    return [
      {
        id: r.id,
        from: { number: r.from_number, user: r.from_name !== null ? { name: r.from_name } : null },
        to: { number: r.to_number, user: r.to_name !== null ? { name: r.to_name } : null },
        from_number: r.from_number,
        to_number: r.to_number,
        answered_by: r.answered_by,
        status: r.status,
        direction: r.direction,
        duration: r.duration,
        reason: r.reason ?? null,
        trunk_id: r.trunk_id,
        trunk: r.trunk_id !== null ? { id: r.trunk_id, name: r.trunk_name ?? '' } : null,
        created_at: new Date(r.created_at).toISOString(),
      },
    ];
  });
}

const column = (name: string) => ({ expr: sql.ref(`t.${name}`) });

/** The call history as a journal: kept LINTEL_CALL_HISTORY_RETENTION_DAYS days (default 365). */
export const callHistoryStore = journalStore<CallHistoryItem>({
  noun: 'call_history',
  table: 'call_history',
  timeColumn: 'created_at',
  retention: { defaultDays: 365, env: 'LINTEL_CALL_HISTORY_RETENTION_DAYS' },
  from: sql`call_history t`,
  filterable: Object.fromEntries(Object.entries(callHistoryFields).filter(([, f]) => f.filterable)),
  sortable: Object.entries(callHistoryFields)
    .filter(([, f]) => f.sortable)
    .map(([k]) => k),
  columns: {
    id: column('id'),
    created_at: column('created_at'),
    from_number: column('from_number'),
    to_number: column('to_number'),
    answered_by: column('answered_by'),
    status: column('status'),
    direction: column('direction'),
    duration: column('duration'),
    reason: column('reason'),
    trunk_id: column('trunk_id'),
  },
  search: [sql`t.from_number`, sql`t.to_number`],
  load: loadHistory,
});

/** Whose calls a user manages: every call of the project for a concierge who intercepts, else his numbers'. */
async function reach(db: Kysely<DB>, auth: AuthInfo): Promise<string[] | 'all'> {
  return auth.permissions.has(INTERCEPT) ? 'all' : numbersOfUser(db, auth.userId);
}

/**
 * Calls (issue 22 items 5, 6, 8): the SIP server's route and events (the `sip` principal), the calls in
 * progress and their stop, the history.
 */
export const callHandlers = {
  'sip.route': (ctx, args) => routeCall(ctx.app, args),
  'sip.call_event': (ctx, args) => callEvent(ctx.app, args),
  // answered once queued (a write that fails is logged by the queue)
  'sip.call_events': async (ctx, args) => {
    const queued = queueCallEvents(ctx.app, args.events);
    for (const written of queued) written.catch(() => undefined);
    return { ok: queued.map(() => true) };
  },
  'sip.auth_failed': (ctx, args) => sipAuthFailed(ctx.app, args),
  'sip.join': (ctx, args) => joinCall(ctx.app, args),

  'call.list': async (ctx) => {
    const auth = signedIn(ctx);
    return { data: await liveCalls(ctx.app, auth.projectId, await reach(ctx.app.db, auth)) };
  },

  'call.stop': async (ctx, args) => {
    const auth = signedIn(ctx);
    const call = await stopCall(ctx.app, auth.projectId, args.id, await reach(ctx.app.db, auth));
    if (!call) throw new AppError('item_not_found');
    return { data: call };
  },

  /** A concierge's interception settings, and starting or stopping it (sip/interception.ts). */
  'call.interception': (ctx) => interceptionOf(ctx.app, callerOf(ctx)),
  'call.intercept': (ctx, args) => setInterception(ctx.app, callerOf(ctx), args),

  /** The project's history, newest first (keyset by time and id). */
  'call_history.list': async (ctx, args) =>
    runJournal(ctx.app.db, callHistoryStore, args, sql<boolean>`t.project_id = ${signedIn(ctx).projectId}`),

  'call_history.export': async (ctx, args) =>
    exportReply(
      ctx.app,
      { load: callHistoryStore.load, record: CallHistoryItem },
      journalPlan(callHistoryStore, args, sql<boolean>`t.project_id = ${signedIn(ctx).projectId}`),
      args.format,
    ),
} satisfies SomeHandlers;
