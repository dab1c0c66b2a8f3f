import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { AccessIndex, type AccessData, type AccessRuleSpec } from './decide';
import { holidayDays, ScheduleCreate } from './schedules';
import {
  accessDataFromHolding,
  deviceIdentifierItem,
  diffDeviceAccess,
  IDENTIFIER_ITEM_URI,
  inventoryRequest,
  TIME_PROFILE_URI,
  type DeviceHolding,
  type DeviceIdentifierItem,
  type DeviceRequest,
  type DeviceTimeProfile,
  type SyncIdentifier,
  wantedAt,
} from './sync';

/**
 * A device holding items as ../shared/DEVICES.md describes its identifier API: `PUT …/item/{uid}` sets the
 * item named, `DELETE …/item/{uid}` removes it (nothing when absent); the same for time profiles. Its pass
 * counters are its own: a PUT keeps them.
 */
class DeviceModel {
  identifiers = new Map<string, DeviceIdentifierItem & { passes_used?: number }>();
  profiles = new Map<string, DeviceTimeProfile>();
  apply(requests: readonly DeviceRequest[]): void {
    for (const r of requests) {
      const ident = r.uri.startsWith(`${IDENTIFIER_ITEM_URI}/`);
      const key = decodeURIComponent(
        r.uri.slice((ident ? IDENTIFIER_ITEM_URI : TIME_PROFILE_URI).length + 1),
      );
      if (ident) {
        expect(r.uri.startsWith(`${IDENTIFIER_ITEM_URI}/`)).toBe(true);
        if (r.method === 'DELETE') this.identifiers.delete(key);
        else {
          const body = r.body as DeviceIdentifierItem;
          expect(body.uid).toBe(key);
          this.identifiers.set(key, { ...body, passes_used: this.identifiers.get(key)?.passes_used ?? 0 });
        }
      } else {
        expect(r.uri.startsWith(`${TIME_PROFILE_URI}/`)).toBe(true);
        if (r.method === 'DELETE') this.profiles.delete(key);
        else this.profiles.set(key, r.body as DeviceTimeProfile);
      }
    }
  }
  holding(): DeviceHolding {
    return { identifiers: [...this.identifiers.values()], time_profiles: [...this.profiles.values()] };
  }
}

const item = (
  id: number,
  over: Partial<Parameters<typeof deviceIdentifierItem>[0]> = {},
  profiles: string[] = [],
) =>
  deviceIdentifierItem(
    {
      id,
      type: 'card',
      value: String(1000 + id),
      owner_name: `User ${id}`,
      owner_type: 'owner',
      period_restrict_active: false,
      period_restrict_from_u: null,
      period_restrict_to_u: null,
      passes_restrict_active: false,
      passes_restrict_max_count: 0,
      ...over,
    },
    profiles,
  );
const profile = (id: number, from = 32_400): DeviceTimeProfile => ({
  key: `schedule-${id}`,
  time_zone: 'Europe/Moscow',
  days: ['mon', 'tue'],
  from,
  to: 64_800,
});

