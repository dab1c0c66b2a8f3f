import crypto from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import {
  decideRoute,
  decisionStableFor,
  encodePlan,
  type ForwardMode,
  type NumberOwner,
  type RouteForwardRule,
  type RouteInput,
  type RouteNumber,
  type Weekday,
} from '@lintel/core';
import type { ServerCall } from '@lintel/commands';
import type { ServerContext } from '../context';
import type { DB } from '../db/schema';
import { emitCallUpdates, type CallUpdate, type Write } from './call-writer';
import { INTERCEPT, interceptionsIn } from './interception';

/**
 * Calls (issue 22 items 5, 6, 8): the SIP server asks where each new call goes (`routeCall`: the facts read
 * here, the decision `decideRoute` of @lintel/core) and tells what happens to it (`callEvent`); Lintel keeps
 * the call (`sip_calls`), publishes each change as CallUpdated on every number of the call, and writes its
 * result to the history (`call_history`) once it ends.
 */

interface NumberRow {
  id: number;
  number: string;
  project_id: number;
  domain_id: number;
  is_active: boolean;
  user_id: number | null;
  device_id: number | null;
  device_group: number | null;
  forward_mode: string;
  forward_group_id: number | null;
  time_zone: string | null;
}

async function numbersByValue(
  db: Kysely<DB>,
  numbers: string[],
  /** only this project's (a call in from a trunk: the trunk's project) */
  projectId: number | null = null,
): Promise<Map<string, NumberRow>> {
  const rows = await sql<NumberRow>`
    select n.id, n.number, n.project_id, n.domain_id, n.is_active, coalesce(n.user_id, u.id) as user_id,
      n.device_id, d.domain_id as device_group, n.forward_mode, n.forward_group_id,
      nullif(coalesce(nu.profile, u.profile)->>'time_zone', '') as time_zone
    from sip_numbers n
    left join devices d on d.id = n.device_id
    left join users nu on nu.id = n.user_id
    left join lateral (
      select x.id, x.profile from users x
      where x.project_id = n.project_id and jsonb_typeof(x.profile->'sip_number_id') = 'number'
        and (x.profile->>'sip_number_id')::numeric = n.id
      order by x.id limit 1
    ) u on n.user_id is null
    where n.number = any(${sql.val(numbers)}::text[])
      and (${projectId}::int is null or n.project_id = ${projectId}::int)
    order by n.id`.execute(db);
  const out = new Map<string, NumberRow>();
  // numbers are one namespace per SIP server: the oldest row holds the credentials (sip/service.ts)
  for (const r of rows.rows) if (!out.has(r.number)) out.set(r.number, r);
  return out;
}

function ownerOf(r: NumberRow): NumberOwner {
  if (r.user_id !== null) return { kind: 'user', userId: r.user_id };
  if (r.device_id !== null) return { kind: 'device', deviceId: r.device_id, groupId: r.device_group };
  return { kind: 'group', groupId: r.domain_id };
}

async function forwardRulesOf(db: Kysely<DB>, numberId: number): Promise<RouteForwardRule[]> {
  const rows = await sql<{
    id: number;
    type: RouteForwardRule['type'];
    timeout: number;
    numbers: string[];
    queues: string[][];
    days: Weekday[];
    period: { from: number; to: number } | null;
  }>`
    select r.id, r.type, r.timeout, r.numbers, r.queues, r.days, r.period
    from sip_number_forward_rules l join forward_rules r on r.id = l.forward_rule_id
    where l.sip_number_id = ${numberId} order by r.id`.execute(db);
  return rows.rows.map((r) => ({ ...r, period: r.period ?? null }));
}

/** The numbers of the people of a group (forward mode `picked`): their users' numbers. */
async function groupNumbers(db: Kysely<DB>, groupId: number): Promise<string[]> {
  const rows = await sql<{ number: string }>`
    select distinct n.number from user_domains ud
    join users u on u.id = ud.user_id
    join sip_numbers n on n.project_id = u.project_id and (n.user_id = u.id or (
      jsonb_typeof(u.profile->'sip_number_id') = 'number' and (u.profile->>'sip_number_id')::numeric = n.id))
    where ud.domain_id = ${groupId} and n.is_active
    order by n.number`.execute(db);
  return rows.rows.map((r) => r.number);
}

/**
 * What the routing reads, answered from memory (`app.routeCache`, engine/request-cache.ts): a number with its
 * owner, forward rules and forward group's numbers, a caller's group chain and trunks, a trunk. Forgotten at
 * once on any change that may touch it (server.ts: every command that is not a read; the SIP events of every
 * instance; the database's notifications of migration 0079 and 0028), and after LINTEL_SIP_ROUTE_CACHE_MS.
 */
const cached = <T>(app: ServerContext, key: string, read: () => Promise<T>): Promise<T> =>
  app.routeCache.get(key, read);

