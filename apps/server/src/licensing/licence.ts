import { sql, type Kysely } from 'kysely';
import {
  evaluateGate,
  groupsAllow,
  licenceFlagOn,
  type GroupChains,
  type GroupLicenceFacts,
  type GateDecision,
  type GateFacts,
  type LicenceArea,
  type LicenceFeatures,
  type LicenceFlag,
  type LicenseInfo,
} from '@lintel/core';
import type { DB } from '../db/schema';
import { AppError } from '../errors';

/** Every feature off: the licence info before any licence. */
export function emptyLicenseInfo(): LicenseInfo {
  return {
    sip: {
      is_enabled: false,
      license_count: null,
      is_sip_trunks_enabled: false,
      is_web_dialer_enabled: false,
    },
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

export type Features = Partial<{ [K in keyof LicenseInfo]: Partial<LicenseInfo[K]> }>;

/** A licence row is in force at `now`: active, started, not ended. */
export const inForce = (
  r: { is_active: boolean; valid_from: Date | null; valid_to: Date | null },
  now: Date,
): boolean =>
  r.is_active &&
  (!r.valid_from || r.valid_from.getTime() <= now.getTime()) &&
  (!r.valid_to || r.valid_to.getTime() > now.getTime());

/**
 * The licences in force at `now`, as they count: every active one within its period, except that the
 * installation's own evaluation licence gives way as soon as a licence of the vendor (a file, the licence
 * server, or one written by hand) is in force. The evaluation is a trial until a licence is bought: were it
 * stacked with the bought one, its "every feature on" would hide what the bought one leaves out.
 */
export function licencesInForce<
  R extends { kind: string; is_active: boolean; valid_from: Date | null; valid_to: Date | null },
>(rows: readonly R[], now: Date): R[] {
  const current = rows.filter((r) => inForce(r, now));
  const bought = current.filter((r) => r.kind !== 'evaluation');
  return bought.length ? bought : current;
}

/**
 * The features of the licences in force, stacked: a flag is on when any licence has it on, and each
 * count (`license_count`) is the sum of the licences' counts (null when none counts it).
 */
export function stackFeatures(rows: readonly { features: unknown }[]): Features {
  const features: Record<string, Record<string, unknown>> = {};
  for (const r of rows)
    for (const [area, section] of Object.entries(r.features as Record<string, Record<string, unknown>>)) {
      const into = (features[area] ??= {});
      for (const [k, v] of Object.entries(section ?? {})) {
        if (k === 'license_count') {
          if (typeof v === 'number') into[k] = (typeof into[k] === 'number' ? (into[k] as number) : 0) + v;
        } else if (v !== false && v !== null && v !== undefined) into[k] = v;
      }
    }
  return features as Features;
}

/** The project's server licence in force at `now`, or why there is none. */
export async function serverLicence(
  db: Kysely<DB>,
  projectId: number,
  now: Date,
): Promise<{ features: Features } | { error: 'feature_not_licensed' | 'license_expired' }> {
  const rows = await db
    .selectFrom('licenses')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('is_active', '=', true)
    .execute();
  if (!rows.length) return { error: 'feature_not_licensed' };
  const current = licencesInForce(rows, now);
  if (!current.length) return { error: 'license_expired' };
  return { features: stackFeatures(current) };
}

/**
 * The group side of the gate's facts: for each of these groups (the caller's, or the one a row lives in), the
 * licence settings of the group and every group above it that has them switched on, nearest first, in one
 * recursive query. The evaluator (core `groupsAllow`) reads them at `now`.
 */
export async function groupChains(
  db: Kysely<DB>,
  domainIds: readonly number[],
  now: Date,
): Promise<GroupChains> {
  const ids = [...new Set(domainIds)];
  if (!ids.length) return { chains: [], now: now.getTime() };
  const rows = await sql<{ start: number; license_settings: { licenses?: GroupLicenceFacts['licenses'] } }>`
    with recursive up(start, id, depth) as (
      select id, id, 0 from domains where id in (${sql.join(ids)})
      union all
      select up.start, d.parent_id, up.depth + 1 from up join domains d on d.id = up.id
        where d.parent_id is not null and up.depth < 64
    )
    select up.start, d.license_settings from up join domains d on d.id = up.id
    where d.license_settings->>'is_enabled' = 'true'
    order by up.start, up.depth`.execute(db);
  const chains = new Map<number, GroupLicenceFacts[]>(ids.map((id) => [id, []]));
  for (const r of rows.rows)
    chains.get(r.start)?.push({
      licenses: Array.isArray(r.license_settings.licenses) ? r.license_settings.licenses : [],
    });
  return { chains: [...chains.values()], now: now.getTime() };
}

/**
 * Throws the licence error when a flag is off on the server licence or for these groups: the caller's, or
 * the one group a row lives in ("may F be used in group G now", the chain from G up).
 */
export async function assertLicensed(
  db: Kysely<DB>,
  projectId: number,
  domainIds: readonly number[],
  flags: readonly LicenceFlag[],
  now: Date,
): Promise<void> {
  if (!flags.length) return;
  const facts = await licenceFacts(db, projectId, domainIds, flags, now);
  throwGateDecision(evaluateGate({ licence: flags }, { permissions: [], ...facts }));
}

/**
 * The licence side of the gate facts, loaded for the flags asked: the server licence in force (or why there
 * is none) and the groups' decision for each feature area the flags belong to.
 */
export async function licenceFacts(
  db: Kysely<DB>,
  projectId: number,
  domainIds: readonly number[],
  flags: readonly LicenceFlag[],
  now: Date,
): Promise<Pick<GateFacts, 'licence' | 'groups'>> {
  const server = await serverLicence(db, projectId, now);
  return {
    licence: 'error' in server ? server : server.features,
    ...(flags.length ? { groups: await groupChains(db, domainIds, now) } : {}),
  };
}

/** A denied gate as the catalogue's error (permission denials are audited by `checkGates` first). */
export function throwGateDecision(d: GateDecision): void {
  if (d.can) return;
  if (d.reason === 'permission') throw new AppError('method_prohibited');
  if (d.reason === 'licence_expired') throw new AppError('license_expired', { feature: d.flag });
  throw new AppError('feature_not_licensed', {
    feature: d.flag,
    by: d.reason === 'group_licence' ? 'group' : 'server',
  });
}

/**
 * The profile's licence info from the facts (pure): each flag on where the server licence has it on (with
 * its feature's switch, `licenceFlagOn`) and the groups' chains allow it (core `groupsAllow`, the evaluator's
 * own reading of the groups).
 */
export function licenceInfoFrom(
  server: { features: Features } | { error: string },
  groups: GroupChains | undefined,
): LicenseInfo {
  const info = emptyLicenseInfo();
  if ('error' in server) return info;
  for (const [area, section] of Object.entries(info) as [LicenceArea, Record<string, unknown>][]) {
    const given = (server.features[area] ?? {}) as Record<string, unknown>;
    for (const key of Object.keys(section)) {
      const flag = `${area}.${key}`;
      if (key === 'license_count') section[key] = typeof given[key] === 'number' ? given[key] : null;
      else
        section[key] = licenceFlagOn(server.features as LicenceFeatures, flag) && groupsAllow(groups, flag);
    }
  }
  return info;
}

/** The profile's licence info: each flag on where both the server licence and the groups allow it. */
export async function licenceInfo(
  db: Kysely<DB>,
  projectId: number,
  domainIds: readonly number[],
  now: Date,
): Promise<LicenseInfo> {
  const server = await serverLicence(db, projectId, now);
  if ('error' in server) return emptyLicenseInfo();
  return licenceInfoFrom(server, await groupChains(db, domainIds, now));
}
