import { describe, expect, it } from 'vitest';
import {
  featureWindows,
  GroupLicenceLimits,
  GroupLicenseSettings,
  shapeGroupLicenseSettings,
  windowDays,
  windowOutside,
  type Window,
} from './group-licences';

const day = (s: string) => Date.parse(`${s}T00:00:00Z`);
const licence = (features: object, from: string | null, to: string | null, is_active = true) => ({
  is_active,
  features,
  restrict_period: from || to ? { is_active: true, from, to } : { is_active: false, from: null, to: null },
});

describe('the periods of a group licence', () => {
  it('merges the windows in which a feature is granted; `to` is the last day', () => {
    const g = {
      licenses: [
        licence({ sip: { is_enabled: true } }, '2025-07-01', '2025-12-31'),
        licence({ sip: { is_enabled: true } }, '2025-01-01', '2025-06-30'),
        licence({ sip: { is_enabled: true } }, '2026-03-01', null),
        licence({ sip: { is_enabled: true } }, '2020-01-01', '2030-01-01', false),
        licence({ elevator: { is_enabled: true } }, null, null),
      ],
    };
    expect(featureWindows(g, 'sip')).toEqual([
      [day('2025-01-01'), day('2026-01-01')],
      [day('2026-03-01'), Infinity],
    ]);
    expect(featureWindows(g, 'elevator')).toEqual([[-Infinity, Infinity]]);
    expect(featureWindows(g, 'amenity')).toEqual([]);
    // a feature without a switch is told by its flag
    expect(
      featureWindows(
        { licenses: [licence({ face_id: { is_enabled_for_guests: true } }, null, null)] },
        'face_id',
      ),
    ).toHaveLength(1);
  });

  it('finds a window of the inner outside every window of the outer', () => {
    const outer: Window[] = [[day('2025-01-01'), day('2026-01-01')]];
    expect(windowOutside(outer, [[day('2025-02-01'), day('2025-03-01')]])).toBeNull();
    expect(windowOutside(outer, [[day('2025-02-01'), day('2026-01-02')]])).toEqual([
      day('2025-02-01'),
      day('2026-01-02'),
    ]);
    expect(windowOutside(outer, [[-Infinity, Infinity]])).toEqual([-Infinity, Infinity]);
    expect(windowDays([day('2025-02-01'), day('2026-01-01')])).toEqual({
      from: '2025-02-01',
      to: '2025-12-31',
    });
    expect(windowDays([-Infinity, Infinity])).toEqual({ from: null, to: null });
  });
});

describe('the data shaping of part 2 §5', () => {
  it('reads numeric strings as numbers and empty counts as null', () => {
    expect(
      GroupLicenceLimits.parse({ users: '12', mobile_apps: '', ukey2_keys: 3, virtual_numbers: null }),
    ).toEqual({
      users: 12,
      mobile_apps: null,
      ukey2_keys: 3,
      virtual_numbers: null,
    });
    expect(GroupLicenceLimits.safeParse({ users: '1.5' }).success).toBe(false);
    expect(GroupLicenceLimits.safeParse({ nothing_counted: 1 }).success).toBe(false);
  });

  it('stores notifications off as never with 0 days, and a period switched off without days', () => {
    const parsed = GroupLicenseSettings.parse({
      is_enabled: true,
      notifications: { period: 'never', notify_before: '14' },
      licenses: [
        {
          is_active: true,
          features: { sip: { is_enabled: true } },
          restrict_period: { is_active: false, from: '2025-01-01', to: null },
        },
      ],
    });
    const shaped = shapeGroupLicenseSettings(parsed);
    expect(shaped.notifications).toEqual({ period: 'never', notify_before: 0 });
    expect(shaped.licenses[0]!.restrict_period).toEqual({ is_active: false, from: null, to: null });
    expect(shaped.licenses[0]!.features.mobile_app.is_enabled).toBe(false);
    expect(
      shapeGroupLicenseSettings({ ...parsed, notifications: { period: 'once', notify_before: 14 } })
        .notifications,
    ).toEqual({
      period: 'once',
      notify_before: 14,
    });
  });
});