interface KnownNumber {
  row: NumberRow;
  route: RouteNumber | null;
}

/** A number and its routing facts by its value (of one project, for a call in from a trunk). */
async function knownNumber(
  app: ServerContext,
  number: string,
  projectId: number | null = null,
): Promise<KnownNumber | null> {
  return cached(app, `number:${projectId ?? ''}:${number}`, async () => {
    const row = (await numbersByValue(app.db, [number], projectId)).get(number);
    return row ? { row, route: await routeNumber(app.db, row) } : null;
  });
}

async function routeNumber(db: Kysely<DB>, r: NumberRow | undefined): Promise<RouteNumber | null> {
  if (!r) return null;
  const forwardMode = (
    ['disabled', 'manual', 'picked'].includes(r.forward_mode) ? r.forward_mode : 'disabled'
  ) as ForwardMode;
  return {
    number: r.number,
    projectId: r.project_id,
    isActive: r.is_active,
    owner: ownerOf(r),
    forwardMode,
    forwardRules: forwardMode === 'manual' ? await forwardRulesOf(db, r.id) : [],
    forwardGroupNumbers:
      forwardMode === 'picked' && r.forward_group_id !== null
        ? await groupNumbers(db, r.forward_group_id)
        : [],
  };
}

/** The id the console knows a call by: the INVITE's speech id when it is a plain token, else one made from the Call-ID. */
export function speechIdOf(callId: string, given: string | undefined): string {
  if (given && /^[A-Za-z0-9._-]{1,128}$/.test(given)) return given;
  return `c${crypto.createHash('sha256').update(callId).digest('hex').slice(0, 24)}`;
}

interface CallRow {
  id: number;
  project_id: number;
  call_id: string;
  speech_id: string;
  status: ServerCall['status'];
  type: ServerCall['type'];
  caller: string;
  callee: string;
  answered_by: string | null;
  ringing: string[];
  plan: string;
  via: string;
  trunk_id: number | null;
  h_entry: string | number | null;
  h_id: string | number | null;
  cseq: string | null;
  info: { address?: string | null; user?: string | null };
  created_at: Date;
  answered_at: Date | null;
  ended_at: Date | null;
}

export function serverCall(r: CallRow): ServerCall {
  return {
    id: r.speech_id,
    status: r.status,
    type: r.type,
    caller: r.caller,
    callee: r.callee,
    answered_by: r.answered_by,
    created_at: Math.floor(new Date(r.created_at).getTime() / 1000),
    info: { address: r.info?.address ?? null, user: r.info?.user ?? null },
  };
}

/** Every number a call concerns: its channels. */
const numbersOf = (r: CallRow) =>
  [...new Set([r.caller, r.callee, ...(r.ringing ?? []), ...(r.answered_by ? [r.answered_by] : [])])].filter(
    Boolean,
  );

/** The call as it is now, for each of its numbers' channels (published by the calls' queue, sip/call-writer.ts). */
const updatesOf = (r: CallRow): CallUpdate[] => {
  const call = serverCall(r);
  return numbersOf(r).map((number) => ({ projectId: r.project_id, number, call }));
};

async function publish(app: ServerContext, trx: Kysely<DB>, r: CallRow): Promise<void> {
  await emitCallUpdates(app, trx, updatesOf(r));
}

const CALL_COLUMNS = sql`id, project_id, call_id, speech_id, status, type, caller, callee, answered_by, ringing,
  plan, via, trunk_id, h_entry, h_id, cseq, info, created_at, answered_at, ended_at`;
/** The same columns of `sip_calls s` (an update joined with the row before it). */
const CALL_COLUMNS_OF_S = sql`s.id, s.project_id, s.call_id, s.speech_id, s.status, s.type, s.caller, s.callee,
  s.answered_by, s.ringing, s.plan, s.via, s.trunk_id, s.h_entry, s.h_id, s.cseq, s.info, s.created_at,
  s.answered_at, s.ended_at`;

/** The numbers of step `i` of a plan as the SIP server reads it (`timeout:noanswer:error:a+b`). */
const stepNumbers = (plan: string, i: number): string[] =>
  (plan.split('|')[i] ?? '').split(':')[3]?.split('+').filter(Boolean) ?? [];

export interface RouteArgs {
  call_id: string;
  caller: string;
  callee: string;
  speech_id?: string;
  cseq?: string;
  /** a call in from a SIP trunk: the ids of the trunks at the address it came from, comma-separated */
  trunks?: string;
}

export type RouteAnswer = {
  action: 'route' | 'reject';
  plan?: string;
  code?: string;
  reason?: string;
  id?: string;
  trunk?: string;
  trunk_from?: string;
  trunk_login?: string;
  trunk_password?: string;
  hold?: string;
  via?: string;
  cache?: string;
  gen?: string;
};

