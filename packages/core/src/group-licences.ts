import { z } from 'zod';
import { licenceFlagOn, periodWindow, type GroupLicenceFacts } from './gates';

const DAY = 86_400_000;
import type { LicenceArea } from './permissions';

/**
 * A group's licence settings (spec part 1 §3 "Group license settings", part 2 §5 data shaping): switched on
 * or off, when to notify before its licences end, and its licences, each active or not, with a feature set
 * and an optional period. Beside them the group's maximums of counted things (`license_limits`). Pure
 * schemas and rules: the server checks conflicts with them, the gate evaluator reads the chain with them.
 */

/**
 * A count as a form or a script sends it (spec part 2 §5): a numeric string becomes a number, an empty one
 * (or an empty value) null — "empty licence counts and guest limits are sent as null".
 */
const numeric = (v: unknown): unknown => {
  if (typeof v !== 'string') return v;
  const s = v.trim();
  if (s === '') return null;
  return /^\d+$/.test(s) ? Number(s) : v;
};
export const LicenceCount = (max = 10_000_000) =>
  z.preprocess(numeric, z.number().int().min(0).max(max).nullable());

/** A day, `YYYY-MM-DD` (a licence period is whole days: `from` its first, `to` its last). */
export const LicenceDay = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, { message: 'date' })
  .refine(
    (s) =>
      !Number.isNaN(Date.parse(`${s}T00:00:00Z`)) && new Date(`${s}T00:00:00Z`).toISOString().startsWith(s),
    {
      message: 'date',
    },
  )
  .meta({ date: true });

export const RestrictPeriod = z
  .object({
    is_active: z.boolean(),
    from: LicenceDay.nullable(),
    to: LicenceDay.nullable(),
  })
  .superRefine((p, ctx) => {
    if (!p.is_active) return;
    if (p.from === null && p.to === null)
      ctx.addIssue({ code: 'custom', path: ['from'], message: 'one_of_required' });
    else if (p.from !== null && p.to !== null && p.from > p.to)
      ctx.addIssue({ code: 'custom', path: ['to'], message: 'period_order' });
  });
export type RestrictPeriod = z.infer<typeof RestrictPeriod>;

const flag = () => z.boolean().default(false);

/**
 * The feature set of one group licence: the flags of `license_info` (part 1 §3) without the counts (those
 * are the group's maximums), each off unless given.
 */
export const GroupLicenceFeatures = z.object({
  sip: z
    .object({ is_enabled: flag(), is_sip_trunks_enabled: flag(), is_web_dialer_enabled: flag() })
    .prefault({}),
  mobile_app: z
    .object({
      is_enabled: flag(),
      is_domain_forward_rule_enabled: flag(),
      is_white_label_enabled: flag(),
      is_remote_open_enabled: flag(),
      is_siri_enabled: flag(),
      is_apple_watch_enabled: flag(),
      is_family_events_enabled: flag(),
    })
    .prefault({}),
  elevator: z.object({ is_enabled: flag() }).prefault({}),
  license_plate: z.object({ is_enabled: flag() }).prefault({}),
  face_id: z.object({ is_enabled_for_guests: flag() }).prefault({}),
  amenity: z.object({ is_enabled: flag() }).prefault({}),
  ukey2: z.object({ is_enabled: flag() }).prefault({}),
  identifier: z.object({ is_guest_enabled: flag() }).prefault({}),
});
export type GroupLicenceFeatures = z.output<typeof GroupLicenceFeatures>;

export const GroupLicenseEntry = z.object({
  is_active: z.boolean(),
  features: GroupLicenceFeatures.prefault({}),
  restrict_period: RestrictPeriod,
});
export type GroupLicenseEntry = z.output<typeof GroupLicenseEntry>;

/** Notification modes of a group's licences: never (notifications off), or a mode of part 2 §9. */
export const GroupNotifyPeriods = ['never', 'once', 'everyday', 'every_week', 'every_30_days'] as const;

