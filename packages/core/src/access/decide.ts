/**
 * Access rules (spec part 1 §3 "Access rule") and the one access decision: may this identifier pass this
 * device at this instant? Used by the server (the access matrix, guest open, the ACS log), by the simulator at
 * the door and by the tests; `decideByScan` is the plain reading of the rules the indexed `decide` must equal.
 *
 * The order (docs/decisions.md "Access control: the decision and the sync"):
 * 1. the identifier itself — revoked, not yet valid, expired (on the `_u` instants), pass limit reached;
 * 2. the rules that name this device and the identifier (by its id, its `access_rules`, its owner, or a
 *    group of its owner): a prohibition in force (no schedule, or one of its schedules open) refuses, whatever
 *    else allows — a prohibition always wins;
 * 3. else a permitting rule in force allows (the lowest rule id is named); when none is in force the reason
 *    is `holiday` if a permitting rule was closed by a holiday, `outside_schedule` if one exists but is
 *    closed, `no_access_rule` when none names both;
 * 4. an allowed passage is refused by anti-passback when the device is an entry (exit) of an area the
 *    identifier last entered (left) and the area's reset time has not passed.
 */
import { z } from 'zod';
import {
  compileSchedule,
  localTime,
  scheduleState,
  scheduleStateAt,
  type CompiledSchedule,
  type LocalTime,
  type ScheduleSpec,
  type ScheduleState,
} from './schedules';
import { withoutDefaults } from './partial';

const ids = (max = 100_000) => z.array(z.number().int().positive()).max(max);

const AccessRuleFields = z.object({
  name: z.string().trim().min(1).max(255),
  description: z.string().max(1000).default(''),
  /** at least one (part 2 §5 "Access rule: must have at least one device") */
  devices: ids(10_000).min(1),
  /** schedules; none: at all times */
  time_rules: ids(1000).default([]),
  users: ids().default([]),
  identifiers: ids().default([]),
  /** groups: their members, and the members of the groups below them */
  domains: ids(10_000).default([]),
  prohibition: z.boolean().default(false),
  is_shareable: z.boolean().default(false),
});

export const AccessRuleCreate = AccessRuleFields;
export type AccessRuleCreate = z.output<typeof AccessRuleCreate>;
/** A change: only the fields given (no default fills a field left out, so a PATCH keeps the rest). */
export const AccessRuleUpdate = withoutDefaults(AccessRuleFields);
export type AccessRuleUpdate = z.output<typeof AccessRuleUpdate>;
export const AccessRule = AccessRuleFields.extend({ id: z.number().int() });
export type AccessRule = z.output<typeof AccessRule>;

/** What the decision reads of a rule. */
export type AccessRuleSpec = Pick<
  AccessRule,
  'id' | 'devices' | 'time_rules' | 'users' | 'identifiers' | 'domains' | 'prohibition'
>;

/** What the decision reads of an identifier (an `Identifier` record has all of it). */
export interface DecisionIdentifier {
  id: number;
  is_active: boolean;
  owner: number | null;
  period_restrict_active: boolean;
  period_restrict_from_u: string | null;
  period_restrict_to_u: string | null;
  passes_restrict_active: boolean;
  passes_restrict_max_count: number;
  passes_count: number;
  /** the rules the identifier names itself (the same relation as a rule's `identifiers`, seen from it) */
  access_rules?: readonly number[];
}

/** An anti-passback area: its entry and exit devices; a passage older than `reset_after_s` no longer counts. */
export interface AntiPassbackArea {
  id: number;
  entry: readonly number[];
  exit: readonly number[];
  reset_after_s?: number | null;
}

export interface Passage {
  direction: 'in' | 'out';
  /** ms since the epoch */
  at: number;
}

export interface DecisionContext {
  /** the project's IANA time zone */
  tz: string;
  /** the holiday calendar in force at the device, as day numbers (`holidayDays`) */
  holidays?: ReadonlySet<number>;
  /** the owner's groups, with the groups above them */
  groups?: readonly number[];
  /** the identifier's last passage in each anti-passback area, by area id */
  lastPassages?: ReadonlyMap<number, Passage>;
}

