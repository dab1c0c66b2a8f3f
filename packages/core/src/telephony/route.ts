/**
 * Where a call goes (issue 22 item 5): the one decision the SIP server asks Lintel for each new call. Pure: the
 * numbers, their owners, forward rules and the interceptions in force come in, a plan comes out; the server
 * reads them from the database and Kamailio carries the plan out (apps/server/sip/kamailio.cfg.tmpl).
 *
 * A plan is a list of steps, the first rung first. Each step rings its numbers together for at most `timeout`
 * seconds; when it fails, the SIP server goes to the step its `next` names for how it failed: `noanswer`
 * (nobody answered in time, or the phone said "temporarily unavailable") or `error` (not registered, busy,
 * refused, a server error); -1 ends the call with that failure. A call the caller cancels goes nowhere further.
 */
import { Weekdays } from '../constants';
import { localTime, type Weekday } from '../access/schedules';

/** How long a number rings before a redirect_if_no_answer rule moves on, by default (spec part 2 §9). */
export const DEFAULT_NO_ANSWER_TIMEOUT_S = 10;
/** How long the numbers of a later step (a rule's numbers, a queue) ring, by default (spec: forward timeout 60). */
export const DEFAULT_FORWARD_TIMEOUT_S = 60;
/** How long a number rings when nothing forwards it (and in the SIP server's fallback when Lintel is silent). */
export const DEFAULT_RING_TIMEOUT_S = 60;
/** How long an intercepted panel call rings the intercepting concierges before it waits (issue 22 item 7). */
export const DEFAULT_INTERCEPT_RING_S = 20;
/** How long the platform holds a waiting call for a concierge to take it before the caller hears "no answer". */
export const DEFAULT_WAITING_HOLD_S = 300;

export type ForwardRuleType = 'redirect_if_no_answer' | 'redirect_if_error';
export type ForwardMode = 'disabled' | 'manual' | 'picked';

/** A forward rule as the decision reads it (spec part 1 §3 "Forward rule"). */
export interface RouteForwardRule {
  id: number;
  type: ForwardRuleType;
  /** redirect_if_no_answer: seconds the called number rings before the redirect (default 10) */
  timeout: number;
  /** the numbers the call is redirected to, rung together */
  numbers: readonly string[];
  /** then each queue in turn, its numbers rung together, whatever the previous step's failure */
  queues: readonly (readonly string[])[];
  /** the days it applies on (none: every day) */
  days: readonly Weekday[];
  /** the time of day it applies within, seconds after local midnight; `to` before `from` spans midnight */
  period: { from: number; to: number } | null;
}

export type NumberOwner =
  | { kind: 'user'; userId: number }
  | { kind: 'device'; deviceId: number; groupId: number | null }
  | { kind: 'group'; groupId: number }
  | { kind: 'none' };

/** A virtual number as the decision reads it. */
export interface RouteNumber {
  number: string;
  projectId: number;
  isActive: boolean;
  owner: NumberOwner;
  /** disabled: the number only; manual: its forward rules; picked: also the numbers of its forward group */
  forwardMode: ForwardMode;
  forwardRules: readonly RouteForwardRule[];
  /** with `picked`: the numbers of its forward group's people, rung with it */
  forwardGroupNumbers: readonly string[];
}

/** An interception in force: a concierge takes the panel calls of these groups. */
export interface RouteInterception {
  conciergeNumber: string;
  groupIds: readonly number[];
}

/** A SIP trunk: a provider's line out for the numbers of its groups. */
export interface RouteTrunk {
  id: number;
  groupIds: readonly number[];
}

/**
 * A call in from a SIP trunk (a provider's line, known by the address it sends from): the caller is a number
 * of the outside world, and the number dialled must be one the trunk carries — a number of its project whose
 * group is one of the trunk's groups or below one (what `trunkGroups` the callee's group chain meets).
 */
export interface RouteFromTrunk {
  trunkId: number;
  projectId: number;
  /** the number as the provider gave it (the From's user), not one Lintel holds */
  caller: string;
}

export interface RouteInput {
  caller: RouteNumber | null;
  /** set for a call in from a trunk: `caller` is then null (the outside world's number is not Lintel's) */
  fromTrunk?: RouteFromTrunk;
  /** the caller's group and the groups above it, nearest first (which trunk carries its calls out) */
  callerGroups?: readonly number[];
  trunks?: readonly RouteTrunk[];
  callee: RouteNumber | null;
  /** the number dialled, as the INVITE named it */
  dialled: string;
  interceptions: readonly RouteInterception[];
  /**
   * an intercepted call rings the intercepting concierges `ringS` (default 20), then waits `holdS` more
   * (default 300) for one of them, or any concierge who may intercept, to take it (the server marks it
   * waiting; the SIP server holds its INVITE)
   */
  waiting?: { ringS?: number; holdS?: number };
  /** now, ms since the epoch, and the zone the rules' days and periods are read in */
  now: number;
  timeZone: string;
}