export const GroupLicenseSettings = z.object({
  is_enabled: z.boolean(),
  notifications: z.object({
    period: z.enum(GroupNotifyPeriods),
    notify_before: z.preprocess(numeric, z.number().int().min(0).max(365)),
  }),
  licenses: z.array(GroupLicenseEntry).max(50),
});
export type GroupLicenseSettings = z.output<typeof GroupLicenseSettings>;

/**
 * The counted things a group's maximums name (spec part 1 §3: ukey2 keys, mobile apps, virtual numbers;
 * and the users of #12). A family declaring `limits: [{per: 'group', feature}]` counts its rows against the
 * maximum of that name; `registerLimitKey` lets a family whose key is not listed here declare one.
 */
export const GroupLimitKeys = ['virtual_numbers', 'mobile_apps', 'ukey2_keys', 'users'] as const;
const limitKeys = new Set<string>(GroupLimitKeys);
export const registerLimitKey = (key: string): void => void limitKeys.add(key);
export const isLimitKey = (key: string): boolean => limitKeys.has(key);
export const limitKeysKnown = (): readonly string[] => [...limitKeys];

/** The group's maximums; null or absent: no maximum of its own (what is above it still holds). */
export const GroupLicenceLimits = z
  .object({
    virtual_numbers: LicenceCount().optional(),
    mobile_apps: LicenceCount().optional(),
    ukey2_keys: LicenceCount().optional(),
    users: LicenceCount().optional(),
  })
  .catchall(LicenceCount())
  .superRefine((v, ctx) => {
    for (const key of Object.keys(v))
      if (!limitKeys.has(key)) ctx.addIssue({ code: 'custom', path: [key], message: 'unknown_field' });
  });
export type GroupLicenceLimits = Record<string, number | null | undefined>;

// ----- periods and conflicts --------------------------------------------------------------------------------

/** The features a period conflict is told by: the areas of `license_info`, each by its switch. */
const AREA_SWITCH: Record<LicenceArea, string> = {
  sip: 'sip',
  mobile_app: 'mobile_app',
  elevator: 'elevator',
  license_plate: 'license_plate',
  face_id: 'face_id.is_enabled_for_guests',
  amenity: 'amenity',
  ukey2: 'ukey2',
  identifier: 'identifier.is_guest_enabled',
};
export const LicenceAreas = Object.keys(AREA_SWITCH) as LicenceArea[];

export type Window = [number, number];

/** Merged, sorted windows in which a feature is granted by a group's active licences (empty: never). */
export function featureWindows(g: GroupLicenceFacts, area: LicenceArea): Window[] {
  const raw = g.licenses
    .filter((l) => l.is_active && licenceFlagOn(l.features, AREA_SWITCH[area]))
    .map((l) => periodWindow(l.restrict_period))
    .sort((a, b) => a[0] - b[0]);
  const out: Window[] = [];
  for (const w of raw) {
    const last = out[out.length - 1];
    if (last && w[0] <= last[1]) last[1] = Math.max(last[1], w[1]);
    else out.push([...w]);
  }
  return out;
}

/** The first window of `inner` not inside one window of `outer`, or null when all fit. */
export function windowOutside(outer: readonly Window[], inner: readonly Window[]): Window | null {
  for (const w of inner) if (!outer.some((o) => o[0] <= w[0] && w[1] <= o[1])) return w;
  return null;
}

/** A window as days for a message: `from`/`to` as `YYYY-MM-DD` (`to` the last day), null when open. */
export function windowDays(w: Window): { from: string | null; to: string | null } {
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  return {
    from: Number.isFinite(w[0]) ? day(w[0]) : null,
    to: Number.isFinite(w[1]) ? day(w[1] - DAY) : null,
  };
}

/** What a group's settings come to when stored: notifications off are `never` with 0 days (part 2 §5). */
export function shapeGroupLicenseSettings(s: GroupLicenseSettings): GroupLicenseSettings {
  return {
    ...s,
    notifications:
      s.notifications.period === 'never' ? { period: 'never', notify_before: 0 } : s.notifications,
    licenses: s.licenses.map((l) => ({
      ...l,
      restrict_period: l.restrict_period.is_active
        ? l.restrict_period
        : { is_active: false, from: null, to: null },
    })),
  };
}
