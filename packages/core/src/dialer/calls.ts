/**
 * The dialer's calls (spec part 1 §3 "Dialer call", §4 call states and transitions, one active call,
 * follow-up calls, calls to one's own number; part 2 §7 call updates). Pure: `reduceCalls(state, event,
 * now)` gives the next state and the effects the sip.js layer and the console must carry out (hang up,
 * hold, answer, send tones, ring, ask the user…). Timers stay outside: destroyed calls carry `destroyedAt`
 * and `pruneCalls(state, now)` drops them 5 s after.
 *
 * A call "holds the media" when this dialer has a SIP session for it and it is calling (outgoing), joining
 * or active: at most one call does at a time. A call the server reports answered without a session here
 * (answered by another user, or by another device of the same number) is shown, never counted as ours.
 *
 * Early media (issue 23 item 7): an incoming call whose offer has video is answered provisionally (`progress`:
 * a 183 Session Progress whose SDP answer receives the caller's media and sends nothing) while it rings, so the
 * door panel's camera shows on the ringing card before the concierge answers; accepting it then sends the
 * 200 OK and the microphone. The preview holds no media in the one-active-call sense: nothing is sent or played.
 */
import { Dialer } from '../constants';
import type { ErrorKey } from '../errors';
import { dtmfTones, type DtmfTone } from './dtmf';
import { answeredByNumber, normaliseNumber, sameNumber } from './numbers';

export const CallStatuses = [
  'new',
  'calling',
  'active',
  'joining',
  'paused',
  'processed_paused',
  'destroyed',
] as const;
export type CallStatus = (typeof CallStatuses)[number];
export type CallType = 'normal' | 'awaiting';
export type EarlyMedia = 'none' | 'starting' | 'flowing';
export type CallDirection = 'incoming' | 'outgoing';

export const ServerCallStatuses = [
  'new',
  'calling',
  'answered',
  'waiting',
  'answered_waiting',
  'destroyed',
] as const;
export type ServerCallStatus = (typeof ServerCallStatuses)[number];

/** The server status mapping of spec part 1 §4. */
export const ServerStatusMapping: Readonly<Record<ServerCallStatus, CallStatus>> = {
  new: 'new',
  calling: 'calling',
  answered: 'active',
  waiting: 'paused',
  answered_waiting: 'processed_paused',
  destroyed: 'destroyed',
};

/** A server call (spec part 1 §3 "Server call"), as the CallUpdated event carries it. */
export interface ServerCall {
  id: string;
  status: ServerCallStatus;
  type: CallType;
  caller: string;
  callee: string;
  /** "number-suffix": the number before the dash answered */
  answered_by: string | null;
  /** seconds */
  created_at: number;
  info?: { address?: string | null; user?: string | null } | null;
}

export interface DialerCall {
  speechId: string;
  parentId: string | null;
  number: string;
  callee: string | null;
  direction: CallDirection;
  type: CallType;
  status: CallStatus;
  hasSipSession: boolean;
  video: boolean;
  /**
   * The early media of a ringing incoming video call: `none` (no preview: no video offered, or the 183 failed),
   * `starting` (the 183 with its SDP answer is being made), `flowing` (sent: the caller's video shows while it
   * rings). Stays `flowing` once answered (the same media goes on).
   */
  earlyMedia: EarlyMedia;
  /** ms since the epoch */
  started: number;
  sosCall: boolean;
  info: { address: string | null; user: string | null } | null;
  answeredBy: string | null;
  /** answered by another number than ours: shown disabled, "answered by another user" */
  answeredByOther: boolean;
  settings: { micMuted: boolean; volumeMuted: boolean };
  /**
   * Why the last join of this call was refused (`call_join_forbidden`, `call_join_gone`, …): said on its card
   * until it is joined again or the server tells of a change. The call itself stays as it was.
   */
  refusal: ErrorKey | null;
  /** ms since the epoch when it became destroyed; removed `Dialer.destroyedCallKeptMs` after */
  destroyedAt: number | null;
}