export type Failure = 'noanswer' | 'error';
export interface RouteStep {
  numbers: string[];
  timeout: number;
  /** the step to ring next after this one failed this way; -1: none */
  next: Record<Failure, number>;
}

const END = { noanswer: -1, error: -1 } as const;

export type RouteDecision =
  | {
      action: 'route';
      /** why: the number itself, its forward rules, or a concierge's interception */
      via: 'direct' | 'forward' | 'interception';
      steps: RouteStep[];
      /** the rules that shaped the plan */
      rules: number[];
    }
  /** out through a SIP trunk: a number Lintel does not hold, dialled by a number whose group has a trunk */
  | { action: 'trunk'; trunkId: number }
  | {
      action: 'reject';
      code: 403 | 404 | 480;
      /** `wrong_number`: the spec's SIP cause for a number Lintel does not hold (part 2 §9 block causes) */
      reason: 'unknown_caller' | 'wrong_number' | 'own_number' | 'inactive';
    };

/** Whether a rule applies at this moment (its days, its period). */
export function ruleApplies(rule: RouteForwardRule, now: number, timeZone: string): boolean {
  const t = localTime(now, timeZone);
  if (rule.days.length > 0) {
    const weekday = Weekdays[(((t.day + 3) % 7) + 7) % 7]!;
    if (!rule.days.includes(weekday)) return false;
  }
  if (rule.period) {
    const { from, to } = rule.period;
    if (from === to) return true;
    const inside = from < to ? t.seconds >= from && t.seconds < to : t.seconds >= from || t.seconds < to;
    if (!inside) return false;
  }
  return true;
}

/**
 * How many whole seconds from `input.now` the decision cannot change by the clock alone: until the next start
 * or end of a period, or the next local midnight, of the callee's forward rules (with `manual` forwarding; no
 * other part of the decision reads the clock). `Infinity` when nothing of it depends on the time; 0 when a
 * change of the zone's offset (daylight saving) falls in that window, whose local times are then not the ones
 * counted. The SIP server reuses a decision for that long at most (docs/decisions.md "Telephony: the SIP
 * server keeps Lintel's routes").
 */
export function decisionStableFor(input: RouteInput): number {
  const callee = input.callee;
  if (!callee || callee.forwardMode !== 'manual' || input.fromTrunk) return Infinity;
  const t = localTime(input.now, input.timeZone);
  const until = (b: number) => (((b - t.seconds) % 86_400) + 86_400) % 86_400 || 86_400;
  let s = Infinity;
  for (const rule of callee.forwardRules) {
    if (rule.days.length > 0) s = Math.min(s, until(0));
    if (rule.period && rule.period.from !== rule.period.to)
      s = Math.min(s, until(rule.period.from), until(rule.period.to));
  }
  if (s === Infinity) return s;
  // the boundary is counted from the start of the current second: one second less, whole
  const stable = Math.max(0, s - 1);
  const later = localTime(input.now + stable * 1000, input.timeZone);
  const counted = (later.day - t.day) * 86_400 + later.seconds - t.seconds;
  return counted === stable ? stable : 0;
}

const unique = (numbers: readonly string[], except: ReadonlySet<string>) => {
  const out: string[] = [];
  for (const n of numbers) if (!except.has(n) && !out.includes(n)) out.push(n);
  return out;
};

/** The decision. Unit-tested rule by rule in route.test.ts. */
export function decideRoute(input: RouteInput): RouteDecision {
  if (input.fromTrunk) return decideFromTrunk(input, input.fromTrunk);
  const { caller, callee } = input;
  // only a number Lintel holds may call (the SIP server authenticated it by that number's password)
  if (!caller || !caller.isActive) return { action: 'reject', code: 403, reason: 'unknown_caller' };
  if (input.dialled === caller.number) return { action: 'reject', code: 403, reason: 'own_number' };

  // interception: a panel's call from an intercepted group goes to the intercepting concierges, whoever it
  // was for (spec part 1 §4); the concierges ring together
  if (caller.owner.kind === 'device' && caller.owner.groupId !== null) {
    const groupId = caller.owner.groupId;
    const concierges = unique(
      input.interceptions.filter((i) => i.groupIds.includes(groupId)).map((i) => i.conciergeNumber),
      new Set([caller.number]),
    );
    if (concierges.length > 0)
      return {
        action: 'route',
        via: 'interception',
        steps: [
          {
            numbers: concierges,
            timeout:
              Math.max(1, input.waiting?.ringS ?? DEFAULT_INTERCEPT_RING_S) +
              Math.max(1, input.waiting?.holdS ?? DEFAULT_WAITING_HOLD_S),
            next: { ...END },
          },
        ],
        rules: [],
      };
  }

  // a number Lintel does not hold leaves through the trunk of the caller's nearest group that has one
  if (!callee) {
    for (const g of input.callerGroups ?? []) {
      const trunk = (input.trunks ?? []).find((t) => t.groupIds.includes(g));
      if (trunk) return { action: 'trunk', trunkId: trunk.id };
    }
  }
  // numbers of one project call each other only
  if (!callee || callee.projectId !== caller.projectId)
    return { action: 'reject', code: 404, reason: 'wrong_number' };
  if (!callee.isActive) return { action: 'reject', code: 480, reason: 'inactive' };
  return ringCallee(input, callee, caller.number);
}

