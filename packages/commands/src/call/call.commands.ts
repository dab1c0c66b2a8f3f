import { z } from 'zod';
import { defineCommand, NoArgs } from '../command';
import { defineJournal } from '../journal';
import { Ids, Ref, Timestamp } from '../refs';
import type { ResourceField } from '../resource';

/**
 * Calls (issue 22 items 5, 6, 8; spec part 1 §3 "Server call", "History item", "Concierge device"; part 2 §7
 * "Call management", "Call history"). The SIP server (Kamailio) asks Lintel where each new call goes and
 * tells it what happens to it — the `sip` principal's two commands, hidden from people — and Lintel keeps the
 * calls, publishes each change as `CallUpdated` on the channel of each number in it, and writes the history.
 */

export const ServerCallStatuses = [
  'new',
  'calling',
  'answered',
  'waiting',
  'answered_waiting',
  'destroyed',
] as const;

/** A server call, as the call list and the `CallUpdated` event carry it (the dialer's `ServerCall`). */
export const ServerCall = z.object({
  /** the speech id: the INVITE's X-Speech-Id, else one made from its Call-ID */
  id: z.string(),
  status: z.enum(ServerCallStatuses),
  type: z.enum(['normal', 'awaiting']),
  caller: z.string(),
  callee: z.string(),
  /** `number-suffix`: the number that answered, before the dash */
  answered_by: z.string().nullable(),
  /** seconds since the epoch */
  created_at: z.number().int(),
  info: z.object({ address: z.string().nullable(), user: z.string().nullable() }).nullable(),
});
export type ServerCall = z.infer<typeof ServerCall>;

// ----- the SIP server's side ----------------------------------------------------------------------------------
// Called by Kamailio only (the `sip` principal: the secret Lintel gave it over JSON-RPC), never by people.

const SipText = (max: number) => z.string().max(max);

/**
 * Where a new call goes: the one decision (`decideRoute` of @lintel/core) on the numbers, their owners,
 * forward rules and interceptions. `route`: the plan, as the SIP server reads it (`encodePlan`); `reject`:
 * the SIP status and reason it answers the caller with.
 */
export const sipRoute = defineCommand({
  id: 'sip.route',
  http: { method: 'POST', path: '/sip/route' },
  access: 'sip',
  hidden: true,
  args: z.object({
    call_id: SipText(255).min(1),
    caller: SipText(64),
    callee: SipText(64),
    speech_id: SipText(128).optional(),
    cseq: SipText(32).optional(),
    /**
     * a call in from a SIP trunk: the ids of the trunks whose provider sends from the request's address (the
     * SIP server's `trunkip` table, which Lintel fills), comma-separated; `caller` is then the provider's
     * From, a number of the outside world
     */
    trunks: z
      .string()
      .max(256)
      .regex(/^[0-9]+(,[0-9]+)*$/)
      .optional(),
  }),
  result: z.object({
    action: z.enum(['route', 'reject']),
    plan: z.string().optional(),
    code: z.string().optional(),
    reason: z.string().optional(),
    id: z.string().optional(),
    /** out through a SIP trunk: the provider's request URI, the number the call leaves with, credentials */
    trunk: z.string().optional(),
    trunk_from: z.string().optional(),
    trunk_login: z.string().optional(),
    trunk_password: z.string().optional(),
    /** an intercepted panel call: the SIP server holds its INVITE where a concierge who joins finds it */
    hold: z.string().optional(),
    /** why the plan: the number itself (`direct`), its forward rules (`forward`) or an interception */
    via: z.string().optional(),
    /**
     * seconds the SIP server may route the same caller to the same number by this answer without asking
     * (absent or "0": ask each time), telling Lintel of each such call (`sip.call_events`, event `routed`);
     * kept only while its `gen` is the one Lintel last gave the SIP server (docs/decisions.md "Telephony: the
     * SIP server keeps Lintel's routes")
     */
    cache: z.string().optional(),
    gen: z.string().optional(),
  }),
});

/**
 * A concierge's phone asks to take a waiting call (a SIP MESSAGE from his number naming the call's speech id):
 * `join` with the SIP Call-ID of the call whose held INVITE the SIP server then sends to his phone too, or
 * `reject` with the SIP status it answers (404 no such waiting call, 403 a number that may not intercept).
 */
export const sipJoin = defineCommand({
  id: 'sip.join',
  http: { method: 'POST', path: '/sip/join' },
  access: 'sip',
  hidden: true,
  args: z.object({ caller: SipText(64).min(1), speech_id: SipText(128).min(1) }),
  result: z.object({
    action: z.enum(['join', 'reject']),
    call_id: z.string().optional(),
    code: z.string().optional(),
    reason: z.string().optional(),
  }),
});