/** The catalogue codes a refusal names (part 2 §8, locales errors.http). */
export const DecisionReasons = [
  'identifier_revoked',
  'identifier_not_yet_valid',
  'identifier_expired',
  'pass_limit_reached',
  'access_prohibited',
  'holiday',
  'outside_schedule',
  'no_access_rule',
  'anti_passback',
] as const;
export type DecisionReason = (typeof DecisionReasons)[number];

/** A decision (refusals naming no rule are shared, frozen objects: do not change a decision). */
export interface Decision {
  allowed: boolean;
  /** the rule that allowed or prohibited; null when no rule decided */
  rule: number | null;
  /** why not; null when allowed */
  reason: DecisionReason | null;
  /** the anti-passback area that refused */
  area?: number;
}

export interface AccessData {
  rules: readonly AccessRuleSpec[];
  schedules: ReadonlyMap<number, ScheduleSpec>;
  areas?: readonly AntiPassbackArea[];
}

const refusals = new Map<DecisionReason, Decision>(
  DecisionReasons.map((reason) => [reason, Object.freeze({ allowed: false, rule: null, reason })]),
);
/** The refusal that names no rule, for a reason (one shared frozen object each). */
const refusal = (reason: DecisionReason): Decision => refusals.get(reason)!;

// ----- the identifier itself ----------------------------------------------------------------------------------

/**
 * The pass limit a device holds for an identifier with one (docs/decisions.md "A pass limit across devices"):
 * the limit less the passes counted elsewhere (`passesCount`, the identifier's passes everywhere, less
 * `atDevice`, those this device counted itself). The device refuses once its own count reaches it, so it
 * refuses exactly when this decision does with the whole count: `atDevice >= limit - (passesCount - atDevice)`
 * is `passesCount >= limit`.
 */
export function devicePassLimit(limit: number, passesCount: number, atDevice: number): number {
  return Math.max(0, limit - Math.max(0, passesCount - atDevice));
}

const parsedInstants = new Map<string, number>();
function instantOf(iso: string): number {
  let t = parsedInstants.get(iso);
  if (t === undefined) {
    t = Date.parse(iso);
    if (parsedInstants.size > 200_000) parsedInstants.clear();
    parsedInstants.set(iso, t);
  }
  return t;
}

function identifierRefusal(i: DecisionIdentifier, instant: number): DecisionReason | null {
  if (!i.is_active) return 'identifier_revoked';
  if (i.period_restrict_active) {
    if (i.period_restrict_from_u && instant < instantOf(i.period_restrict_from_u))
      return 'identifier_not_yet_valid';
    if (i.period_restrict_to_u && instant > instantOf(i.period_restrict_to_u)) return 'identifier_expired';
  }
  if (i.passes_restrict_active && i.passes_count >= i.passes_restrict_max_count) return 'pass_limit_reached';
  return null;
}

// ----- anti-passback ----------------------------------------------------------------------------------------

interface AreaRole {
  area: number;
  direction: 'in' | 'out';
  resetMs: number;
}

function passbackRefusal(
  roles: readonly AreaRole[] | undefined,
  instant: number,
  ctx: DecisionContext,
): number | null {
  if (!roles || !ctx.lastPassages) return null;
  for (const r of roles) {
    const last = ctx.lastPassages.get(r.area);
    if (last && last.direction === r.direction && instant - last.at < r.resetMs) return r.area;
  }
  return null;
}

function areaRoles(areas: readonly AntiPassbackArea[] | undefined): Map<number, AreaRole[]> {
  const out = new Map<number, AreaRole[]>();
  for (const a of areas ?? []) {
    const resetMs = a.reset_after_s ? a.reset_after_s * 1000 : Number.POSITIVE_INFINITY;
    for (const [list, direction] of [
      [a.entry, 'in'],
      [a.exit, 'out'],
    ] as const)
      for (const d of list) {
        const roles = out.get(d) ?? [];
        roles.push({ area: a.id, direction, resetMs });
        out.set(d, roles);
      }
  }
  return out;
}