/** A call the routing refused, in its project's history: `failed`, with why (`wrong_number`, …). */
async function refusedCall(
  db: Kysely<DB>,
  c: { projectId: number; args: RouteArgs; reason: string; trunkId: number | null; now: Date },
): Promise<void> {
  await sql`insert into call_history (project_id, created_at, ended_at, from_number, to_number, status,
      direction, duration, call_id, reason, trunk_id)
    values (${c.projectId}, ${c.now}, ${c.now}, ${c.args.caller}, ${c.args.callee}, 'failed', 'incoming', 0,
      ${c.args.call_id}, ${c.reason}, ${c.trunkId})
    on conflict (call_id) do nothing`.execute(db);
}

/** `sip.route`: where a new call goes, and the call kept from now on. */
export async function routeCall(app: ServerContext, args: RouteArgs): Promise<RouteAnswer> {
  if (args.trunks) return routeFromTrunk(app, args, args.trunks.split(',').map(Number));
  // the route cache's epoch as the reading starts: an answer read across a change is not for the SIP server to
  // keep
  const generation = app.routeCache.generation;
  const cacheable = app.routeCache.enabled && app.sip.config.routeCacheMs > 0;
  const callerKnown = await knownNumber(app, args.caller);
  const calleeKnown = args.callee === args.caller ? callerKnown : await knownNumber(app, args.callee);
  const callerRow = callerKnown?.row;
  const caller = callerKnown?.route ?? null;
  const callee = calleeKnown?.route ?? null;
  const trunks =
    callerRow && !callee
      ? await cached(app, `trunks-of:${callerRow.id}`, () => trunksFor(app.db, callerRow))
      : { groups: [], trunks: [] };
  // a panel's call: the concierges intercepting its group take it (sip/interception.ts)
  const panel = callerRow && callerRow.user_id === null && callerRow.device_id !== null;
  const interceptions = panel
    ? await cached(app, `interceptions:${callerRow.project_id}`, () =>
        interceptionsIn(app.db, callerRow.project_id),
      )
    : [];
  const input: RouteInput = {
    caller,
    callee,
    callerGroups: trunks.groups,
    trunks: trunks.trunks,
    dialled: args.callee,
    interceptions,
    waiting: {
      ringS: app.sip.config.interceptRingS,
      holdS: app.sip.config.waitingHoldS,
    },
    now: app.clock.now().getTime(),
    timeZone: calleeKnown?.row.time_zone ?? 'UTC',
  };
  const decision = decideRoute(input);
  const now = app.clock.now();
  const speechId = speechIdOf(args.call_id, args.speech_id);
  if (decision.action === 'reject') {
    // a call from a number of a project is in its history, with why it went nowhere
    if (callerRow)
      afterAnswer(app, (trx) =>
        refusedCall(trx, {
          projectId: callerRow.project_id,
          args,
          reason: decision.reason,
          trunkId: null,
          now,
        }),
      );
    return { action: 'reject', code: String(decision.code), reason: reasonText[decision.reason] };
  }
  const projectId = callerRow!.project_id;
  if (decision.action === 'trunk') {
    const trunk = await cached(
      app,
      `trunk:${decision.trunkId}`,
      async () =>
        (
          await sql<{
            outgoing_number: string;
            termination_uri: string;
            login: string;
            password: string | null;
          }>`select outgoing_number, termination_uri, login, password from sip_trunks where id = ${decision.trunkId}`.execute(
            app.db,
          )
        ).rows[0]!,
    );
    keepCall(app, {
      projectId,
      args,
      speechId,
      ringing: [args.callee],
      plan: '',
      via: 'trunk',
      trunkId: decision.trunkId,
      now,
    });
    const uri = new URL(trunk.termination_uri.replace(/^sips?:(?:[^@]*@)?/, 'http://'));
    return {
      action: 'route',
      id: speechId,
      trunk: `sip:${args.callee}@${uri.host}`,
      trunk_from: trunk.outgoing_number,
      trunk_login: trunk.login,
      trunk_password: trunk.password ?? '',
    };
  }
  const plan = encodePlan(decision.steps);
  const ringing = decision.steps[0]!.numbers;
  keepCall(app, { projectId, args, speechId, ringing, plan, via: decision.via, now });
  // how long the SIP server may route this caller to this number by this answer, telling Lintel of each call
  // (event `routed`): the cache's time, less when the forward rules' days or periods end sooner
  const keepS = cacheable
    ? Math.floor(Math.min(app.sip.config.routeCacheMs / 1000, decisionStableFor(input)))
    : 0;
  const answer: RouteAnswer = { action: 'route', plan, id: speechId, via: decision.via };
  const gen = keepS > 0 ? app.sip.routeKeepable(generation) : null;
  if (gen) Object.assign(answer, { cache: String(keepS), gen });
  if (decision.via !== 'interception') return answer;
  // an intercepted call nobody answers in time waits: the SIP server holds its INVITE (`hold`: kept where a
  // concierge who joins finds it), and Lintel marks it waiting
  waitLater(app, args.call_id);
  return { ...answer, hold: '1' };
}

