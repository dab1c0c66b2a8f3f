import type { Licence, LicenceState, LicenseInfo } from '@lintel/core';

/** The list view's three statuses (spec part 1 §4 "Licenses: active, ending, disabled"). */
export type ListStatus = 'active' | 'ending' | 'disabled';

/**
 * A licence's status as the list shows it: active and ending as they are; every other state is disabled,
 * with the state itself as the reason (switched off, not started, expired, superseded by a bought one).
 */
export function listStatus(state: LicenceState): { status: ListStatus; reason: LicenceState | null } {
  if (state === 'active' || state === 'ending') return { status: state, reason: null };
  return { status: 'disabled', reason: state };
}

/** The feature areas of a licence, in the order of spec part 1 §3 License info. */
export const FeatureAreas = [
  'sip',
  'mobile_app',
  'elevator',
  'license_plate',
  'face_id',
  'amenity',
  'ukey2',
  'identifier',
] as const satisfies readonly (keyof LicenseInfo)[];
export type FeatureArea = (typeof FeatureAreas)[number];

/** Whether a licence switches a feature area on (face id and guest identifiers have no switch of their own). */
export function areaOn(features: LicenseInfo, area: FeatureArea): boolean {
  const section = features[area] as Record<string, unknown>;
  if ('is_enabled' in section) return section.is_enabled === true;
  return Object.entries(section).some(([k, v]) => k !== 'license_count' && v === true);
}

/** The areas a licence switches on, each with its count where it has one. */
export function licensedAreas(l: Pick<Licence, 'features'>): { area: FeatureArea; count: number | null }[] {
  return FeatureAreas.filter((a) => areaOn(l.features, a)).map((area) => {
    const count = (l.features[area] as { license_count?: number | null }).license_count;
    return { area, count: typeof count === 'number' ? count : null };
  });
}

/** The counted features of the usage call (part 2 §7: sip_numbers_used, mobile_app_used, ukey2_used). */
export const CountedAreas = ['sip', 'mobile_app', 'ukey2'] as const;
export type CountedArea = (typeof CountedAreas)[number];

/**
 * How full a counted feature is: one licence covers `units` numbers, devices or keys (the licence file's
 * "one user licence equals N"), so the capacity is the count times the units; null max is no limit.
 */
export function usageOf(
  used: number,
  max: number | null,
  units: number,
): { capacity: number | null; ratio: number | null; over: boolean } {
  if (max === null) return { capacity: null, ratio: null, over: false };
  const capacity = max * Math.max(1, units);
  return {
    capacity,
    ratio: capacity === 0 ? (used > 0 ? 1 : 0) : Math.min(1, used / capacity),
    over: used > capacity,
  };
}