/**
 * What happened to a call: `step` (the plan moved on after a step failed with `code`), `answered` (the
 * dialog started; `contact` is the answering phone's), `failed` (the final failure `code`), `ended`.
 */
export const SipCallEvent = z.object({
  call_id: SipText(255).min(1),
  // `routed`: a call the SIP server routed by an answer it kept (the route's `cache`): Lintel keeps the call
  event: z.enum(['routed', 'step', 'answered', 'failed', 'ended']),
  code: z.coerce.number().int().min(0).max(999).default(0),
  contact: SipText(512).default(''),
  h_entry: z.coerce.number().int().min(0).nullable().default(null),
  h_id: z.coerce.number().int().min(0).nullable().default(null),
  step: z.coerce.number().int().min(-1).max(64).default(-1),
  // when the SIP server saw it (Unix seconds with a fraction): the time of an event Lintel catches up on
  at: z.coerce.number().positive().optional(),
  // a call routed by the SIP server's fallback (Lintel did not answer its route): who called whom
  caller: SipText(64).min(1).optional(),
  callee: SipText(64).min(1).optional(),
  // `routed`: what the kept answer said (its plan, why, whether the call is held) and the INVITE's speech id
  // and CSeq, as `sip.route` is given them
  speech_id: SipText(128).optional(),
  cseq: SipText(32).optional(),
  plan: SipText(4096).optional(),
  via: z.enum(['direct', 'forward', 'interception', '']).optional(),
  hold: SipText(1).optional(),
});

export const sipCallEvent = defineCommand({
  id: 'sip.call_event',
  http: { method: 'POST', path: '/sip/call-event' },
  access: 'sip',
  hidden: true,
  args: SipCallEvent,
  result: z.object({ ok: z.boolean() }),
});

/**
 * What happened to calls, several at once in the order the SIP server saw it: its timer process sends the
 * dialog events it queued (Kamailio's `mqueue` drained by an `rtimer` process), so no SIP worker waits for
 * Lintel. Answered once they are queued for writing (apps/server/src/sip/call-writer.ts): `ok` true for each
 * taken.
 */
export const sipCallEvents = defineCommand({
  id: 'sip.call_events',
  http: { method: 'POST', path: '/sip/call-events' },
  access: 'sip',
  hidden: true,
  args: z.object({ events: z.array(SipCallEvent).max(256) }),
  result: z.object({ ok: z.array(z.boolean()) }),
});

/**
 * A request from `ip` whose credentials the SIP server refused (a wrong password, or a number it does not
 * hold): counted against the address by the SIP service's IP blocking (spec part 2 §7 "IP blocking", the
 * `sip` service's settings and whitelist). `ban_s`: how long the address is banned now ("0": it is not), in
 * text as the SIP server reads it; the SIP server drops the address's requests for that long.
 */
export const sipAuthFailed = defineCommand({
  id: 'sip.auth_failed',
  http: { method: 'POST', path: '/sip/auth-failed' },
  access: 'sip',
  hidden: true,
  args: z.object({ ip: SipText(64).min(1), user: SipText(64).default('') }),
  result: z.object({ ban_s: z.string() }),
});

// ----- call management (spec part 2 §7) ------------------------------------------------------------------------

/** Who manages calls: anyone who may call or receive, and the concierges who intercept. */
export const CallGates = [
  'calls.call_all',
  'calls.call_own_group',
  'calls.call_descendants',
  'calls.call_panel',
  'calls.concierge_receive',
  'calls.can_intercept_call_like_concierge',
] as const;

/**
 * The calls in progress (`GET /calls/management/list`): those of the caller's own number; every call of the
 * project for a concierge who may intercept.
 */
export const callList = defineCommand({
  id: 'call.list',
  http: { method: 'GET', path: '/calls/management/list' },
  args: NoArgs,
  result: z.object({ data: z.array(ServerCall) }),
  gates: { anyPermission: [...CallGates], licence: ['sip'] },
});

/** Ends a call (`POST /calls/management/{id}/stop`): the dialog ended on both sides, or the ringing cancelled. */
export const callStop = defineCommand({
  id: 'call.stop',
  http: { method: 'POST', path: '/calls/management/:id/stop' },
  args: z.object({ id: z.string().min(1).max(128) }),
  result: z.object({ data: ServerCall }),
  gates: { anyPermission: [...CallGates], licence: ['sip'] },
});