/** What the user is starting, kept while the user is asked to confirm. */
export type PendingAction =
  | { type: 'dial'; speechId: string; number: string; video: boolean }
  | { type: 'accept'; speechId: string }
  | { type: 'join'; speechId: string };

export type Confirmation =
  /** another call holds the media: it will be cancelled (normal) or held (awaiting) */
  | { kind: 'switch'; action: PendingAction; activeId: string; outcome: 'cancel' | 'hold' }
  /** a follow-up call ended: return to its paused parent? */
  | { kind: 'return'; speechId: string };

export interface CallsState {
  ownNumber: string;
  calls: DialerCall[];
  selectedId: string | null;
  lastNumber: string | null;
  pending: Confirmation | null;
  ringing: boolean;
}

export type CallEvent =
  /** place a call (the keypad has checked the number with `planCall`; refused again here if it is ours) */
  | { type: 'dial'; speechId: string; number: string; video?: boolean }
  /** sip.js received an INVITE */
  | {
      type: 'incoming';
      speechId: string;
      number: string;
      callee?: string | null;
      sos?: boolean;
      callType?: CallType;
      video?: boolean;
    }
  | { type: 'accept'; speechId: string }
  | { type: 'hangup'; speechId: string }
  | { type: 'pause'; speechId: string }
  /** resume a paused call or join an awaiting one */
  | { type: 'join'; speechId: string }
  /** the user's answer to `pending` */
  | { type: 'confirm'; accept: boolean }
  /** sip.js: the 183 with the early media's SDP answer was sent (`ok`), or could not be made */
  | { type: 'early_media'; speechId: string; ok: boolean }
  /** sip.js: the outgoing INVITE or the re-INVITE / join was accepted */
  | { type: 'session_accepted'; speechId: string }
  /** sip.js: the session ended (bye from the far end, rejected, failed, transport lost) */
  | { type: 'session_ended'; speechId: string }
  /** sip.js: the SIP server refused to join an awaiting call (the MESSAGE's final status: 403, 404, …) */
  | { type: 'join_failed'; speechId: string; status: number }
  /** the server's CallUpdated event */
  | { type: 'server_update'; call: ServerCall }
  | { type: 'dtmf'; speechId: string; key: string }
  | { type: 'door_open'; speechId: string }
  | { type: 'mute'; speechId: string; what: 'mic' | 'volume'; muted: boolean }
  | { type: 'select'; speechId: string }
  | { type: 'prune' };

export type CallEffect =
  | { type: 'invite'; speechId: string; number: string; video: boolean; parentId: string | null }
  | { type: 'answer'; speechId: string }
  /** answer a ringing incoming video call provisionally: a 183 whose SDP receives the caller's media, sends none */
  | { type: 'progress'; speechId: string }
  /** a normal outgoing call not yet answered is cancelled, an established one sends bye, a ringing incoming one is rejected */
  | { type: 'end'; speechId: string; how: 'cancel' | 'bye' | 'reject' | 'terminate' }
  /** an awaiting call is stopped through the server (POST /calls/management/{id}/stop) */
  | { type: 'stop_on_server'; speechId: string }
  /** hold a normal call (re-INVITE) / take it off hold */
  | { type: 'hold'; speechId: string }
  | { type: 'unhold'; speechId: string }
  /** join an awaiting call (a new session to the platform holding it) */
  | { type: 'join'; speechId: string }
  | { type: 'send_dtmf'; speechId: string; tones: DtmfTone[] }
  | { type: 'mute'; speechId: string; what: 'mic' | 'volume'; muted: boolean }
  | { type: 'ring' }
  | { type: 'stop_ring' }
  | { type: 'ask'; confirmation: Confirmation }
  | { type: 'refuse'; code: ErrorKey }
  /** the SIP server refused a join (`joinRefusal`): said to the user; the call is left waiting, not ours */
  | { type: 'join_refused'; code: ErrorKey };

export interface CallsResult {
  state: CallsState;
  effects: CallEffect[];
}