/**
 * A call in from a trunk: the number dialled, when the trunk carries it (the server gives it as `callee`
 * only then), rung as any call to it is — its forward mode and rules; no interception (not a panel's call).
 */
function decideFromTrunk(input: RouteInput, from: RouteFromTrunk): RouteDecision {
  const { callee } = input;
  if (!callee || callee.projectId !== from.projectId)
    return { action: 'reject', code: 404, reason: 'wrong_number' };
  if (!callee.isActive) return { action: 'reject', code: 480, reason: 'inactive' };
  return ringCallee(input, callee, from.caller);
}

/** The callee's plan: the number (with its forward group when picked), then its forward rules' chains. */
function ringCallee(input: RouteInput, callee: RouteNumber, callerNumber: string): RouteDecision {
  const first: string[] = [callee.number];
  if (callee.forwardMode === 'picked')
    first.push(...unique(callee.forwardGroupNumbers, new Set([callee.number, callerNumber])));
  if (callee.forwardMode !== 'manual') {
    return {
      action: 'route',
      via: 'direct',
      steps: [{ numbers: first, timeout: DEFAULT_RING_TIMEOUT_S, next: { ...END } }],
      rules: [],
    };
  }

  // forward rules: the first of each type that applies now
  const applying = callee.forwardRules.filter((r) => ruleApplies(r, input.now, input.timeZone));
  const noAnswer = applying.find((r) => r.type === 'redirect_if_no_answer');
  const onError = applying.find((r) => r.type === 'redirect_if_error');
  if (!noAnswer && !onError)
    return {
      action: 'route',
      via: 'direct',
      steps: [{ numbers: first, timeout: DEFAULT_RING_TIMEOUT_S, next: { ...END } }],
      rules: [],
    };

  const seen = new Set([callerNumber, ...first]);
  const steps: RouteStep[] = [
    {
      numbers: first,
      timeout: noAnswer
        ? Math.max(1, noAnswer.timeout || DEFAULT_NO_ANSWER_TIMEOUT_S)
        : DEFAULT_RING_TIMEOUT_S,
      next: { ...END },
    },
  ];
  /** a rule's chain: its numbers, then each queue in turn, whatever the failure; the index of its first step */
  const chain = (rule: RouteForwardRule): number => {
    const start = steps.length;
    for (const group of [rule.numbers, ...rule.queues]) {
      const numbers = unique(group, seen);
      numbers.forEach((n) => seen.add(n));
      if (!numbers.length) continue;
      const prev = steps.length > start ? steps[steps.length - 1] : null;
      if (prev) prev.next = { noanswer: steps.length, error: steps.length };
      steps.push({ numbers, timeout: DEFAULT_FORWARD_TIMEOUT_S, next: { ...END } });
    }
    return steps.length > start ? start : -1;
  };
  // an unanswered call follows the no-answer rule's chain, a failed one the error rule's
  const first0 = steps[0]!;
  if (noAnswer) first0.next.noanswer = chain(noAnswer);
  if (onError) first0.next.error = chain(onError);
  return {
    action: 'route',
    via: steps.length > 1 ? 'forward' : 'direct',
    steps,
    rules: [noAnswer, onError].filter((r): r is RouteForwardRule => !!r).map((r) => r.id),
  };
}

/**
 * The plan as the SIP server reads it: steps separated by `|`, each `timeout:noanswer:error:numbers` where
 * `noanswer` and `error` are the indexes of the next step (-1: none) and the numbers are separated by `+`
 * (digits only: numbers are).
 */
export function encodePlan(steps: readonly RouteStep[]): string {
  return steps.map((s) => `${s.timeout}:${s.next.noanswer}:${s.next.error}:${s.numbers.join('+')}`).join('|');
}