/**
 * A call the SIP server routed by an answer it kept (`routed`): kept as `sip.route` keeps the calls it routes,
 * with the plan the SIP server follows. A caller Lintel no longer holds leaves nothing to keep.
 */
async function keepRoutedCall(
  app: ServerContext,
  trx: Kysely<DB>,
  args: CallEventArgs,
  now: Date,
  publishing: (updates: CallUpdate[]) => void,
): Promise<boolean> {
  if (!args.caller || !args.callee || !args.plan) return false;
  const known = await knownNumber(app, args.caller);
  if (!known) return false;
  const via = args.via || 'direct';
  const call = { call_id: args.call_id, caller: args.caller, callee: args.callee, cseq: args.cseq };
  const inserted = await insertCall(trx, {
    projectId: known.row.project_id,
    args: call,
    speechId: speechIdOf(args.call_id, args.speech_id),
    ringing: stepNumbers(args.plan, 0),
    plan: args.plan,
    via,
    now,
  });
  if (!inserted) return true;
  publishing(updatesOf(inserted));
  if (via === 'interception' && args.hold === '1') waitLater(app, args.call_id);
  return true;
}

/**
 * A write of the routing, made after its answer went out (sip/call-writer.ts: queued, batched, in order with
 * the call's events); a failure is logged there.
 */
function afterAnswer(app: ServerContext, write: Write): void {
  app.sip.writes.push(write).catch(() => undefined);
}

/** The call kept from now on, published on its numbers' channels. */
function keepCall(
  app: ServerContext,
  c: {
    projectId: number;
    args: RouteArgs;
    speechId: string;
    ringing: string[];
    plan: string;
    via: string;
    trunkId?: number | null;
    now: Date;
  },
): void {
  afterAnswer(app, async (trx, publishing) => {
    const inserted = await insertCall(trx, c);
    if (inserted) publishing(updatesOf(inserted));
  });
}

/** A routed call's row, `calling` (none when the SIP server told of it already). */
async function insertCall(
  trx: Kysely<DB>,
  c: {
    projectId: number;
    args: Pick<RouteArgs, 'call_id' | 'caller' | 'callee' | 'cseq'>;
    speechId: string;
    ringing: string[];
    plan: string;
    via: string;
    trunkId?: number | null;
    now: Date;
  },
): Promise<CallRow | undefined> {
  return (
    await sql<CallRow>`
      insert into sip_calls (project_id, call_id, speech_id, status, type, caller, callee, ringing, plan, via, cseq,
        created_at, trunk_id)
      values (${c.projectId}, ${c.args.call_id}, ${c.speechId}, 'calling', 'normal', ${c.args.caller},
        ${c.args.callee}, ${JSON.stringify(c.ringing)}::jsonb, ${c.plan}, ${c.via}, ${c.args.cseq ?? null}, ${c.now},
        ${c.trunkId ?? null})
      on conflict (call_id) do nothing
      returning ${CALL_COLUMNS}`.execute(trx)
  ).rows[0];
}

/** The caller's group chain (nearest first) and the project's trunks with their groups. */
async function trunksFor(
  db: Kysely<DB>,
  caller: NumberRow,
): Promise<{ groups: number[]; trunks: { id: number; groupIds: number[] }[] }> {
  const chain = await sql<{ id: number; depth: number }>`
    with recursive up(id, parent_id, depth) as (
      select id, parent_id, 0 from domains where id = ${caller.device_group ?? caller.domain_id}
      union all
      select d.id, d.parent_id, up.depth + 1 from domains d join up on d.id = up.parent_id where up.depth < 64
    ) select id, depth from up order by depth`.execute(db);
  const rows = await sql<{ id: number; domain_id: number }>`
    select t.id, g.domain_id from sip_trunks t join sip_trunk_groups g on g.sip_trunk_id = t.id
    where t.project_id = ${caller.project_id} order by t.id`.execute(db);
  const trunks = new Map<number, number[]>();
  for (const r of rows.rows) trunks.set(r.id, [...(trunks.get(r.id) ?? []), r.domain_id]);
  return {
    groups: chain.rows.map((r) => r.id),
    trunks: [...trunks].map(([id, groupIds]) => ({ id, groupIds })),
  };
}

const reasonText = {
  unknown_caller: 'Forbidden',
  own_number: 'Unable to call your number',
  wrong_number: 'Not Found',
  inactive: 'Temporarily Unavailable',
} as const;

