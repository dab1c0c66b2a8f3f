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
export const AccessRuleUpdate = AccessRuleFields.partial();
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

// ----- the identifier itself ----------------------------------------------------------------------------------

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
    return {
      allowed: false,
      rule: null,
      reason: sawHoliday ? 'holiday' : sawClosed ? 'outside_schedule' : 'no_access_rule',
    };
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
  if (refused) return { allowed: false, rule: null, reason: refused };
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
}

/**
 * The rules indexed for the decision: by device, by identifier, by user and by group, with their schedules
 * compiled once. Build it when the rules change (the server keeps one per project, rebuilt on a rule, schedule
 * or area change; the simulator one per device).
 */
export class AccessIndex {
  private readonly byId = new Map<number, RuleEntry>();
  private readonly byDevice = new Map<number, RuleEntry[]>();
  private readonly byIdentifier = new Map<number, RuleEntry[]>();
  private readonly byUser = new Map<number, RuleEntry[]>();
  private readonly byDomain = new Map<number, RuleEntry[]>();
  private readonly areas: Map<number, AreaRole[]>;

  constructor(data: AccessData) {
    const compiled = new Map<number, CompiledSchedule>();
    for (const [id, s] of data.schedules) compiled.set(id, compileSchedule(s));
    const push = (m: Map<number, RuleEntry[]>, k: number, e: RuleEntry) => {
      const l = m.get(k);
      if (l) l.push(e);
      else m.set(k, [e]);
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
      };
      this.byId.set(r.id, e);
      for (const d of e.devices) push(this.byDevice, d, e);
      for (const i of e.identifiers) push(this.byIdentifier, i, e);
      for (const u of e.users) push(this.byUser, u, e);
      for (const g of e.domains) push(this.byDomain, g, e);
    }
    this.areas = areaRoles(data.areas);
  }

  /** The rules naming a device (lowest id first). */
  rulesOfDevice(device: number): readonly number[] {
    return (this.byDevice.get(device) ?? []).map((e) => e.id);
  }

  /** The decision (equal to `decideByScan` over the same data). */
  decide(identifier: DecisionIdentifier, device: number, instant: number, ctx: DecisionContext): Decision {
    const refused = identifierRefusal(identifier, instant);
    if (refused) return { allowed: false, rule: null, reason: refused };
    // the smaller side: the rules naming the subject (then checked for the device) or those naming the device
    const subject: RuleEntry[][] = [];
    let subjectSize = 0;
    const add = (l: RuleEntry[] | undefined) => {
      if (l) {
        subject.push(l);
        subjectSize += l.length;
      }
    };
    add(this.byIdentifier.get(identifier.id));
    if (identifier.owner !== null) add(this.byUser.get(identifier.owner));
    if (ctx.groups) for (const g of ctx.groups) add(this.byDomain.get(g));
    if (identifier.access_rules?.length) {
      const own: RuleEntry[] = [];
      for (const id of identifier.access_rules) {
        const e = this.byId.get(id);
        if (e) own.push(e);
      }
      add(own);
    }
    const atDevice = this.byDevice.get(device);
    if (!atDevice) return finish(null, false, false, undefined, instant, ctx);
    let local: LocalTime | undefined;
    let prohibition: number | null = null;
    let permit: number | null = null;
    let sawHoliday = false;
    let sawClosed = false;
    const consider = (e: RuleEntry) => {
      // a rule already decided cannot change the answer
      if (e.prohibition ? prohibition !== null && e.id >= prohibition : permit !== null && e.id >= permit)
        return;
      let state: ScheduleState = 'open';
      if (e.schedules !== null) {
        state = 'closed';
        local ??= localTime(instant, ctx.tz);
        for (const c of e.schedules) {
          const st = scheduleStateAt(c, local, ctx.holidays ?? NO_HOLIDAYS);
          if (st === 'open') {
            state = 'open';
            break;
          }
          if (st === 'holiday') state = 'holiday';
        }
      }
      if (e.prohibition) {
        if (state === 'open') prohibition = e.id;
      } else if (state === 'open') permit = e.id;
      else if (state === 'holiday') sawHoliday = true;
      else sawClosed = true;
    };
    if (subjectSize < atDevice.length) {
      for (const l of subject) for (const e of l) if (e.devices.has(device)) consider(e);
    } else {
      const groups = ctx.groups;
      const own = identifier.access_rules;
      for (const e of atDevice) {
        if (
          e.identifiers.has(identifier.id) ||
          (identifier.owner !== null && e.users.has(identifier.owner)) ||
          (groups !== undefined && groups.some((g) => e.domains.has(g))) ||
          (own !== undefined && own.includes(e.id))
        )
          consider(e);
      }
    }
    if (prohibition !== null) return { allowed: false, rule: prohibition, reason: 'access_prohibited' };
    return finish(permit, sawHoliday, sawClosed, this.areas.get(device), instant, ctx);
  }
}

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