/** The catalogue code of a refused join (the SIP status of the join MESSAGE). */
export function joinRefusal(status: number): ErrorKey {
  if (status === 403) return 'call_join_forbidden';
  if (status === 404) return 'call_join_gone';
  return 'cant_perform_action';
}

/**
 * Whether a call of the server's call list belongs in this dialer: a call of its own number (caller, callee,
 * answered by it), or an awaiting call (which any concierge who may intercept can join). The list of a concierge
 * who may intercept holds every call of the project; its number's channel and the waiting calls' channel carry
 * only these.
 */
export function concernsDialer(call: ServerCall, ownNumber: string): boolean {
  if (call.type === 'awaiting') return true;
  const answeredBy = answeredByNumber(call.answered_by);
  return (
    sameNumber(call.caller, ownNumber) ||
    sameNumber(call.callee, ownNumber) ||
    (answeredBy !== null && sameNumber(answeredBy, ownNumber))
  );
}

export function initialCalls(ownNumber: string): CallsState {
  return { ownNumber, calls: [], selectedId: null, lastNumber: null, pending: null, ringing: false };
}

const LIVE_MEDIA: ReadonlySet<CallStatus> = new Set(['calling', 'active', 'joining']);

/** Whether this dialer's media is on this call (at most one call at a time). */
export function holdsMedia(call: DialerCall): boolean {
  return call.hasSipSession && LIVE_MEDIA.has(call.status);
}

/** Whether the far end's video shows on the call's card: its early media while it rings, or once active. */
export function showsVideo(call: DialerCall): boolean {
  if (!call.video || !call.hasSipSession || call.answeredByOther) return false;
  return call.status === 'active' || (isRingingIncoming(call) && call.earlyMedia === 'flowing');
}

/** A call ringing here, waiting to be accepted. */
export function isRingingIncoming(call: DialerCall): boolean {
  return call.direction === 'incoming' && call.status === 'new' && call.hasSipSession;
}

export function liveCalls(state: CallsState): DialerCall[] {
  return state.calls.filter((c) => c.status !== 'destroyed');
}

/** Drops the calls destroyed `Dialer.destroyedCallKeptMs` or longer ago. */
export function pruneCalls(state: CallsState, now: number): CallsState {
  const calls = state.calls.filter(
    (c) => c.destroyedAt === null || now - c.destroyedAt < Dialer.destroyedCallKeptMs,
  );
  if (calls.length === state.calls.length) return state;
  const selectedId = calls.some((c) => c.speechId === state.selectedId) ? state.selectedId : null;
  return { ...state, calls, selectedId };
}

// ---------------------------------------------------------------------------------------------------------

function find(state: CallsState, speechId: string): DialerCall | undefined {
  return state.calls.find((c) => c.speechId === speechId);
}

function live(state: CallsState, speechId: string): DialerCall | undefined {
  const call = find(state, speechId);
  return call && call.status !== 'destroyed' ? call : undefined;
}

function update(state: CallsState, speechId: string, patch: Partial<DialerCall>): CallsState {
  return { ...state, calls: state.calls.map((c) => (c.speechId === speechId ? { ...c, ...patch } : c)) };
}

function refuse(state: CallsState, code: ErrorKey): CallsResult {
  return { state, effects: [{ type: 'refuse', code }] };
}

/** The call holding the media other than `exceptId`. */
function mediaHolder(state: CallsState, exceptId?: string): DialerCall | undefined {
  return state.calls.find((c) => c.speechId !== exceptId && holdsMedia(c));
}

/** Keeps the ring in step with the ringing calls: rings while one rings, stops when none does. */
function syncRing(result: CallsResult): CallsResult {
  const ringing = result.state.calls.some(isRingingIncoming);
  if (ringing === result.state.ringing) return result;
  return {
    state: { ...result.state, ringing },
    effects: [...result.effects, ringing ? { type: 'ring' } : { type: 'stop_ring' }],
  };
}