/**
 * A call in from a SIP trunk (the SIP server knows the trunks by the addresses their providers send from, and
 * names those of the request's): the number dialled reaches the virtual number of that number which the
 * trunk carries — of its project, in one of its groups or below — and is rung as any call to it is (its
 * forward rules). One the trunk does not carry is a wrong number (404), in the trunk's project's history.
 */
async function routeFromTrunk(app: ServerContext, args: RouteArgs, trunkIds: number[]): Promise<RouteAnswer> {
  const db = app.db;
  const now = app.clock.now();
  // a provider may give the number in its international form (+7…); numbers are digits
  const dialled = args.callee.replace(/^\+/, '');
  const trunks = await cached(
    app,
    `trunks:${trunkIds.join(',')}`,
    async () =>
      (
        await sql<{ id: number; project_id: number }>`
          select id, project_id from sip_trunks where id = any(${sql.val(trunkIds)}::int[]) order by id`.execute(
          db,
        )
      ).rows,
  );
  if (!trunks.length) return { action: 'reject', code: '403', reason: 'Forbidden' };
  // the first of the address's trunks that carries the number: its group chain meets the trunk's groups
  const carried = await cached(app, `carried:${trunks.map((t) => t.id).join(',')}:${dialled}`, () =>
    sql<{
      trunk_id: number;
      number_id: number;
    }>`
    select t.id as trunk_id, n.id as number_id
    from sip_trunks t
    join sip_numbers n on n.project_id = t.project_id and n.number = ${dialled}
    left join devices d on d.id = n.device_id
    where t.id = any(${sql.val(trunks.map((t) => t.id))}::int[])
      and exists (
        with recursive up(id, parent_id, depth) as (
          select id, parent_id, 0 from domains where id = coalesce(d.domain_id, n.domain_id)
          union all
          select x.id, x.parent_id, up.depth + 1 from domains x join up on x.id = up.parent_id where up.depth < 64
        )
        select 1 from up join sip_trunk_groups g on g.domain_id = up.id and g.sip_trunk_id = t.id)
    order by t.id, n.id limit 1`.execute(db),
  );
  const hit = carried.rows[0];
  const trunk = trunks.find((t) => t.id === hit?.trunk_id) ?? trunks[0]!;
  const known = hit ? await knownNumber(app, dialled, trunk.project_id) : null;
  const row = known?.row;
  const callee = known?.route ?? null;
  const decision = decideRoute({
    caller: null,
    fromTrunk: { trunkId: trunk.id, projectId: trunk.project_id, caller: args.caller },
    callee,
    dialled,
    interceptions: [],
    now: now.getTime(),
    timeZone: row?.time_zone ?? 'UTC',
  });
  const call = { ...args, callee: dialled };
  if (decision.action === 'reject') {
    afterAnswer(app, (trx) =>
      refusedCall(trx, {
        projectId: trunk.project_id,
        args: call,
        reason: decision.reason,
        trunkId: trunk.id,
        now,
      }),
    );
    return { action: 'reject', code: String(decision.code), reason: reasonText[decision.reason] };
  }
  if (decision.action !== 'route') return { action: 'reject', code: '403', reason: 'Forbidden' };
  const speechId = speechIdOf(args.call_id, args.speech_id);
  const plan = encodePlan(decision.steps);
  keepCall(app, {
    projectId: trunk.project_id,
    args: call,
    speechId,
    ringing: decision.steps[0]!.numbers,
    plan,
    via: decision.via,
    trunkId: trunk.id,
    now,
  });
  return { action: 'route', plan, id: speechId };
}

/** A call's final failure, as the history names it (spec part 1 §4 call results). */
export function resultOf(code: number): 'cancel' | 'busy' | 'noanswer' | 'failed' {
  if (code === 487) return 'cancel';
  if (code === 486 || code === 600 || code === 603) return 'busy';
  if (code === 408 || code === 480) return 'noanswer';
  return 'failed';
}

export interface CallEventArgs {
  call_id: string;
  event: 'routed' | 'step' | 'answered' | 'failed' | 'ended';
  code: number;
  contact: string;
  h_entry: number | null;
  h_id: number | null;
  step: number;
  /** when the SIP server saw it (Unix seconds): the time of an event caught up on (sip/catch-up.ts) */
  at?: number;
  /** who called whom, for a call the SIP server's fallback routed (Lintel did not answer its route) */
  caller?: string;
  callee?: string;
  /** `routed`: the INVITE's speech id and CSeq, and what the answer the SIP server kept said */
  speech_id?: string;
  cseq?: string;
  plan?: string;
  via?: string;
  hold?: string;
}

/** `user@host` of a SIP URI or Contact header value, to match an answering phone with a registration. */
const contactKey = (v: string): string | null => {
  const m = /sips?:([^@;>\s]+)@([^;>:\s]+(?::\d+)?)/i.exec(v);
  return m ? `${m[1]}@${m[2]}`.toLowerCase() : null;
};

