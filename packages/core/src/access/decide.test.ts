import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  AccessIndex,
  AccessRuleCreate,
  AccessRuleUpdate,
  decide,
  decideByScan,
  DecisionReasons,
  reasonFromDevice,
  type AccessData,
  type AccessRuleSpec,
  type AntiPassbackArea,
  type DecisionContext,
  type DecisionIdentifier,
  type Passage,
} from './decide';
import { holidayDays, inSchedule, ScheduleCreate, type ScheduleSpec } from './schedules';
import { ErrorCatalogue } from '../errors';

const at = (iso: string) => Date.parse(iso);
const TZ = 'Europe/Moscow';

const card = (over: Partial<DecisionIdentifier> = {}): DecisionIdentifier => ({
  id: 1,
  is_active: true,
  owner: 10,
  period_restrict_active: false,
  period_restrict_from_u: null,
  period_restrict_to_u: null,
  passes_restrict_active: false,
  passes_restrict_max_count: 0,
  passes_count: 0,
  ...over,
});

const rule = (over: Partial<AccessRuleSpec> & { id: number }): AccessRuleSpec => ({
  devices: [100],
  time_rules: [],
  users: [],
  identifiers: [],
  domains: [],
  prohibition: false,
  ...over,
});

const office = ScheduleCreate.parse({
  name: 'Office',
  valid_from: '2026-01-05',
  repeat_days: ['mon', 'tue', 'wed', 'thu', 'fri'],
});

describe('the access decision', () => {
  const data: AccessData = {
    rules: [rule({ id: 1, users: [10], time_rules: [5] })],
    schedules: new Map([[5, office]]),
  };
  const index = new AccessIndex(data);
  const ctx: DecisionContext = { tz: TZ };
  const both = (i: DecisionIdentifier, instant: number, c: DecisionContext = ctx, d = data) => {
    const a = decide(i, 100, instant, new AccessIndex(d), c);
    expect(decide(i, 100, instant, d, c)).toEqual(a);
    return a;
  };

  it('lets a card through on a Wednesday at 10:00, not at 19:00 nor on a holiday', () => {
    const wed10 = at('2026-11-25T07:00:00Z');
    expect(decide(card(), 100, wed10, index, ctx)).toEqual({ allowed: true, rule: 1, reason: null });
    expect(both(card(), at('2026-11-25T16:00:00Z'))).toEqual({
      allowed: false,
      rule: null,
      reason: 'outside_schedule',
    });
    expect(both(card(), wed10, { tz: TZ, holidays: holidayDays(['2026-11-25']) })).toEqual({
      allowed: false,
      rule: null,
      reason: 'holiday',
    });
    expect(both(card({ owner: 11 }), wed10)).toEqual({
      allowed: false,
      rule: null,
      reason: 'no_access_rule',
    });
    expect(decide(card(), 101, wed10, index, ctx).reason).toBe('no_access_rule');
  });

  it('refuses the identifier itself first: revoked, not yet valid, expired, pass limit', () => {
    const wed10 = at('2026-11-25T07:00:00Z');
    expect(both(card({ is_active: false }), wed10).reason).toBe('identifier_revoked');
    const period = {
      period_restrict_active: true,
      period_restrict_from_u: '2026-11-25T08:00:00Z',
      period_restrict_to_u: '2026-11-26T00:00:00Z',
    };
    expect(both(card(period), wed10).reason).toBe('identifier_not_yet_valid');
    expect(both(card(period), at('2026-11-26T07:00:00Z')).reason).toBe('identifier_expired');
    expect(both(card(period), at('2026-11-25T09:00:00Z')).allowed).toBe(true);
    // a guest QR with a pass limit of 2: twice, then refused
    const passes = (n: number) =>
      card({ passes_restrict_active: true, passes_restrict_max_count: 2, passes_count: n });
    expect(both(passes(0), wed10).allowed).toBe(true);
    expect(both(passes(1), wed10).allowed).toBe(true);
    expect(both(passes(2), wed10).reason).toBe('pass_limit_reached');
  });

  it('lets a prohibition win over any permission, and reads groups and the identifier own rules', () => {
    const d: AccessData = {
      rules: [
        rule({ id: 1, domains: [7] }),
        rule({ id: 2, identifiers: [1], prohibition: true, time_rules: [5] }),
        rule({ id: 3, devices: [100, 101] }),
      ],
      schedules: new Map([[5, office]]),
    };
    const wed10 = at('2026-11-25T07:00:00Z');
    expect(both(card(), wed10, { tz: TZ, groups: [7] }, d)).toEqual({
      allowed: false,
      rule: 2,
      reason: 'access_prohibited',
    });
    // outside the prohibition's schedule the group's rule allows
    expect(both(card(), at('2026-11-25T16:00:00Z'), { tz: TZ, groups: [7] }, d)).toEqual({
      allowed: true,
      rule: 1,
      reason: null,
    });
    expect(both(card({ id: 2, access_rules: [3] }), wed10, ctx, d)).toEqual({
      allowed: true,
      rule: 3,
      reason: null,
    });
    expect(both(card({ id: 2, owner: null }), wed10, ctx, d).reason).toBe('no_access_rule');
  });

  it('refuses a second entry before an exit (anti-passback per area, with its reset)', () => {
    const areas: AntiPassbackArea[] = [{ id: 9, entry: [100], exit: [200], reset_after_s: 3600 }];
    const d: AccessData = {
      rules: [rule({ id: 1, devices: [100, 200], users: [10] })],
      schedules: new Map(),
      areas,
    };
    const now = at('2026-11-25T07:00:00Z');
    const last = (direction: Passage['direction'], ago: number) => ({
      tz: TZ,
      lastPassages: new Map([[9, { direction, at: now - ago }]]),
    });
    expect(both(card(), now, last('in', 60_000), d)).toEqual({
      allowed: false,
      rule: 1,
      reason: 'anti_passback',
      area: 9,
    });
    expect(both(card(), now, last('out', 60_000), d).allowed).toBe(true);
    expect(both(card(), now, last('in', 3_600_000), d).allowed).toBe(true); // reset after an hour
    expect(both(card(), now, { tz: TZ }, d).allowed).toBe(true); // never seen: let in
    expect(decide(card(), 200, now, new AccessIndex(d), last('out', 60_000)).reason).toBe('anti_passback');
    expect(decide(card(), 200, now, new AccessIndex(d), last('in', 60_000)).allowed).toBe(true);
  });

  it('names only catalogue codes as reasons, and reads a device log reason as one', () => {
    for (const r of DecisionReasons) {
      expect(ErrorCatalogue).toHaveProperty(r);
      expect(reasonFromDevice(r)).toBe(r);
    }
    expect(reasonFromDevice('passes')).toBe('pass_limit_reached');
    expect(reasonFromDevice('expired')).toBe('identifier_expired');
    expect(reasonFromDevice('unknown')).toBe('no_access_rule');
    expect(reasonFromDevice('toString')).toBeNull();
    expect(reasonFromDevice(null)).toBeNull();
  });

  it('takes an access rule with at least one device', () => {
    expect(AccessRuleCreate.safeParse({ name: 'r', devices: [] }).success).toBe(false);
    expect(AccessRuleCreate.parse({ name: 'r', devices: [1] })).toMatchObject({
      time_rules: [],
      users: [],
      identifiers: [],
      domains: [],
      prohibition: false,
      is_shareable: false,
    });
  });
});