function finish(
  permit: number | null,
  sawHoliday: boolean,
  sawClosed: boolean,
  roles: readonly AreaRole[] | undefined,
  instant: number,
  ctx: DecisionContext,
): Decision {
  if (permit === null)
    return refusal(sawHoliday ? 'holiday' : sawClosed ? 'outside_schedule' : 'no_access_rule');
  const area = passbackRefusal(roles, instant, ctx);
  if (area !== null) return { allowed: false, rule: permit, reason: 'anti_passback', area };
  return { allowed: true, rule: permit, reason: null };
}

// ----- the reference: every rule, read as written --------------------------------------------------------------

/** The decision by reading every rule (the reference the index must equal; and fine for a handful of rules). */
export function decideByScan(
  identifier: DecisionIdentifier,
  device: number,
  instant: number,
  data: AccessData,
  ctx: DecisionContext,
): Decision {
  const refused = identifierRefusal(identifier, instant);
  if (refused) return refusal(refused);
  const groups = new Set(ctx.groups ?? []);
  const own = new Set(identifier.access_rules ?? []);
  let prohibition: number | null = null;
  let permit: number | null = null;
  let sawHoliday = false;
  let sawClosed = false;
  for (const r of data.rules) {
    if (!r.devices.includes(device)) continue;
    const applies =
      own.has(r.id) ||
      r.identifiers.includes(identifier.id) ||
      (identifier.owner !== null && r.users.includes(identifier.owner)) ||
      r.domains.some((g) => groups.has(g));
    if (!applies) continue;
    let state: ScheduleState = r.time_rules.length === 0 ? 'open' : 'closed';
    for (const s of r.time_rules) {
      const schedule = data.schedules.get(s);
      if (!schedule) continue;
      const st = scheduleState(schedule, instant, ctx.tz, ctx.holidays);
      if (st === 'open') {
        state = 'open';
        break;
      }
      if (st === 'holiday') state = 'holiday';
    }
    if (r.prohibition) {
      if (state === 'open' && (prohibition === null || r.id < prohibition)) prohibition = r.id;
    } else if (state === 'open') {
      if (permit === null || r.id < permit) permit = r.id;
    } else if (state === 'holiday') sawHoliday = true;
    else sawClosed = true;
  }
  if (prohibition !== null) return { allowed: false, rule: prohibition, reason: 'access_prohibited' };
  return finish(permit, sawHoliday, sawClosed, areaRoles(data.areas).get(device), instant, ctx);
}

// ----- the index ----------------------------------------------------------------------------------------------

interface RuleEntry {
  id: number;
  prohibition: boolean;
  devices: ReadonlySet<number>;
  identifiers: ReadonlySet<number>;
  users: ReadonlySet<number>;
  domains: ReadonlySet<number>;
  /** compiled schedules; null: at all times */
  schedules: CompiledSchedule[] | null;
  /** the ids of those schedules (the ones that exist); null: at all times */
  scheduleIds: number[] | null;
}

/** A rule naming a device and an identifier, as the device sync reads it. */
export interface MatchingRule {
  id: number;
  prohibition: boolean;
  /** the schedules in which it is in force (those that exist); null: at all times */
  time_rules: number[] | null;
}

/**
 * The rules indexed for the decision: by device and, within a device, by the identifier, user or group they
 * name, so a decision is a handful of lookups whatever the number of rules; their schedules compiled once. Build it when the rules change (the server keeps one per project, rebuilt on a rule, schedule
 * or area change; the simulator one per device).
 */
export class AccessIndex {
  private readonly byId = new Map<number, RuleEntry>();
  /** device → (subject key → the rules naming both, lowest id first) */
  private readonly atDevice = new Map<number, Map<number, RuleEntry[]>>();
  private readonly ruleIdsOfDevice = new Map<number, number[]>();
  private readonly areas: Map<number, AreaRole[]>;
  /** the state of the decision under way (one at a time: the decision is synchronous) */
  private readonly scratch: {
    instant: number;
    ctx: DecisionContext | undefined;
    local: LocalTime | undefined;
    prohibition: number | null;
    permit: number | null;
    sawHoliday: boolean;
    sawClosed: boolean;
  } = {
    instant: 0,
    ctx: undefined,
    local: undefined,
    prohibition: null,
    permit: null,
    sawHoliday: false,
    sawClosed: false,
  };