/** Which of the numbers rung holds the answering contact (the registrar's contacts, over JSON-RPC). */
async function answeringNumber(app: ServerContext, r: CallRow, contact: string): Promise<string | null> {
  const candidates = r.ringing?.length ? r.ringing : [r.callee];
  if (candidates.length === 1) return candidates[0]!;
  const key = contactKey(contact);
  if (!key) return candidates[0]!;
  for (const number of candidates) {
    const found = await app.sip
      .rpc<{ AoR?: string; Contacts?: { Contact?: { Address?: string } }[] }>('ul.lookup', [
        'location',
        number,
      ])
      .catch(() => null);
    if (
      JSON.stringify(found ?? {})
        .toLowerCase()
        .includes(key)
    )
      return number;
  }
  return candidates[0]!;
}

/** `sip.call_event`: what happened to a call. An event for a call Lintel does not know is ignored. */
export async function callEvent(app: ServerContext, args: CallEventArgs): Promise<{ ok: boolean }> {
  return (await callEvents(app, [args]))[0]!;
}

/**
 * `sip.call_events`: what happened to calls, in the order the SIP server saw it (a batch its timer process
 * sends, off the SIP workers). Each is written through the calls' queue (sip/call-writer.ts), after the call it
 * concerns. The time of each is when it arrived. The SIP server is answered once they are queued: the queue
 * writes while no calls are being set up (up to its lag), longer than the SIP server waits for an answer,
 * and it does nothing with an answer but log a failure.
 */
export function queueCallEvents(
  app: ServerContext,
  list: CallEventArgs[],
  opts: { caughtUp?: boolean } = {},
): Promise<{ ok: boolean }>[] {
  const arrived = app.clock.now();
  return list.map(async (args) => {
    // an event caught up on happened when the SIP server saw it, not when Lintel read it
    const now = opts.caughtUp && args.at ? new Date(Math.round(args.at * 1000)) : arrived;
    let ok = false;
    await app.sip.writes.push(async (trx, publishing) => {
      if (args.event === 'routed') {
        ok = await keepRoutedCall(app, trx, args, now, publishing);
        return;
      }
      if (args.caller && args.callee && args.event !== 'step')
        await keepFallbackCall(trx, args, now, publishing);
      ok = await applyCallEvent(app, trx, args, now, publishing);
    });
    return { ok };
  });
}

/**
 * A call the SIP server's fallback routed while Lintel did not answer (down, restarting, killed): Lintel learns
 * of it from its first event that names who called whom, and keeps it from then on like a routed call (via
 * `fallback`, the number dialled rung), so it shows in the call list and ends in the history.
 */
async function keepFallbackCall(
  trx: Kysely<DB>,
  args: CallEventArgs,
  now: Date,
  publishing: (updates: CallUpdate[]) => void,
): Promise<void> {
  const inserted = await sql<CallRow>`
    insert into sip_calls (project_id, call_id, speech_id, status, type, caller, callee, ringing, plan, via,
      created_at)
    select n.project_id, ${args.call_id}, ${speechIdOf(args.call_id, undefined)}, 'calling', 'normal',
      ${args.caller}, ${args.callee}, ${JSON.stringify([args.callee])}::jsonb, '', 'fallback', ${now}
    from sip_numbers n where n.number = ${args.caller}
    order by n.id limit 1
    on conflict (call_id) do nothing
    returning ${CALL_COLUMNS}`.execute(trx);
  if (inserted.rows[0]) publishing(updatesOf(inserted.rows[0]));
}

/** The events written: `ok` false for a call Lintel does not know. */
export function callEvents(app: ServerContext, list: CallEventArgs[]): Promise<{ ok: boolean }[]> {
  return Promise.all(queueCallEvents(app, list));
}

/** A call's row as an update left it, with whether it had ended before (`was_ended`). */
type UpdatedRow = CallRow & { was_ended: boolean };