/** Ends a call (spec §4 "Ending"), without the follow-up question. */
function endCall(state: CallsState, call: DialerCall, now: number): CallsResult {
  const effects: CallEffect[] = [];
  if (call.type === 'awaiting') {
    // stopped through the server; destroyed and removed even if the stop fails
    if (call.hasSipSession) effects.push({ type: 'end', speechId: call.speechId, how: 'terminate' });
    effects.push({ type: 'stop_on_server', speechId: call.speechId });
  } else if (call.hasSipSession) {
    let how: 'cancel' | 'bye' | 'reject' | 'terminate' = 'terminate';
    if (isRingingIncoming(call)) how = 'reject';
    else if (call.direction === 'outgoing') how = call.status === 'calling' ? 'cancel' : 'bye';
    effects.push({ type: 'end', speechId: call.speechId, how });
  }
  const next = update(state, call.speechId, { status: 'destroyed', hasSipSession: false, destroyedAt: now });
  return { state: next, effects };
}

function pauseCall(state: CallsState, call: DialerCall): CallsResult {
  if (call.type === 'awaiting') {
    // the platform keeps the caller; our media session ends
    const effects: CallEffect[] = call.hasSipSession
      ? [{ type: 'end', speechId: call.speechId, how: 'terminate' }]
      : [];
    return { state: update(state, call.speechId, { status: 'paused', hasSipSession: false }), effects };
  }
  return {
    state: update(state, call.speechId, { status: 'paused' }),
    effects: [{ type: 'hold', speechId: call.speechId }],
  };
}

/**
 * After `ended` (a follow-up call) was destroyed: when its parent is a paused awaiting call, ask whether to
 * return to it if more than one call is live; with the parent the only live call, return to it at once.
 */
function withFollowUp(ended: DialerCall, result: CallsResult): CallsResult {
  if (!ended.parentId) return result;
  const parent = live(result.state, ended.parentId);
  if (!parent || parent.type !== 'awaiting' || parent.status !== 'paused') return result;
  if (liveCalls(result.state).length > 1) {
    if (result.state.pending) return result;
    const confirmation: Confirmation = { kind: 'return', speechId: parent.speechId };
    return {
      state: { ...result.state, pending: confirmation },
      effects: [...result.effects, { type: 'ask', confirmation }],
    };
  }
  if (mediaHolder(result.state)) return result;
  const joined = startJoin(result.state, parent);
  return { state: joined.state, effects: [...result.effects, ...joined.effects] };
}

function startJoin(state: CallsState, call: DialerCall): CallsResult {
  if (call.type === 'normal') {
    return {
      state: { ...update(state, call.speechId, { status: 'joining' }), selectedId: call.speechId },
      effects: [{ type: 'unhold', speechId: call.speechId }],
    };
  }
  return {
    state: {
      ...update(state, call.speechId, { status: 'joining', hasSipSession: true, refusal: null }),
      selectedId: call.speechId,
    },
    effects: [{ type: 'join', speechId: call.speechId }],
  };
}

/** The action itself, once no other call holds the media. */
function perform(
  state: CallsState,
  action: PendingAction,
  now: number,
  heldParent: string | null,
): CallsResult {
  switch (action.type) {
    case 'dial': {
      const selected = state.selectedId ? live(state, state.selectedId) : undefined;
      const parentId =
        heldParent ??
        (selected && selected.type === 'awaiting' && selected.status === 'paused' ? selected.speechId : null);
      const call: DialerCall = {
        speechId: action.speechId,
        parentId,
        number: action.number,
        callee: action.number,
        direction: 'outgoing',
        type: 'normal',
        status: 'calling',
        hasSipSession: true,
        video: action.video,
        earlyMedia: 'none',
        started: now,
        sosCall: false,
        info: null,
        answeredBy: null,
        answeredByOther: false,
        settings: { micMuted: false, volumeMuted: false },
        refusal: null,
        destroyedAt: null,
      };
      return {
        state: {
          ...state,
          calls: [...state.calls, call],
          selectedId: call.speechId,
          lastNumber: action.number,
        },
        effects: [
          { type: 'invite', speechId: call.speechId, number: call.number, video: call.video, parentId },
        ],
      };
    }
    case 'accept': {
      const call = live(state, action.speechId);
      if (!call || !isRingingIncoming(call)) return refuse(state, 'cant_perform_action');
      return {
        state: {
          ...update(state, call.speechId, { status: 'active', started: now }),
          selectedId: call.speechId,
        },
        effects: [{ type: 'answer', speechId: call.speechId }],
      };
    }
    case 'join': {
      const call = live(state, action.speechId);
      if (!call || !canJoin(state, call)) return refuse(state, 'cant_perform_action');
      return startJoin(state, call);
    }
  }
}