describe('the device sync difference', () => {
  it('sends what a fresh device lacks, profiles before the identifiers naming them', () => {
    const want = { identifiers: [item(1, {}, ['schedule-1']), item(2)], time_profiles: [profile(1)] };
    const plan = diffDeviceAccess(want, { identifiers: [], time_profiles: [] });
    expect(plan.requests.map((r) => `${r.method} ${r.uri}`)).toEqual([
      `PUT ${TIME_PROFILE_URI}/schedule-1`,
      `PUT ${IDENTIFIER_ITEM_URI}/identifier-1`,
      `PUT ${IDENTIFIER_ITEM_URI}/identifier-2`,
    ]);
    expect(plan.requests[1]!.body).toMatchObject({
      uid: 'identifier-1',
      identifier_type: 'card',
      identifier_number: '1001',
      identifier_owner: { name: 'User 1', type: 'owner' },
      lock: 'all',
      valid: { time: { is_permanent: true }, passes: { is_permanent: true } },
      time_profiles: ['schedule-1'],
    });
    expect(plan.batches).toEqual([plan.requests]);
  });

  it('sends nothing to a device that holds what it must (its pass counters are its own)', () => {
    const want = {
      identifiers: [item(1, { passes_restrict_active: true, passes_restrict_max_count: 2 })],
      time_profiles: [profile(1)],
    };
    const device = new DeviceModel();
    device.apply(diffDeviceAccess(want, device.holding()).requests);
    device.identifiers.get('identifier-1')!.passes_used = 1; // one pass counted at the door
    const again = diffDeviceAccess(want, device.holding());
    expect(again.requests).toEqual([]);
    expect(again.counts).toEqual({
      identifiers: { put: 0, delete: 0, kept: 1 },
      time_profiles: { put: 0, delete: 0, kept: 1 },
    });
    // a new limit is one PUT of that identifier, and the device's count stays
    const changed = diffDeviceAccess(
      { ...want, identifiers: [item(1, { passes_restrict_active: true, passes_restrict_max_count: 3 })] },
      device.holding(),
    );
    expect(changed.requests.map((r) => `${r.method} ${r.uri}`)).toEqual([
      `PUT ${IDENTIFIER_ITEM_URI}/identifier-1`,
    ]);
    expect(changed.requests[0]!.body).toMatchObject({
      valid: { passes: { is_permanent: false, max_passes: 3 } },
    });
  });

  it('removes by name what is no longer wanted, and never sends a replace', () => {
    const held = {
      identifiers: [item(1), item(2), item(3)],
      time_profiles: [profile(1), profile(2)],
    };
    const plan = diffDeviceAccess({ identifiers: [item(2)], time_profiles: [profile(2, 0)] }, held);
    expect(plan.requests.map((r) => `${r.method} ${r.uri}`)).toEqual([
      `PUT ${TIME_PROFILE_URI}/schedule-2`,
      `DELETE ${IDENTIFIER_ITEM_URI}/identifier-1`,
      `DELETE ${IDENTIFIER_ITEM_URI}/identifier-3`,
      `DELETE ${TIME_PROFILE_URI}/schedule-1`,
    ]);
    for (const r of plan.requests) expect(JSON.stringify(r)).not.toContain('replace');
    // nothing wanted and the holding unknown: no request at all (never an empty replace)
    expect(diffDeviceAccess({ identifiers: [], time_profiles: [] }, null).requests).toEqual([]);
    // the holding unknown: what must be there is sent, nothing is removed until the list is read
    expect(diffDeviceAccess({ identifiers: [item(5)], time_profiles: [] }, null).requests).toHaveLength(1);
    expect(inventoryRequest(2)).toEqual({
      method: 'GET',
      uri: '/api/v1/access/identifier/items?page=2&limit=500',
    });
  });

  it('batches one rule change reaching many identifiers into few tasks', () => {
    const want = { identifiers: Array.from({ length: 1201 }, (_, i) => item(i + 1)), time_profiles: [] };
    const plan = diffDeviceAccess(want, { identifiers: [], time_profiles: [] });
    expect(plan.batches.map((b) => b.length)).toEqual([500, 500, 201]);
    expect(plan.batches.flat()).toEqual(plan.requests);
    expect(diffDeviceAccess(want, { identifiers: [], time_profiles: [] }, 2000).batches).toHaveLength(1);
  });

  it('converges in one plan, minimal and idempotent, on 300 generated holdings (property)', () => {
    const arbItem = fc
      .record({
        id: fc.integer({ min: 1, max: 30 }),
        passes: fc.option(fc.integer({ min: 0, max: 3 }), { nil: null }),
        profiles: fc.subarray(['schedule-1', 'schedule-2', 'schedule-3']),
        value: fc.integer({ min: 1, max: 3 }),
      })
      .map((r) =>
        item(
          r.id,
          {
            value: String(r.value),
            passes_restrict_active: r.passes !== null,
            passes_restrict_max_count: r.passes ?? 0,
          },
          r.profiles,
        ),
      );
    const arbHolding = fc.record({
      identifiers: fc.uniqueArray(arbItem, { selector: (i) => i.uid, maxLength: 20 }),
      time_profiles: fc.uniqueArray(
        fc
          .record({ id: fc.integer({ min: 1, max: 4 }), from: fc.constantFrom(0, 32_400) })
          .map((p) => profile(p.id, p.from)),
        { selector: (p) => p.key, maxLength: 4 },
      ),
    });
    fc.assert(
      fc.property(arbHolding, arbHolding, fc.integer({ min: 1, max: 7 }), (want, held, batch) => {
        const device = new DeviceModel();
        device.apply(diffDeviceAccess(held, device.holding()).requests);
        const plan = diffDeviceAccess(want, device.holding(), batch);
        // minimal: one request per item that differs, none for the rest
        const heldBy = new Map(held.identifiers.map((i) => [i.uid, JSON.stringify(i)]));
        const differing =
          want.identifiers.filter((i) => heldBy.get(i.uid) !== JSON.stringify(i)).length +
          held.identifiers.filter((i) => !want.identifiers.some((w) => w.uid === i.uid)).length;
        expect(plan.counts.identifiers.put + plan.counts.identifiers.delete).toBe(differing);
        for (const b of plan.batches) device.apply(b);
        const now = device.holding();
        expect(
          new Map(
            now.identifiers.map(
              ({ passes_used: _, ...i }: DeviceIdentifierItem & { passes_used?: number }) => [i.uid, i],
            ),
          ),
        ).toEqual(new Map(want.identifiers.map((i) => [i.uid, i])));
        expect([...device.profiles.keys()].sort()).toEqual(want.time_profiles.map((p) => p.key).sort());
        // idempotent: the same plan again changes nothing, and a new diff is empty
        device.apply(plan.requests);
        expect(diffDeviceAccess(want, device.holding()).requests).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });
});

// ----- what a device must hold, and the device deciding from it alone -------------------------------------------

const SCHEDULES = new Map([
  [
    1,
    ScheduleCreate.parse({
      name: 'office',
      valid_from: '2026-01-05',
      repeat_days: ['mon', 'tue', 'wed', 'thu', 'fri'],
    }),
  ],
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
      name: 'span',
      valid_from: '2026-06-01',
      valid_to: '2026-06-20',
      repeat_mode: 'never',
    }),
  ],
]);
const HOLIDAYS = ['2026-01-01', '2026-06-12', '2026-11-04'];