// ----- 1,000 generated cases ------------------------------------------------------------------------------------

const SCHEDULES: Array<[number, ScheduleSpec]> = [
  [1, office],
  [
    2,
    ScheduleCreate.parse({
      name: 'night',
      valid_from: '2026-01-01',
      repeat_mode: 'daily',
      time_from: 79_200,
      time_to: 21_600,
    }),
  ],
  [
    3,
    ScheduleCreate.parse({
      name: 'weekend',
      valid_from: '2026-01-03',
      repeat_days: ['sat', 'sun'],
      is_all_day: true,
    }),
  ],
  [
    4,
    ScheduleCreate.parse({
      name: 'fortnight',
      valid_from: '2026-03-02',
      repeat_mode: 'every_2_weeks',
      repeat_days: ['mon', 'wed'],
    }),
  ],
  [
    5,
    ScheduleCreate.parse({
      name: 'span',
      valid_from: '2026-06-01',
      valid_to: '2026-06-20',
      repeat_mode: 'never',
    }),
  ],
];
const AREAS: AntiPassbackArea[] = [
  { id: 1, entry: [1], exit: [2] },
  { id: 2, entry: [3], exit: [1], reset_after_s: 600 },
];
const HOLIDAYS = ['2026-01-01', '2026-03-09', '2026-06-12', '2026-11-04'];

const sub = (max: number, n = 3) => fc.uniqueArray(fc.integer({ min: 1, max }), { maxLength: n });
const arbRule = fc.record({
  devices: fc.uniqueArray(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 3 }),
  time_rules: fc.oneof(fc.constant([] as number[]), sub(6, 2), sub(6, 2)), // 6: a schedule that is not there
  users: sub(4),
  identifiers: sub(6),
  domains: sub(4),
  prohibition: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
});
const arbIdentifier = fc.record({
  id: fc.integer({ min: 1, max: 6 }),
  is_active: fc.integer({ min: 0, max: 9 }).map((n) => n !== 0),
  owner: fc.option(fc.integer({ min: 1, max: 4 }), { nil: null }),
  period_restrict_active: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
  period_restrict_from_u: fc.option(fc.constantFrom('2026-02-01T00:00:00Z', '2026-06-01T00:00:00Z'), {
    nil: null,
  }),
  period_restrict_to_u: fc.option(fc.constantFrom('2026-05-01T00:00:00Z', '2026-12-31T00:00:00Z'), {
    nil: null,
  }),
  passes_restrict_active: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
  passes_restrict_max_count: fc.integer({ min: 0, max: 3 }),
  passes_count: fc.integer({ min: 0, max: 4 }),
  access_rules: fc.option(sub(8, 2), { nil: undefined }),
});
const arbCase = fc.record({
  rules: fc.array(arbRule, { maxLength: 12 }),
  identifier: arbIdentifier,
  device: fc.integer({ min: 1, max: 4 }),
  // any time of the year, or a time on one of the holidays (rare otherwise)
  instant: fc.oneof(
    fc.integer({ min: at('2026-01-01T00:00:00Z'), max: at('2026-12-31T23:59:59Z') }),
    fc
      .tuple(fc.constantFrom(...HOLIDAYS), fc.integer({ min: 0, max: 86_399_999 }))
      .map(([d, ms]) => at(`${d}T00:00:00Z`) + ms),
  ),
  groups: sub(4),
  holidays: fc.oneof(fc.constant(HOLIDAYS), fc.subarray(HOLIDAYS)),
  passages: fc.array(
    fc.record({
      area: fc.constantFrom(1, 2),
      direction: fc.constantFrom('in', 'out') as fc.Arbitrary<'in' | 'out'>,
      ago: fc.integer({ min: 0, max: 3_600_000 }),
    }),
    { maxLength: 2 },
  ),
});