function canJoin(state: CallsState, call: DialerCall): boolean {
  if (call.answeredByOther) return false;
  if (call.status === 'paused') return true;
  // an answered waiting call (processed_paused) may be taken back by the number that answered it
  return (
    call.status === 'processed_paused' &&
    (call.answeredBy === null || sameNumber(call.answeredBy, state.ownNumber))
  );
}

/** Checks an action's call, then performs it or asks first when another call holds the media. */
function request(state: CallsState, action: PendingAction, now: number): CallsResult {
  if (state.pending) return refuse(state, 'cant_perform_action');
  const holder = mediaHolder(state, action.speechId);
  if (!holder) return syncRing(perform(state, action, now, null));
  const confirmation: Confirmation = {
    kind: 'switch',
    action,
    activeId: holder.speechId,
    outcome: holder.type === 'awaiting' ? 'hold' : 'cancel',
  };
  return { state: { ...state, pending: confirmation }, effects: [{ type: 'ask', confirmation }] };
}

function stillPossible(state: CallsState, action: PendingAction): boolean {
  if (action.type === 'dial') return !find(state, action.speechId);
  const call = live(state, action.speechId);
  if (!call) return false;
  return action.type === 'accept' ? isRingingIncoming(call) : canJoin(state, call);
}

function confirm(state: CallsState, accept: boolean, now: number): CallsResult {
  const pending = state.pending;
  if (!pending) return refuse(state, 'cant_perform_action');
  const cleared: CallsState = { ...state, pending: null };
  if (!accept) return { state: cleared, effects: [] };
  if (pending.kind === 'return') {
    const parent = live(cleared, pending.speechId);
    if (!parent || !canJoin(cleared, parent)) return { state: cleared, effects: [] };
    return request(cleared, { type: 'join', speechId: parent.speechId }, now);
  }
  // the action may no longer apply (a ringing call hung up by its caller or answered elsewhere): then
  // nothing happens, and the call holding the media keeps it
  if (!stillPossible(cleared, pending.action)) return { state: cleared, effects: [] };
  let current: CallsResult = { state: cleared, effects: [] };
  let heldParent: string | null = null;
  const holder = mediaHolder(cleared, pending.action.speechId);
  if (holder) {
    // no follow-up question here: the user just chose where to go
    current = holder.type === 'awaiting' ? pauseCall(cleared, holder) : endCall(cleared, holder, now);
    if (holder.type === 'awaiting') heldParent = holder.speechId;
  }
  // a new call started from a paused awaiting call is its follow-up
  const done = perform(
    current.state,
    pending.action,
    now,
    pending.action.type === 'dial' ? heldParent : null,
  );
  return syncRing({ state: done.state, effects: [...current.effects, ...done.effects] });
}