async function applyCallEvent(
  app: ServerContext,
  trx: Kysely<DB>,
  args: CallEventArgs,
  now: Date,
  publishing: (updates: CallUpdate[]) => void,
): Promise<boolean> {
  // an answer or an end is one statement in the usual case: the row changed unless the event changes nothing,
  // and read back
  let updated: UpdatedRow | undefined;
  if (args.event === 'step') {
    // the plan moved on (rare: nobody of a step was registered, or it failed): the numbers of that step ring now
    const row = (
      await sql<CallRow>`select ${CALL_COLUMNS} from sip_calls where call_id = ${args.call_id}`.execute(trx)
    ).rows[0];
    if (!row) return false;
    if (row.ended_at) return true;
    updated = (
      await sql<UpdatedRow>`update sip_calls set ringing = ${JSON.stringify(stepNumbers(row.plan, args.step))}::jsonb
        where id = ${row.id} and ended_at is null returning ${CALL_COLUMNS}, false as was_ended`.execute(trx)
    ).rows[0];
  } else if (args.event === 'answered') {
    // one number rung (most calls): it answered, in one statement
    updated = (
      await sql<UpdatedRow>`update sip_calls set status = 'answered', answered_at = coalesce(answered_at, ${now}),
          answered_by = coalesce(ringing->>0, callee), h_entry = ${args.h_entry}, h_id = ${args.h_id}
        where call_id = ${args.call_id} and ended_at is null
          and jsonb_array_length(coalesce(ringing, '[]'::jsonb)) <= 1
        returning ${CALL_COLUMNS}, false as was_ended`.execute(trx)
    ).rows[0];
    if (updated) {
      publishing(updatesOf(updated));
      return true;
    }
    // several numbers rung: the registrar says whose contact answered (JSON-RPC, local)
    const row = (
      await sql<CallRow>`select ${CALL_COLUMNS} from sip_calls where call_id = ${args.call_id}`.execute(trx)
    ).rows[0];
    if (!row) return false;
    if (row.ended_at) return true;
    const answeredBy = await answeringNumber(app, row, args.contact);
    updated = (
      await sql<UpdatedRow>`update sip_calls set status = 'answered', answered_at = coalesce(answered_at, ${now}),
          answered_by = ${answeredBy}, h_entry = ${args.h_entry}, h_id = ${args.h_id}
        where id = ${row.id} and ended_at is null returning ${CALL_COLUMNS}, false as was_ended`.execute(trx)
    ).rows[0];
  } else {
    updated = (
      await sql<UpdatedRow>`with old as (select id, ended_at from sip_calls where call_id = ${args.call_id} for update)
        update sip_calls s set status = 'destroyed', ended_at = coalesce(s.ended_at, ${now})
        from old where s.id = old.id returning ${CALL_COLUMNS_OF_S}, old.ended_at is not null as was_ended`.execute(
        trx,
      )
    ).rows[0];
    if (updated) await writeHistory(trx, updated, args.event === 'failed' ? resultOf(args.code) : null);
  }
  // no row: a call Lintel does not know (an end); a row the update skipped: ended meanwhile
  if (!updated) return args.event !== 'ended';
  // the row is published as it is now, once: an event for an ended call (an end repeated) changes nothing
  if (!updated.was_ended) publishing(updatesOf(updated));
  return true;
}

/** The call's line in the history, once (its Call-ID): answered with its talk time, or how it failed. */
async function writeHistory(
  trx: Kysely<DB>,
  r: CallRow,
  failure: 'cancel' | 'busy' | 'noanswer' | 'failed' | null,
): Promise<void> {
  const ended = new Date(r.ended_at ?? Date.now());
  const status = r.answered_at ? 'answered' : (failure ?? 'cancel');
  const duration = r.answered_at
    ? Math.max(0, Math.round((ended.getTime() - new Date(r.answered_at).getTime()) / 1000))
    : 0;
  await sql`insert into call_history (project_id, created_at, ended_at, from_number, to_number, answered_by, status,
      direction, duration, call_id, trunk_id)
    values (${r.project_id}, ${r.created_at}, ${ended}, ${r.caller}, ${r.callee}, ${r.answered_by}, ${status},
      ${r.via === 'trunk' ? 'outgoing' : 'incoming'}, ${duration}, ${r.call_id}, ${r.trunk_id})
    on conflict (call_id) do nothing`.execute(trx);
}

/** The numbers of a user: those he owns, and the one his profile names. */
export async function numbersOfUser(db: Kysely<DB>, userId: number): Promise<string[]> {
  const rows = await sql<{ number: string }>`
    select n.number from sip_numbers n join users u on u.id = ${userId} and n.project_id = u.project_id
    where n.user_id = u.id or (jsonb_typeof(u.profile->'sip_number_id') = 'number'
      and (u.profile->>'sip_number_id')::numeric = n.id)`.execute(db);
  return rows.rows.map((r) => r.number);
}

/** The calls in progress a user may see: his numbers' calls, or every call of the project for a concierge. */
export async function liveCalls(
  app: ServerContext,
  projectId: number,
  numbers: string[] | 'all',
): Promise<ServerCall[]> {
  const rows = await sql<CallRow>`select ${CALL_COLUMNS} from sip_calls
    where project_id = ${projectId} and ended_at is null order by created_at desc, id desc limit 500`.execute(
    app.db,
  );
  return rows.rows
    .filter((r) => numbers === 'all' || numbersOf(r).some((n) => numbers.includes(n)))
    .map(serverCall);
}

/**
 * Ends a call in progress: an answered one by `dlg.end_dlg` (BYE to both sides), a ringing one by cancelling
 * its INVITE (`tm.cancel`). The call is destroyed and written to the history at once, whether or not the SIP
 * server could be reached (its own end event then changes nothing).
 */
