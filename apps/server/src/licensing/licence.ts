import type { Kysely } from 'kysely';
import type { LicenseInfo } from '@lintel/core';
import type { DB } from '../db/schema';
import { AppError } from '../errors';

/** Every feature off: the licence info before any licence. */
export function emptyLicenseInfo(): LicenseInfo {
  return {
    sip: { is_enabled: false, license_count: null, is_sip_trunks_enabled: false, is_web_dialer_enabled: false },
    mobile_app: {
      is_enabled: false,
      license_count: null,
      is_domain_forward_rule_enabled: false,
      is_white_label_enabled: false,
      is_remote_open_enabled: false,
      is_siri_enabled: false,
      is_apple_watch_enabled: false,
      is_family_events_enabled: false,
    },
    elevator: { is_enabled: false },
    license_plate: { is_enabled: false },
    face_id: { is_enabled_for_guests: false },
    amenity: { is_enabled: false },
    ukey2: { is_enabled: false, license_count: null },
    identifier: { is_guest_enabled: false },
  };
}

type Features = Partial<{ [K in keyof LicenseInfo]: Partial<LicenseInfo[K]> }>;

interface GroupLicence {
  feature: string;
  is_active: boolean;
  restrict_period?: { is_active: boolean; from: string | null; to: string | null };
}

/** The project's server licence in force now, or why there is none. */
export async function serverLicence(db: Kysely<DB>, projectId: number): Promise<{ features: Features } | { error: 'feature_not_licensed' | 'license_expired' }> {
  const rows = await db.selectFrom('licenses').selectAll().where('project_id', '=', projectId).where('is_active', '=', true).execute();
  if (!rows.length) return { error: 'feature_not_licensed' };
  const now = Date.now();
  const current = rows.filter((r) => (!r.valid_from || r.valid_from.getTime() <= now) && (!r.valid_to || r.valid_to.getTime() > now));
  if (!current.length) return { error: 'license_expired' };
  // several licences add up: a feature is on when any licence has it on
  const features: Record<string, Record<string, unknown>> = {};
  for (const r of current)
    for (const [k, v] of Object.entries(r.features as Record<string, Record<string, unknown>>)) features[k] = { ...features[k], ...Object.fromEntries(Object.entries(v).filter(([, x]) => x !== false && x !== null)) };
  return { features: features as Features };
}

function flagOn(features: Features, flag: string): boolean {
  const [area, key] = flag.split('.') as [keyof LicenseInfo, string | undefined];
  const section = features[area] as Record<string, unknown> | undefined;
  if (!section) return false;
  if (key === undefined) return section.is_enabled === true;
  // a flag inside a feature needs the feature on too (except face id, which has no is_enabled)
  return section[key] === true && (!('is_enabled' in section) || key === 'is_enabled' || section.is_enabled === true || area === 'face_id');
}

/**
 * The group side: the nearest group up the tree that has licence settings switched on decides; a feature
 * it does not list, or lists inactive or outside its period, is off. With no such group the server
 * licence alone decides.
 */
export async function groupAllows(db: Kysely<DB>, domainIds: readonly number[], flag: string): Promise<boolean> {
  if (!domainIds.length) return true;
  const area = flag.split('.')[0]!;
  const now = Date.now();
  for (const start of domainIds) {
    let id: number | null = start;
    let decided: boolean | null = null;
    for (let depth = 0; id !== null && depth < 64 && decided === null; depth++) {
      const row: { parent_id: number | null; license_settings: unknown } | undefined = await db.selectFrom('domains').select(['parent_id', 'license_settings']).where('id', '=', id).executeTakeFirst();
      if (!row) break;
      const settings = row.license_settings as { is_enabled?: boolean; licenses?: GroupLicence[] };
      if (settings.is_enabled) {
        const entry = settings.licenses?.find((l) => l.feature === area);
        const p = entry?.restrict_period;
        const inPeriod = !p?.is_active || ((!p.from || Date.parse(p.from) <= now) && (!p.to || Date.parse(p.to) > now));
        decided = !!entry?.is_active && inPeriod;
      }
      id = row.parent_id;
    }
    if (decided === null || decided) return true;
  }
  return false;
}

/** Throws the licence error when a flag is off on the server licence or for the caller's groups. */
export async function assertLicensed(db: Kysely<DB>, projectId: number, domainIds: readonly number[], flags: readonly string[]): Promise<void> {
  if (!flags.length) return;
  const server = await serverLicence(db, projectId);
  if ('error' in server) throw new AppError(server.error, { feature: flags[0] });
  for (const flag of flags) {
    if (!flagOn(server.features, flag)) throw new AppError('feature_not_licensed', { feature: flag, by: 'server' });
    if (!(await groupAllows(db, domainIds, flag))) throw new AppError('feature_not_licensed', { feature: flag, by: 'group' });
  }
}

/** The profile's licence info: each flag on where both the server licence and the groups allow it. */
export async function licenceInfo(db: Kysely<DB>, projectId: number, domainIds: readonly number[]): Promise<LicenseInfo> {
  const info = emptyLicenseInfo();
  const server = await serverLicence(db, projectId);
  if ('error' in server) return info;
  for (const [area, section] of Object.entries(info) as [keyof LicenseInfo, Record<string, unknown>][]) {
    const areaOn = await groupAllows(db, domainIds, area);
    const given = (server.features[area] ?? {}) as Record<string, unknown>;
    for (const key of Object.keys(section)) {
      if (key === 'license_count') section[key] = typeof given[key] === 'number' ? given[key] : null;
      else section[key] = areaOn && flagOn(server.features, `${area}.${key}`);
    }
  }
  return info;
}

/** The licence warning of server-settings (spec: normal, no_license, will_expire, already_expired, with days). */
export async function licenceWarning(db: Kysely<DB>, projectId: number, warnDays = 30): Promise<{ status: 'normal' | 'no_license' | 'will_expire' | 'already_expired'; days: number | null }> {
  const rows = await db.selectFrom('licenses').select(['valid_from', 'valid_to']).where('project_id', '=', projectId).where('is_active', '=', true).execute();
  if (!rows.length) return { status: 'no_license', days: null };
  const now = Date.now();
  const current = rows.filter((r) => (!r.valid_from || r.valid_from.getTime() <= now) && (!r.valid_to || r.valid_to.getTime() > now));
  if (!current.length) return { status: 'already_expired', days: 0 };
  if (current.some((r) => !r.valid_to)) return { status: 'normal', days: null };
  const end = Math.max(...current.map((r) => r.valid_to!.getTime()));
  const days = Math.floor((end - now) / 86_400_000);
  return days <= warnDays ? { status: 'will_expire', days } : { status: 'normal', days };
}