function fromServer(state: CallsState, server: ServerCall, now: number): CallsResult {
  const status = ServerStatusMapping[server.status];
  if (!status) return { state, effects: [] };
  const answeredBy = answeredByNumber(server.answered_by);
  const answeredByOther = answeredBy !== null && !sameNumber(answeredBy, state.ownNumber);
  const info = server.info ? { address: server.info.address ?? null, user: server.info.user ?? null } : null;
  const existing = find(state, server.id);
  if (!existing) {
    if (status === 'destroyed') return { state, effects: [] };
    const own = sameNumber(server.caller, state.ownNumber);
    const call: DialerCall = {
      speechId: server.id,
      parentId: null,
      number: normaliseNumber(own ? server.callee : server.caller),
      callee: server.callee,
      direction: own ? 'outgoing' : 'incoming',
      type: server.type,
      status,
      hasSipSession: false,
      video: false,
      earlyMedia: 'none',
      started: server.created_at * 1000,
      sosCall: false,
      info,
      answeredBy,
      answeredByOther,
      settings: { micMuted: false, volumeMuted: false },
      refusal: null,
      destroyedAt: null,
    };
    return { state: { ...state, calls: [...state.calls, call] }, effects: [] };
  }
  if (existing.status === 'destroyed') return { state, effects: [] };
  const patch: Partial<DialerCall> = {
    answeredBy,
    answeredByOther,
    info: info ?? existing.info,
    type: server.type,
    // a refused join's reason holds while the call is as it was
    refusal: status === existing.status && !answeredByOther ? existing.refusal : null,
  };
  if (status === 'destroyed') {
    const ended = endCall(update(state, existing.speechId, patch), { ...existing, ...patch }, now);
    // the server ended it: nothing to stop there again
    const effects = ended.effects.filter((e) => e.type !== 'stop_on_server');
    return syncRing(withFollowUp(existing, { state: ended.state, effects }));
  }
  if (existing.hasSipSession) {
    // our session decides our media states; a call taken by another user leaves us
    if (answeredByOther && isRingingIncoming(existing)) {
      const next = update(state, existing.speechId, { ...patch, status, hasSipSession: false });
      return syncRing({
        state: next,
        effects: [{ type: 'end', speechId: existing.speechId, how: 'terminate' }],
      });
    }
    return { state: update(state, existing.speechId, patch), effects: [] };
  }
  return { state: update(state, existing.speechId, { ...patch, status }), effects: [] };
}

/**
 * The next state and the effects of an event at `now` (ms). Calls destroyed `Dialer.destroyedCallKeptMs`
 * before `now` are dropped first, whatever the event.
 */
