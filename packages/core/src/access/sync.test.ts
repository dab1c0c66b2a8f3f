import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  deviceIdentifierItem,
  diffDeviceAccess,
  IDENTIFIER_ITEM_URI,
  inventoryRequest,
  TIME_PROFILE_URI,
  type DeviceHolding,
  type DeviceIdentifierItem,
  type DeviceRequest,
  type DeviceTimeProfile,
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