describe('what a device must hold', () => {
  const ident = (over: Partial<SyncIdentifier> = {}): SyncIdentifier => ({
    id: 1,
    type: 'card',
    value: '12345678',
    owner_name: 'Ann',
    owner_type: 'owner',
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

  it('holds the identifiers a rule gives it, with the rules’ schedules as profiles', () => {
    const index = new AccessIndex({
      rules: [
        rule({ id: 1, users: [10], time_rules: [1] }),
        rule({ id: 2, domains: [7], time_rules: [3] }),
        rule({ id: 3, identifiers: [3], prohibition: true }),
        rule({ id: 4, identifiers: [4], prohibition: true, time_rules: [2] }),
        rule({ id: 5, identifiers: [3, 4, 5] }),
        rule({ id: 6, identifiers: [6], time_rules: [99] }),
      ],
      schedules: SCHEDULES,
    });
    const want = wantedAt(
      100,
      index,
      [
        ident({ groups: [7] }),
        ident({ id: 2, value: '2', is_active: false }), // revoked: not held
        ident({ id: 3, value: '3', owner: null }), // prohibited at all times here: not held
        ident({ id: 4, value: '4', owner: null }), // prohibited at night: held with a deny profile
        ident({ id: 5, value: 'https://x.org', type: 'url', owner: null }), // no device takes a url
        ident({ id: 6, value: '6', owner: null }), // its only schedule does not exist: not held
        ident({ id: 7, value: '7', owner: 11 }), // no rule
      ],
      SCHEDULES,
      'Europe/Moscow',
      HOLIDAYS,
    );
    expect(want.identifiers.map((i) => [i.uid, i.time_profiles, i.deny_time_profiles])).toEqual([
      ['identifier-1', ['schedule-1', 'schedule-3'], []],
      ['identifier-4', [], ['schedule-2']],
    ]);
    expect(want.time_profiles.map((p) => p.key)).toEqual(['schedule-1', 'schedule-2', 'schedule-3']);
    expect(want.time_profiles[0]).toMatchObject({ time_zone: 'Europe/Moscow', holidays: HOLIDAYS });
  });

  // The "the simulator and the function agree": the server's decision over the rules, and the
  // device's over what it was sent alone (`accessDataFromHolding`), allow the same presentations.
  it('lets the device decide as the server does, from what it holds and its own pass counter (1,000 generated cases, property)', () => {
    const arbRule = fc.record({
      devices: fc.uniqueArray(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 2 }),
      time_rules: fc.oneof(
        fc.constant([] as number[]),
        fc.uniqueArray(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 2 }),
      ),
      users: fc.uniqueArray(fc.integer({ min: 1, max: 3 }), { maxLength: 2 }),
      identifiers: fc.uniqueArray(fc.integer({ min: 1, max: 5 }), { maxLength: 3 }),
      domains: fc.uniqueArray(fc.integer({ min: 1, max: 3 }), { maxLength: 1 }),
      prohibition: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
    });
    const arbIdent = fc.record({
      id: fc.integer({ min: 1, max: 5 }),
      is_active: fc.integer({ min: 0, max: 9 }).map((n) => n !== 0),
      owner: fc.option(fc.integer({ min: 1, max: 3 }), { nil: null }),
      groups: fc.uniqueArray(fc.integer({ min: 1, max: 3 }), { maxLength: 2 }),
      period: fc.boolean(),
      // a limit, the passes each of the devices 1–3 counted and the guest page's openings (no device's)
      passes: fc.option(
        fc.tuple(
          fc.integer({ min: 0, max: 4 }),
          fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 3, maxLength: 3 }),
          fc.integer({ min: 0, max: 2 }),
        ),
        { nil: null },
      ),
    });
    fc.assert(
      fc.property(
        fc.array(arbRule, { maxLength: 8 }),
        fc.uniqueArray(arbIdent, { selector: (i) => i.id, minLength: 1, maxLength: 5 }),
        fc.integer({ min: 1, max: 3 }),
        fc.oneof(
          fc.integer({ min: Date.parse('2026-01-01T00:00:00Z'), max: Date.parse('2026-12-31T23:59:59Z') }),
          fc
            .tuple(fc.constantFrom(...HOLIDAYS), fc.integer({ min: 0, max: 86_399_999 }))
            .map(([d, ms]) => Date.parse(`${d}T00:00:00Z`) + ms),
        ),
        (rawRules, raw, device, instant) => {
          const data: AccessData = {
            rules: rawRules.map((r, k) => ({ ...r, id: k + 1 })),
            schedules: SCHEDULES,
          };
          const index = new AccessIndex(data);
          const identifiers: SyncIdentifier[] = raw.map((r) => ({
            id: r.id,
            type: 'card',
            value: String(r.id),
            owner_name: `owner ${r.owner}`,
            owner_type: r.owner === null ? 'guest' : 'owner',
            is_active: r.is_active,
            owner: r.owner,
            groups: r.groups,
            period_restrict_active: r.period,
            period_restrict_from_u: r.period ? '2026-03-01T00:00:00Z' : null,
            period_restrict_to_u: r.period ? '2026-09-01T00:00:00Z' : null,
            passes_restrict_active: r.passes !== null,
            passes_restrict_max_count: r.passes?.[0] ?? 0,
            passes_count: r.passes ? r.passes[1].reduce((a, b) => a + b, 0) + r.passes[2] : 0,
            passes_at: new Map((r.passes?.[1] ?? []).map((n, k) => [k + 1, n])),
          }));
          const held = wantedAt(device, index, identifiers, SCHEDULES, 'Europe/Berlin', HOLIDAYS);
          // the device counted its own passes (those elsewhere are the platform's to tell it)
          const counted = held.identifiers.map((item) => ({
            ...item,
            passes_used:
              identifiers.find((i) => `identifier-${i.id}` === item.uid)!.passes_at?.get(device) ?? 0,
          }));
          const atDevice = accessDataFromHolding(device, {
            identifiers: counted,
            time_profiles: held.time_profiles,
          });
          const deviceIndex = new AccessIndex(atDevice.data);
          for (const i of identifiers) {
            const server = index.decide(i, device, instant, {
              tz: 'Europe/Berlin',
              groups: i.groups,
              holidays: holidayDays(HOLIDAYS),
            });
            const found = atDevice.lookup('card', i.value);
            const local = found
              ? deviceIndex.decide(found, device, instant, {
                  tz: 'Europe/Berlin',
                  holidays: atDevice.holidays,
                })
              : { allowed: false };
            expect(local.allowed).toBe(server.allowed);
          }
        },
      ),
      { numRuns: 1000 },
    );
  });
});