// ----- interception (spec part 1 §2.5 "Call interception panel", §3 "Interception settings", §4; part 2 §5, §7) --

/** Who intercepts: the permission that allows call interception and waiting calls (spec part 2 §6). */
export const InterceptGates = ['calls.can_intercept_call_like_concierge'] as const;

/**
 * A concierge's interception settings (spec part 1 §3): whether he intercepts now, the groups whose panels'
 * calls come to him (ids), and the groups he may choose from (`userGroups`: his groups and those below them,
 * the project's for `calls.call_all`, by name).
 */
export const InterceptionSettings = z.object({
  isActive: z.boolean(),
  groups: z.array(z.number().int()),
  userGroups: z.array(Ref),
});
export type InterceptionSettings = z.infer<typeof InterceptionSettings>;

/** The caller's interception settings (`GET /calls/interception`). */
export const callInterception = defineCommand({
  id: 'call.interception',
  http: { method: 'GET', path: '/calls/interception' },
  args: NoArgs,
  result: InterceptionSettings,
  gates: { anyPermission: [...InterceptGates], licence: ['sip'] },
});

/**
 * Starts or stops intercepting (`POST /calls/interception {is_active, domains}`): while active, the calls of
 * the panels of those groups ring the caller's number (and wait for a concierge when none answers). Starting
 * needs at least one group (`interception_group_required`, spec part 2 §5); a group he may not choose is
 * `invalid_related_entity`. The groups are kept when he stops, for the next start.
 */
export const callIntercept = defineCommand({
  id: 'call.intercept',
  http: { method: 'POST', path: '/calls/interception' },
  args: z.object({ is_active: z.boolean(), domains: Ids(500).default([]) }),
  result: InterceptionSettings,
  gates: { anyPermission: [...InterceptGates], licence: ['sip'] },
});

// ----- call history (spec part 1 §3 "History item", §4 call results; part 2 §7 "Call history") ------------

export const CallResults = ['answered', 'cancel', 'busy', 'noanswer', 'failed'] as const;
export const CallDirections = ['incoming', 'outgoing'] as const;
/**
 * Why the routing refused a call (its result is then `failed`): `wrong_number`, a number Lintel does not hold
 * (the spec's SIP cause, part 2 §9); `own_number`, the caller's own; `inactive`, a deactivated number.
 */
export const CallFailReasons = ['wrong_number', 'own_number', 'inactive'] as const;

const HistoryParty = z.object({
  number: z.string(),
  user: z.object({ name: z.string() }).nullable(),
});

export const CallHistoryItem = z.object({
  id: z.number().int(),
  from: HistoryParty,
  to: HistoryParty,
  from_number: z.string(),
  to_number: z.string(),
  answered_by: z.string().nullable(),
  status: z.enum(CallResults),
  direction: z.enum(CallDirections),
  /** seconds of talk */
  duration: z.number().int(),
  /** why the routing refused the call; null when it was routed */
  reason: z.enum(CallFailReasons).nullable(),
  /** the SIP trunk it came in from or went out through; null between numbers */
  trunk_id: z.number().int().nullable(),
  trunk: z.object({ id: z.number().int(), name: z.string() }).nullable(),
  created_at: Timestamp,
});
export type CallHistoryItem = z.infer<typeof CallHistoryItem>;

export const callHistoryFields: Record<string, ResourceField> = {
  created_at: { kind: 'date', default: true, filterable: true, sortable: true },
  from_number: { kind: 'text', default: true, filterable: true },
  to_number: { kind: 'text', default: true, filterable: true },
  status: { kind: 'enum', values: CallResults, default: true, filterable: true },
  direction: { kind: 'enum', values: CallDirections, default: true, filterable: true },
  duration: { kind: 'number', default: true, filterable: true },
  reason: { kind: 'enum', values: CallFailReasons, default: true, filterable: true },
  trunk_id: { kind: 'number', filterable: true },
  answered_by: { kind: 'text', filterable: true },
  id: { kind: 'number', filterable: true },
};

/** The call history: newest first, keyset paged by (created_at, id) (the spec's page of 50 is the client's). */
export const callHistoryJournal = defineJournal({
  noun: 'call_history',
  segment: 'call-history',
  record: CallHistoryItem,
  time: 'created_at',
  fields: callHistoryFields,
  gates: { view: ['calls.history'] },
  // telephony's: without SIP in the licence the history is closed like the rest of it
  licence: ['sip'],
});

export const callHistoryList = callHistoryJournal.list;
export const callHistoryExport = callHistoryJournal.export;