export async function stopCall(
  app: ServerContext,
  projectId: number,
  speechId: string,
  numbers: string[] | 'all',
): Promise<ServerCall | null> {
  const rows = await sql<CallRow>`select ${CALL_COLUMNS} from sip_calls
    where project_id = ${projectId} and speech_id = ${speechId} and ended_at is null
    order by id desc limit 1`.execute(app.db);
  const row = rows.rows[0];
  if (!row || (numbers !== 'all' && !numbersOf(row).some((n) => numbers.includes(n)))) return null;
  try {
    if (row.status === 'answered' && row.h_entry !== null && row.h_id !== null)
      await app.sip.rpc('dlg.end_dlg', [Number(row.h_entry), Number(row.h_id)]);
    else await app.sip.rpc('tm.cancel', [row.call_id, row.cseq ?? '1']);
  } catch (err) {
    app.log.warn({ call: row.speech_id, err: (err as Error).message }, 'the SIP server did not end the call');
  }
  const now = app.clock.now();
  let ended: CallRow | undefined;
  await app.db.transaction().execute(async (trx) => {
    ended = (
      await sql<CallRow>`update sip_calls set status = 'destroyed', ended_at = coalesce(ended_at, ${now})
        where id = ${row.id} and ended_at is null returning ${CALL_COLUMNS}`.execute(trx)
    ).rows[0];
    if (ended) {
      await writeHistory(trx, ended, 'cancel');
      await publish(app, trx, ended);
    }
  });
  return ended ? serverCall(ended) : serverCall({ ...row, status: 'destroyed' });
}

// ----- waiting calls (issue 22 item 7; docs/decisions.md "Telephony: waiting calls and interception") ------------

/**
 * An intercepted call still unanswered after LINTEL_SIP_INTERCEPT_RING_S becomes `waiting`, an `awaiting` call:
 * the SIP server goes on holding its INVITE (the panel hears it ring), and any concierge who may intercept can
 * join it (`joinCall`). A timer of the instance that routed it; a Lintel restarted meanwhile leaves the call
 * `calling`, joinable all the same.
 */
function waitLater(app: ServerContext, callId: string): void {
  const timer = setTimeout(() => {
    app.sip.writes
      .push(async (trx, publishing) => {
        const row = (
          await sql<CallRow>`update sip_calls set status = 'waiting', type = 'awaiting'
            where call_id = ${callId} and ended_at is null and answered_at is null and status = 'calling'
            returning ${CALL_COLUMNS}`.execute(trx)
        ).rows[0];
        if (row) publishing(updatesOf(row));
      })
      .catch(() => undefined);
  }, app.sip.config.interceptRingS * 1000);
  timer.unref();
}

/**
 * `sip.join`: a concierge's phone asks to take a waiting call (a SIP MESSAGE naming its speech id, sent from his
 * number). Allowed when the number is one of a user of the call's project who may intercept and the call is an
 * intercepted call nobody has answered; the answer names the call's SIP Call-ID, whose held INVITE the SIP
 * server then also sends to his phone (tsilo's `ts_append_to`), which answers it.
 */
export async function joinCall(
  app: ServerContext,
  args: { caller: string; speech_id: string },
): Promise<{ action: 'join' | 'reject'; call_id?: string; code?: string; reason?: string }> {
  const rows = await sql<{ call_id: string; ok: boolean }>`
    select s.call_id, exists (
      select 1 from sip_numbers n join users u on u.project_id = n.project_id and (n.user_id = u.id or (
          jsonb_typeof(u.profile->'sip_number_id') = 'number' and (u.profile->>'sip_number_id')::numeric = n.id))
        join roles r on r.id = u.role_id
      where n.number = ${args.caller} and n.is_active and n.project_id = s.project_id
        and r.permissions @> ${JSON.stringify([INTERCEPT])}::jsonb) as ok
    from sip_calls s
    where s.speech_id = ${args.speech_id} and s.via = 'interception' and s.ended_at is null
      and s.answered_at is null
    order by s.id desc limit 1`.execute(app.db);
  const row = rows.rows[0];
  if (!row) return { action: 'reject', code: '404', reason: 'Not Found' };
  if (!row.ok) return { action: 'reject', code: '403', reason: 'Forbidden' };
  // his number rings the call from now on (its channel hears of it; the answer names whose phone took it),
  // written before the answer, so before any event of his branch
  await app.sip.writes.push(async (trx, publishing) => {
    const updated = (
      await sql<CallRow>`update sip_calls set ringing = case when ringing ? ${args.caller} then ringing
          else ringing || ${JSON.stringify([args.caller])}::jsonb end
        where call_id = ${row.call_id} and ended_at is null returning ${CALL_COLUMNS}`.execute(trx)
    ).rows[0];
    if (updated) publishing(updatesOf(updated));
  });
  return { action: 'join', call_id: row.call_id };
}