type Case = typeof arbCase extends fc.Arbitrary<infer T> ? T : never;

function setup(c: Case) {
  const data: AccessData = {
    rules: c.rules.map((r, i) => ({ ...r, id: i + 1 })),
    schedules: new Map(SCHEDULES),
    areas: AREAS,
  };
  const ctx: DecisionContext = {
    tz: 'Europe/Berlin',
    groups: c.groups,
    holidays: holidayDays(c.holidays),
    lastPassages: new Map(c.passages.map((p) => [p.area, { direction: p.direction, at: c.instant - p.ago }])),
  };
  return { data, ctx };
}

/** A prohibition naming the device and the identifier, in force now, read straight from the rules. */
function prohibitionInForce(c: Case, data: AccessData, ctx: DecisionContext): boolean {
  const i = c.identifier;
  return data.rules.some(
    (r) =>
      r.prohibition &&
      r.devices.includes(c.device) &&
      (r.identifiers.includes(i.id) ||
        (i.access_rules ?? []).includes(r.id) ||
        (i.owner !== null && r.users.includes(i.owner)) ||
        r.domains.some((g) => c.groups.includes(g))) &&
      (r.time_rules.length === 0 ||
        r.time_rules.some((s) => {
          const sch = data.schedules.get(s);
          return sch !== undefined && inSchedule(sch, c.instant, ctx.tz, c.holidays);
        })),
  );
}

describe('the decision on 1,000 generated cases (property)', () => {
  it('the indexed decision equals the scan; a prohibition always wins; a revoked identifier never passes', () => {
    fc.assert(
      fc.property(arbCase, (c) => {
        const { data, ctx } = setup(c);
        const indexed = new AccessIndex(data).decide(c.identifier, c.device, c.instant, ctx);
        expect(indexed).toEqual(decideByScan(c.identifier, c.device, c.instant, data, ctx));
        if (!c.identifier.is_active)
          expect(indexed).toMatchObject({ allowed: false, reason: 'identifier_revoked' });
        if (prohibitionInForce(c, data, ctx)) expect(indexed.allowed).toBe(false);
        if (indexed.allowed) {
          expect(indexed.reason).toBeNull();
          expect(data.rules.find((r) => r.id === indexed.rule)?.prohibition).toBe(false);
        } else expect(ErrorCatalogue).toHaveProperty(indexed.reason!);
        // adding a prohibition at all times on the device for the identifier refuses whatever was allowed
        const withBan: AccessData = {
          ...data,
          rules: [
            ...data.rules,
            {
              id: 1000,
              devices: [c.device],
              time_rules: [],
              users: [],
              identifiers: [c.identifier.id],
              domains: [],
              prohibition: true,
            },
          ],
        };
        expect(new AccessIndex(withBan).decide(c.identifier, c.device, c.instant, ctx).allowed).toBe(false);
      }),
      { numRuns: 1000 },
    );
  });

  it('generates cases reaching every outcome (1,000 of a fixed seed: the generator is not idle)', () => {
    const seen = new Map<string, number>();
    for (const c of fc.sample(arbCase, { numRuns: 1000, seed: 21 })) {
      const { data, ctx } = setup(c);
      const outcome =
        new AccessIndex(data).decide(c.identifier, c.device, c.instant, ctx).reason ?? 'allowed';
      seen.set(outcome, (seen.get(outcome) ?? 0) + 1);
    }
    expect([...seen.keys()].sort()).toEqual(['allowed', ...DecisionReasons].sort());
  });
});

describe('AccessRuleUpdate', () => {
  it('fills no field left out (a PATCH of the name keeps the rule whole)', () => {
    expect(AccessRuleUpdate.parse({ name: 'Staff' })).toEqual({ name: 'Staff' });
    expect(AccessRuleUpdate.safeParse({ devices: [] }).success).toBe(false);
  });
});
