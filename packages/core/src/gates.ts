import type { LicenceArea, LicenceFlag, PermissionCode } from './permissions';

/**
 * The gate evaluator: the one function the server, the web console and the CLI ask whether a caller may
 * run a command or see a menu entry (spec part 1 §2.3, part 2 §6). Pure: each surface gathers the facts
 * its own way (the server from the database, the web and the CLI from the profile) and hands them here.
 */

/** What a command or a page asks of its caller. */
export interface Gate {
  /**
   * the caller needs at least one of these permission codes (none: any signed-in user); a scoped family
   * lists each scope it accepts (`amenities.view_all`, `…_descendants`, `…_domain`, `…_own`)
   */
  anyPermission?: readonly PermissionCode[];
  /** licence flags that must all be on, on the server licence and for the caller's groups */
  licence?: readonly LicenceFlag[];
}

/** The features of a licence, as `license_info` lays them out; a missing section or key is off. */
export type LicenceFeatures = Partial<Record<string, Partial<Record<string, unknown>> | undefined>>;

/** A licence period as stored (`YYYY-MM-DD` days; off: no restriction). */
export interface PeriodFacts {
  is_active: boolean;
  from: string | null;
  to: string | null;
}

const DAY = 86_400_000;
/** A period as milliseconds `[start, end)`: `to` is the last day, so its end is the next midnight (UTC). */
export function periodWindow(p: PeriodFacts | undefined | null): [number, number] {
  if (!p?.is_active) return [-Infinity, Infinity];
  return [
    p.from ? Date.parse(`${p.from}T00:00:00Z`) : -Infinity,
    p.to ? Date.parse(`${p.to}T00:00:00Z`) + DAY : Infinity,
  ];
}

export const inPeriod = (p: PeriodFacts | undefined | null, now: number): boolean => {
  const [from, to] = periodWindow(p);
  return from <= now && now < to;
};

/** What the gate reads of one group's licence settings (only switched-on settings are in a chain). */
export interface GroupLicenceFacts {
  licenses: readonly {
    is_active: boolean;
    features: LicenceFeatures;
    restrict_period?: PeriodFacts | null;
  }[];
}

/**
 * The groups' facts of a gate: for each group the question is about (the caller's groups, or the one group
 * a row lives in), the chain of that group and of every group above it whose licence settings are switched
 * on (nearest first), and the time to read their periods at.
 */
export interface GroupChains {
  chains: readonly (readonly GroupLicenceFacts[])[];
  now: number;
}

export interface GateFacts {
  /** the caller's permission codes (a role's list, or a set) */
  permissions: readonly string[] | ReadonlySet<string>;
  /**
   * the licence in force: its features, or why there is none. The profile's `license_info` already is the
   * server licence narrowed by the groups, so the web and the CLI pass it here and no `groups`.
   */
  licence: LicenceFeatures | { error: 'feature_not_licensed' | 'license_expired' };
  /** the groups' side (absent: no group restricts): the licence settings of the groups' chains */
  groups?: GroupChains;
}

export type GateDecision =
  | { can: true }
  | { can: false; reason: 'permission'; anyOf: readonly PermissionCode[] }
  | { can: false; reason: 'licence' | 'licence_expired' | 'group_licence'; flag: LicenceFlag };

/** Features with an `is_enabled` switch: their other flags need the switch on too. */
const SWITCHED: ReadonlySet<string> = new Set([
  'sip',
  'mobile_app',
  'elevator',
  'license_plate',
  'amenity',
  'ukey2',
]);

export const licenceAreaOf = (flag: LicenceFlag): LicenceArea => flag.split('.')[0] as LicenceArea;

/**
 * One licence flag against a licence's features: `amenity` is `amenity.is_enabled`; `sip.is_web_dialer_enabled`
 * is that flag and `sip.is_enabled` (a sub-flag of a feature that is off is off); `face_id.is_enabled_for_guests`
 * stands alone (face id has no switch). Only `true` is on.
 */
export function licenceFlagOn(features: LicenceFeatures, flag: LicenceFlag | string): boolean {
  const [area, key] = flag.split('.') as [string, string | undefined];
  const section = features[area];
  if (typeof section !== 'object' || section === null) return false;
  const switchOn = !SWITCHED.has(area) || section.is_enabled === true;
  if (key === undefined) return SWITCHED.has(area) && switchOn;
  return switchOn && section[key] === true;
}

/** A group's licence allows a flag now: one of its licences is active, within its period, and has the flag. */
export function groupLicenceAllows(g: GroupLicenceFacts, flag: LicenceFlag | string, now: number): boolean {
  return g.licenses.some(
    (l) => l.is_active && inPeriod(l.restrict_period, now) && licenceFlagOn(l.features, flag),
  );
}

/**
 * The group side of "may this caller use F in group G now": every switched-on group of G's chain must allow
 * the flag (a child cannot switch back on what a group above it keeps off); of the caller's groups, one
 * allowing it suffices. With no chains (no groups) nothing is restricted.
 */
export function groupsAllow(groups: GroupChains | undefined, flag: LicenceFlag | string): boolean {
  if (!groups || !groups.chains.length) return true;
  return groups.chains.some((chain) => chain.every((g) => groupLicenceAllows(g, flag, groups.now)));
}

const holds = (permissions: GateFacts['permissions'], code: string) =>
  'has' in permissions ? permissions.has(code) : permissions.includes(code);

/**
 * Permission first (as the server has always answered), then each licence flag: the server licence, then the
 * groups' chains (`groupsAllow`).
 */
export function evaluateGate(gate: Gate | undefined, facts: GateFacts): GateDecision {
  const any = gate?.anyPermission ?? [];
  if (any.length && !any.some((p) => holds(facts.permissions, p)))
    return { can: false, reason: 'permission', anyOf: any };
  for (const flag of gate?.licence ?? []) {
    if ('error' in facts.licence && typeof facts.licence.error === 'string')
      return {
        can: false,
        reason: facts.licence.error === 'license_expired' ? 'licence_expired' : 'licence',
        flag,
      };
    if (!licenceFlagOn(facts.licence as LicenceFeatures, flag))
      return { can: false, reason: 'licence', flag };
    if (!groupsAllow(facts.groups, flag)) return { can: false, reason: 'group_licence', flag };
  }
  return { can: true };
}