  constructor(data: AccessData) {
    const compiled = new Map<number, CompiledSchedule>();
    for (const [id, s] of data.schedules) compiled.set(id, compileSchedule(s));
    const push = (device: number, key: number, e: RuleEntry) => {
      let here = this.atDevice.get(device);
      if (!here) this.atDevice.set(device, (here = new Map()));
      const l = here.get(key);
      if (l) {
        if (l[l.length - 1] !== e) l.push(e);
      } else here.set(key, [e]);
    };
    const sorted = [...data.rules].sort((a, b) => a.id - b.id);
    for (const r of sorted) {
      const e: RuleEntry = {
        id: r.id,
        prohibition: r.prohibition,
        devices: new Set(r.devices),
        identifiers: new Set(r.identifiers),
        users: new Set(r.users),
        domains: new Set(r.domains),
        schedules:
          r.time_rules.length === 0
            ? null
            : r.time_rules.map((s) => compiled.get(s)).filter((s): s is CompiledSchedule => s !== undefined),
        scheduleIds: r.time_rules.length === 0 ? null : r.time_rules.filter((s) => compiled.has(s)),
      };
      this.byId.set(r.id, e);
      for (const d of e.devices) {
        const ids = this.ruleIdsOfDevice.get(d);
        if (ids) ids.push(r.id);
        else this.ruleIdsOfDevice.set(d, [r.id]);
        for (const i of e.identifiers) push(d, i * KINDS + IDENTIFIER, e);
        for (const u of e.users) push(d, u * KINDS + USER, e);
        for (const g of e.domains) push(d, g * KINDS + GROUP, e);
      }
    }
    this.areas = areaRoles(data.areas);
  }

  /** The rules naming a device (lowest id first). */
  rulesOfDevice(device: number): readonly number[] {
    return this.ruleIdsOfDevice.get(device) ?? [];
  }

  /**
   * The rules naming a device and an identifier (by its id, its own rules, its owner or one of his `groups`),
   * lowest id first, whatever the time: what the device sync derives an identifier's item from.
   */
  matching(
    identifier: Pick<DecisionIdentifier, 'id' | 'owner' | 'access_rules'>,
    device: number,
    groups: readonly number[] = [],
  ): MatchingRule[] {
    const found = new Map<number, RuleEntry>();
    const here = this.atDevice.get(device);
    const add = (l: RuleEntry[] | undefined) => {
      if (l) for (const e of l) found.set(e.id, e);
    };
    if (here) {
      add(here.get(identifier.id * KINDS + IDENTIFIER));
      if (identifier.owner !== null) add(here.get(identifier.owner * KINDS + USER));
      for (const g of groups) add(here.get(g * KINDS + GROUP));
    }
    for (const id of identifier.access_rules ?? []) {
      const e = this.byId.get(id);
      if (e && e.devices.has(device)) found.set(id, e);
    }
    return [...found.values()]
      .sort((a, b) => a.id - b.id)
      .map((e) => ({
        id: e.id,
        prohibition: e.prohibition,
        time_rules: e.scheduleIds && [...e.scheduleIds],
      }));
  }