export function reduceCalls(before: CallsState, event: CallEvent, now: number): CallsResult {
  const state = pruneCalls(before, now);
  switch (event.type) {
    case 'dial': {
      const number = normaliseNumber(event.number);
      if (number === '') return refuse(state, 'call_number_required');
      if (sameNumber(number, state.ownNumber)) return refuse(state, 'own_number_call');
      if (find(state, event.speechId)) return refuse(state, 'cant_perform_action');
      return request(
        state,
        { type: 'dial', speechId: event.speechId, number, video: event.video ?? false },
        now,
      );
    }
    case 'incoming': {
      const video = event.video ?? false;
      // a video offer is answered with early media while it rings (the door panel's camera before answering)
      const early: Pick<DialerCall, 'video' | 'earlyMedia'> = {
        video,
        earlyMedia: video ? 'starting' : 'none',
      };
      const progress: CallEffect[] = video ? [{ type: 'progress', speechId: event.speechId }] : [];
      if (find(state, event.speechId)) {
        // the server's update came first: the session is now ours to ring
        const known = live(state, event.speechId);
        if (!known || known.status !== 'new' || known.hasSipSession) return { state, effects: [] };
        return syncRing({
          state: update(state, event.speechId, {
            hasSipSession: true,
            direction: 'incoming',
            sosCall: event.sos ?? false,
            ...early,
          }),
          effects: progress,
        });
      }
      const call: DialerCall = {
        speechId: event.speechId,
        parentId: null,
        number: normaliseNumber(event.number),
        callee: event.callee ?? null,
        direction: 'incoming',
        type: event.callType ?? 'normal',
        status: 'new',
        hasSipSession: true,
        ...early,
        started: now,
        sosCall: event.sos ?? false,
        info: null,
        answeredBy: null,
        answeredByOther: false,
        settings: { micMuted: false, volumeMuted: false },
        refusal: null,
        destroyedAt: null,
      };
      return syncRing({ state: { ...state, calls: [...state.calls, call] }, effects: progress });
    }
    case 'early_media': {
      // the 183 made (or not) for a call still ringing here; a call answered meanwhile keeps the media it has
      const call = live(state, event.speechId);
      if (!call || !call.hasSipSession || call.earlyMedia !== 'starting') return { state, effects: [] };
      return {
        state: update(state, call.speechId, { earlyMedia: event.ok ? 'flowing' : 'none' }),
        effects: [],
      };
    }
    case 'accept': {
      const call = live(state, event.speechId);
      if (!call || !isRingingIncoming(call)) return refuse(state, 'cant_perform_action');
      return request(state, { type: 'accept', speechId: call.speechId }, now);
    }
    case 'join': {
      const call = live(state, event.speechId);
      if (!call || !canJoin(state, call)) return refuse(state, 'cant_perform_action');
      return request(state, { type: 'join', speechId: call.speechId }, now);
    }
    case 'hangup': {
      const call = live(state, event.speechId);
      if (!call) return refuse(state, 'cant_perform_action');
      if (call.answeredByOther && !call.hasSipSession) return refuse(state, 'cant_perform_action');
      return syncRing(withFollowUp(call, endCall(state, call, now)));
    }
    case 'pause': {
      const call = live(state, event.speechId);
      if (
        !call ||
        !call.hasSipSession ||
        (call.status !== 'active' && !(call.type === 'awaiting' && call.status === 'joining'))
      ) {
        return refuse(state, 'cant_perform_action');
      }
      return pauseCall(state, call);
    }
    case 'confirm':
      return confirm(state, event.accept, now);
    case 'session_accepted': {
      const call = live(state, event.speechId);
      if (!call || !call.hasSipSession || (call.status !== 'calling' && call.status !== 'joining')) {
        return { state, effects: [] };
      }
      return { state: update(state, call.speechId, { status: 'active' }), effects: [] };
    }
    case 'session_ended': {
      const call = live(state, event.speechId);
      if (!call || !call.hasSipSession) return { state, effects: [] };
      if (call.type === 'awaiting') {
        // our leg ended (or stopped ringing: another concierge took it, and the server says so next); the
        // platform still holds the caller until the server says otherwise
        return syncRing({
          state: update(state, call.speechId, { status: 'paused', hasSipSession: false }),
          effects: [],
        });
      }
      const ended = update(state, call.speechId, {
        status: 'destroyed',
        hasSipSession: false,
        destroyedAt: now,
      });
      return syncRing(withFollowUp(call, { state: ended, effects: [] }));
    }
    case 'join_failed': {
      // the join was refused: the call waits on as it was, ours no more, and its card says why (the server's
      // updates say what became of it); a join no card waits for any more is said aside
      const call = live(state, event.speechId);
      const code = joinRefusal(event.status);
      if (!call || call.type !== 'awaiting' || call.status !== 'joining')
        return { state, effects: [{ type: 'join_refused', code }] };
      return syncRing({
        state: update(state, call.speechId, { status: 'paused', hasSipSession: false, refusal: code }),
        effects: [],
      });
    }
    case 'server_update':
      return fromServer(state, event.call, now);
    case 'dtmf':
    case 'door_open': {
      const call = live(state, event.speechId);
      if (!call || !call.hasSipSession || call.status !== 'active')
        return refuse(state, 'cant_perform_action');
      const tones = dtmfTones(event.type === 'door_open' ? Dialer.doorTone.tone : event.key);
      if (tones.length === 0) return refuse(state, 'cant_perform_action');
      return { state, effects: [{ type: 'send_dtmf', speechId: call.speechId, tones }] };
    }
    case 'mute': {
      const call = live(state, event.speechId);
      if (!call || !call.hasSipSession) return refuse(state, 'cant_perform_action');
      const settings =
        event.what === 'mic'
          ? { ...call.settings, micMuted: event.muted }
          : { ...call.settings, volumeMuted: event.muted };
      return {
        state: update(state, call.speechId, { settings }),
        effects: [{ type: 'mute', speechId: call.speechId, what: event.what, muted: event.muted }],
      };
    }
    case 'select': {
      const call = find(state, event.speechId);
      if (!call) return refuse(state, 'cant_perform_action');
      return { state: { ...state, selectedId: call.speechId }, effects: [] };
    }
    case 'prune':
      return { state: pruneCalls(state, now), effects: [] };
  }
}