  /** The decision (equal to `decideByScan` over the same data). */
  decide(identifier: DecisionIdentifier, device: number, instant: number, ctx: DecisionContext): Decision {
    const refused = identifierRefusal(identifier, instant);
    if (refused) return refusal(refused);
    const here = this.atDevice.get(device);
    const scratch = this.scratch;
    scratch.instant = instant;
    scratch.ctx = ctx;
    scratch.local = undefined;
    scratch.prohibition = null;
    scratch.permit = null;
    scratch.sawHoliday = false;
    scratch.sawClosed = false;
    if (here) {
      // the rules naming this device and the identifier, its owner or one of his groups: a lookup each
      this.considerAll(here.get(identifier.id * KINDS + IDENTIFIER));
      if (identifier.owner !== null) this.considerAll(here.get(identifier.owner * KINDS + USER));
      const groups = ctx.groups;
      if (groups)
        for (let k = 0; k < groups.length; k++) this.considerAll(here.get(groups[k]! * KINDS + GROUP));
    }
    // the rules the identifier names itself (they need not name any subject)
    const own = identifier.access_rules;
    if (own)
      for (let k = 0; k < own.length; k++) {
        const e = this.byId.get(own[k]!);
        if (e && e.devices.has(device)) this.consider(e);
      }
    const prohibition = scratch.prohibition as number | null;
    scratch.ctx = undefined;
    if (prohibition !== null) return { allowed: false, rule: prohibition, reason: 'access_prohibited' };
    return finish(
      scratch.permit,
      scratch.sawHoliday,
      scratch.sawClosed,
      this.areas.get(device),
      instant,
      ctx,
    );
  }

  private considerAll(list: RuleEntry[] | undefined): void {
    if (list) for (let k = 0; k < list.length; k++) this.consider(list[k]!);
  }

  private consider(e: RuleEntry): void {
    const s = this.scratch;
    // a rule already outdone by a lower id of its kind cannot change the answer
    if (
      e.prohibition ? s.prohibition !== null && e.id >= s.prohibition : s.permit !== null && e.id >= s.permit
    )
      return;
    let state: ScheduleState = 'open';
    if (e.schedules !== null) {
      state = 'closed';
      const ctx = s.ctx!;
      s.local ??= localTime(s.instant, ctx.tz);
      for (const c of e.schedules) {
        const st = scheduleStateAt(c, s.local, ctx.holidays ?? NO_HOLIDAYS);
        if (st === 'open') {
          state = 'open';
          break;
        }
        if (st === 'holiday') state = 'holiday';
      }
    }
    if (e.prohibition) {
      if (state === 'open') s.prohibition = e.id;
    } else if (state === 'open') s.permit = e.id;
    else if (state === 'holiday') s.sawHoliday = true;
    else s.sawClosed = true;
  }
}

/** The kinds of subject a rule names, folded into one numeric key with the subject's id. */
const KINDS = 3;
const IDENTIFIER = 0;
const USER = 1;
const GROUP = 2;

const NO_HOLIDAYS: ReadonlySet<number> = new Set();

/** The one access decision: `decide(identifier, device, instant, rules, context) → {allowed, rule, reason}`. */
export function decide(
  identifier: DecisionIdentifier,
  device: number,
  instant: number | Date,
  rules: AccessIndex | AccessData,
  ctx: DecisionContext,
): Decision {
  const t = typeof instant === 'number' ? instant : instant.getTime();
  return rules instanceof AccessIndex
    ? rules.decide(identifier, device, t, ctx)
    : decideByScan(identifier, device, t, rules, ctx);
}

/**
 * A refusal's reason in a device's log (the simulator's words: `unknown`, `other` — another lock —,
 * `expired`, `passes`, `revoked`, `schedule`…) as the catalogue code the ACS log shows; the catalogue codes
 * themselves pass through (a device deciding with `decide` logs them). Null: not a refusal reason known.
 */
export function reasonFromDevice(reason: string | null | undefined): DecisionReason | null {
  if (!reason) return null;
  if ((DecisionReasons as readonly string[]).includes(reason)) return reason as DecisionReason;
  return Object.hasOwn(DeviceReasonWords, reason) ? DeviceReasonWords[reason]! : null;
}

const DeviceReasonWords: Record<string, DecisionReason> = {
  unknown: 'no_access_rule',
  other: 'no_access_rule',
  revoked: 'identifier_revoked',
  expired: 'identifier_expired',
  not_yet_valid: 'identifier_not_yet_valid',
  passes: 'pass_limit_reached',
  schedule: 'outside_schedule',
  prohibited: 'access_prohibited',
  passback: 'anti_passback',
};
