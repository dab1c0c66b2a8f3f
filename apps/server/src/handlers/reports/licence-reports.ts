import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { z } from 'zod';
import {
  LicenceAreas,
  ReportData,
  reportWindow,
  windowAsDays,
  type LicencePeriodRow,
  type LicencesUsedRow,
  type ReportWindow,
} from '@lintel/core';
import type { LicencePeriodArgs, LicencesUsedArgs } from '@lintel/commands';
import type { Caller } from '../../engine/caller';
import { AppError } from '../../errors';
import { usedInGroups } from '../../licensing/limits';

/**
 * The licence reports (spec part 2 §7 Reports). Both read the groups in keyset pages by id (the validity
 * report by group id and the licence's place in the group's list): a page of the console is one such page,
 * an export reads page after page until none is left and writes each row as it comes, so neither holds more
 * than one page in memory and neither pays OFFSET deep into 10,000 groups. A caller who may see every
 * group (`domains.view_all` or `licenses.view_all`) reports on all of them; anyone else on his own groups
 * and those below them.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Q = Kysely<any>;
type UsedArgs = Omit<z.output<typeof LicencesUsedArgs>, 'limit' | 'cursor'>;
type PeriodArgs = Omit<z.output<typeof LicencePeriodArgs>, 'limit' | 'cursor'>;
type Common = Pick<
  UsedArgs,
  'domains' | 'domain_types' | 'domain_admins' | 'matching' | 'period' | 'date_from' | 'date_to'
>;

const DAY = 86_400_000;
export const EXPORT_PAGE = 500;

/** The report's period by the server's clock; a manual period needs its days in order. */
export function windowOf(args: Common, now: Date): ReportWindow {
  if (args.period === 'manual') {
    if (!args.date_from && !args.date_to)
      throw new AppError('check_fields_data', { fields: [{ field: 'date_from', key: 'required' }] });
    if (args.date_from && args.date_to && args.date_from > args.date_to)
      throw new AppError('check_fields_data', { fields: [{ field: 'date_to', key: 'date_before_from' }] });
  }
  return reportWindow(args.period, now.getTime(), { from: args.date_from, to: args.date_to });
}

export const periodInfo = (name: Common['period'], w: ReportWindow, now: Date) => ({
  name,
  ...windowAsDays(w),
  now: now.toISOString(),
});

/** The groups the caller reports on, as a predicate on `d`. */
function scopeSql(caller: Caller): RawBuilder<boolean> {
  if (caller.hasAny(['domains.view_all', 'licenses.view_all'])) return sql<boolean>`true`;
  return sql<boolean>`d.id in (
    with recursive s(id) as (
      select domain_id from user_domains where user_id = ${caller.userId}
      union select c.id from domains c join s on c.parent_id = s.id)
    select id from s)`;
}

/** The filters of both reports, each a predicate on `d`, joined as `matching` says. */
function filterSql(args: Common, extra: RawBuilder<boolean>[]): RawBuilder<boolean> {
  const parts: RawBuilder<boolean>[] = [];
  if (args.domains?.length)
    parts.push(sql<boolean>`d.id in (
      with recursive s(id) as (
        select id from domains where id in (${sql.join(args.domains)})
        union select c.id from domains c join s on c.parent_id = s.id)
      select id from s)`);
  if (args.domain_types?.length)
    parts.push(sql<boolean>`d.domain_type_id in (${sql.join(args.domain_types)})`);
  if (args.domain_admins?.length)
    parts.push(sql<boolean>`exists (select 1 from user_domains ud join users u on u.id = ud.user_id
      where ud.domain_id = d.id and u.is_group_admin and u.id in (${sql.join(args.domain_admins)}))`);
  parts.push(...extra);
  if (!parts.length) return sql<boolean>`true`;
  return sql<boolean>`(${sql.join(parts, args.matching === 'any' ? sql` or ` : sql` and `)})`;
}

interface Settings {
  is_enabled?: boolean;
  notifications?: { period?: string; notify_before?: number };
  licenses?: {
    is_active?: boolean;
    features?: Record<string, Record<string, unknown> | undefined>;
    restrict_period?: { is_active?: boolean; from?: string | null; to?: string | null } | null;
  }[];
}

/** The licence areas a licence switches on (each by its switch, as the gates read them). */
const SWITCH: Record<string, string> = { face_id: 'is_enabled_for_guests', identifier: 'is_guest_enabled' };
export function areasOf(features: Record<string, Record<string, unknown> | undefined> | undefined): string[] {
  return LicenceAreas.filter((a) => features?.[a]?.[SWITCH[a] ?? 'is_enabled'] === true);
}

const windowOfLicence = (
  p: NonNullable<Settings['licenses']>[number]['restrict_period'],
): [number, number] =>
  p?.is_active
    ? [
        p.from ? Date.parse(`${p.from}T00:00:00Z`) : -Infinity,
        p.to ? Date.parse(`${p.to}T00:00:00Z`) + DAY : Infinity,
      ]
    : [-Infinity, Infinity];

// ----- licences used per group ----------------------------------------------------------------------------

/** One page of the licences-used report: groups with id above `after`, at most `limit`. */
export async function usedPage(
  db: Q,
  caller: Caller,
  args: UsedArgs,
  w: ReportWindow,
  after: number,
  limit: number,
): Promise<LicencesUsedRow[]> {
  const data = args.data?.length ? args.data : [...ReportData];
  const dataFilter = args.data?.length
    ? [
        sql<boolean>`(${sql.join(
          args.data.map((k) =>
            k === 'users'
              ? sql`(jsonb_typeof(d.license_limits->'users') = 'number' or exists (select 1 from user_domains x where x.domain_id = d.id))`
              : sql`jsonb_typeof(d.license_limits->${k}) = 'number'`,
          ),
          sql` or `,
        )})`,
      ]
    : [];
  const groups = await sql<{
    id: number;
    name: string;
    parent_id: number | null;
    type: string | null;
    license_settings: Settings;
    license_limits: Record<string, unknown>;
  }>`
    select d.id, d.name, d.parent_id, dt.name as type, d.license_settings, d.license_limits
    from domains d left join domain_types dt on dt.id = d.domain_type_id
    where d.project_id = ${caller.projectId} and d.id > ${after}
      and ${scopeSql(caller)} and ${filterSql(args, dataFilter)}
    order by d.id limit ${limit}`.execute(db);
  const ids = groups.rows.map((g) => g.id);
  if (!ids.length) return [];
  const [admins, users] = await Promise.all([
    sql<{ domain_id: number; name: string }>`
      select ud.domain_id, u.name from user_domains ud join users u on u.id = ud.user_id
      where u.is_group_admin and ud.domain_id in (${sql.join(ids)}) order by u.name, u.id`.execute(db),
    data.includes('users')
      ? sql<{ root: number; n: number }>`
          with recursive down(root, id) as (
            select id, id from domains where id in (${sql.join(ids)})
            union all
            select down.root, c.id from domains c join down on c.parent_id = down.id)
          select down.root, count(distinct ud.user_id)::int as n
          from down join user_domains ud on ud.domain_id = down.id group by down.root`.execute(db)
      : Promise.resolve({ rows: [] as { root: number; n: number }[] }),
  ]);
  const adminsOf = new Map<number, string[]>();
  for (const a of admins.rows) adminsOf.set(a.domain_id, [...(adminsOf.get(a.domain_id) ?? []), a.name]);
  const usersOf = new Map(users.rows.map((u) => [u.root, u.n]));
  // the other counted things, by the counter their family registered with its limit (virtual numbers now;
  // mobile apps and keys as they come); a feature nobody counts yet uses none
  const counted = new Map<string, number>();
  for (const k of data)
    if (k !== 'users') for (const [id, n] of await usedInGroups(db, k, ids)) counted.set(`${k}:${id}`, n);
  const from = w.from ?? -Infinity;
  const to = w.to ?? Infinity;
  return groups.rows.map((g) => {
    const s = g.license_settings ?? {};
    const enabled = s.is_enabled === true;
    const features = new Set<string>();
    if (enabled)
      for (const l of s.licenses ?? []) {
        if (!l.is_active) continue;
        const [lf, lt] = windowOfLicence(l.restrict_period);
        if (lf < to && lt > from) for (const a of areasOf(l.features)) features.add(a);
      }
    const limits: Record<string, number | null> = {};
    const used: Record<string, number | null> = {};
    for (const k of data) {
      const max = g.license_limits?.[k];
      limits[k] = typeof max === 'number' ? max : null;
      used[k] = k === 'users' ? (usersOf.get(g.id) ?? 0) : (counted.get(`${k}:${g.id}`) ?? 0);
    }
    return {
      group_id: g.id,
      name: g.name,
      parent_id: g.parent_id,
      type: g.type,
      admins: adminsOf.get(g.id) ?? [],
      is_enabled: enabled,
      features: LicenceAreas.filter((a) => features.has(a)),
      limits,
      used,
    };
  });
}

// ----- licence validity periods -------------------------------------------------------------------------

/** The validity report's keyset: the group's id and the licence's place in its list. */
export const periodCursor = (r: { group_id: number; licence: number }) => `${r.group_id}:${r.licence}`;
export function parsePeriodCursor(c: string | undefined): [number, number] {
  if (!c) return [0, 0];
  const m = /^(\d{1,10}):(\d{1,4})$/.exec(c);
  if (!m) throw new AppError('check_fields_data', { fields: [{ field: 'cursor', key: 'invalid' }] });
  return [Number(m[1]), Number(m[2])];
}

/** One page of the licence-validity report: the licences after `after` (group id, place), at most `limit`. */
export async function periodPage(
  db: Q,
  caller: Caller,
  args: PeriodArgs,
  w: ReportWindow,
  now: Date,
  after: [number, number],
  limit: number,
): Promise<LicencePeriodRow[]> {
  const nowTs = now.toISOString();
  // the keyset's group bound goes into the innermost query, so a page expands only the groups from there on
  // each licence of each group, with its status at `now` (disabled: switched off, itself or its group's
  // settings; ending: in force and ending within the group's notify-before days, 14 when it sends none)
  const licences = sql`
    select d.id as group_id, d.name, dt.name as type, e.ord::int as licence, e.l as entry,
      (e.l->>'is_active') = 'true' as is_active,
      case when e.l->'restrict_period'->>'is_active' = 'true' then nullif(e.l->'restrict_period'->>'from', '')::date end as lf,
      case when e.l->'restrict_period'->>'is_active' = 'true' then nullif(e.l->'restrict_period'->>'to', '')::date end as lt,
      coalesce(d.license_settings->'notifications'->>'period', 'never') as notify_period,
      coalesce((d.license_settings->'notifications'->>'notify_before')::int, 0) as notify_before,
      d.license_settings->>'is_enabled' = 'true' as group_enabled,
      n.last_notified_at
    from domains d
    left join domain_types dt on dt.id = d.domain_type_id
    left join group_licence_notify n on n.domain_id = d.id
    cross join lateral jsonb_array_elements(case when jsonb_typeof(d.license_settings->'licenses') = 'array'
      then d.license_settings->'licenses' else '[]'::jsonb end) with ordinality e(l, ord)
    where d.project_id = ${caller.projectId} and d.id >= ${after[0]} and ${scopeSql(caller)}`;
  const withStatus = sql`
    select x.*,
      case when x.lt is null then null
        else floor(extract(epoch from ((x.lt + 1)::timestamp at time zone 'UTC' - ${nowTs}::timestamptz)) / 86400)::int
      end as days_left
    from (${licences}) x`;
  const status = sql`
    select y.*, case
      when not y.group_enabled or not y.is_active then 'disabled'
      when y.lf is not null and y.lf::timestamp at time zone 'UTC' > ${nowTs}::timestamptz then 'future'
      when y.days_left is not null and y.days_left < 0 then 'expired'
      when y.days_left is not null and y.days_left <= (case when y.notify_period = 'never' then 14 else y.notify_before end) then 'ending'
      else 'active' end as status
    from (${withStatus}) y`;
  const extra: RawBuilder<boolean>[] = [];
  if (args.status?.length) extra.push(sql<boolean>`z.status in (${sql.join(args.status)})`);
  const from = w.from === null ? null : new Date(w.from).toISOString();
  const to = w.to === null ? null : new Date(w.to).toISOString();
  const start = sql`coalesce(z.lf::timestamp at time zone 'UTC', '-infinity'::timestamptz)`;
  const end = sql`coalesce((z.lt + 1)::timestamp at time zone 'UTC', 'infinity'::timestamptz)`;
  const lo = from === null ? sql`'-infinity'::timestamptz` : sql`${from}::timestamptz`;
  const hi = to === null ? sql`'infinity'::timestamptz` : sql`${to}::timestamptz`;
  const inRange =
    args.date_condition === 'starts'
      ? sql`z.lf is not null and ${start} >= ${lo} and ${start} < ${hi}`
      : args.date_condition === 'ends'
        ? sql`z.lt is not null and ${end} > ${lo} and ${end} <= ${hi}`
        : args.date_condition === 'notified'
          ? sql`z.last_notified_at is not null and z.last_notified_at >= ${lo} and z.last_notified_at < ${hi}`
          : sql`${start} < ${hi} and ${end} > ${lo}`;
  const rows = await sql<{
    group_id: number;
    name: string;
    type: string | null;
    licence: number;
    entry: NonNullable<Settings['licenses']>[number];
    is_active: boolean;
    lf: string | null;
    lt: string | null;
    notify_period: string;
    notify_before: number;
    last_notified_at: Date | string | null;
    days_left: number | null;
    status: LicencePeriodRow['status'];
  }>`
    select z.group_id, z.name, z.type, z.licence, z.entry, z.is_active, z.lf::text as lf, z.lt::text as lt,
      z.notify_period, z.notify_before, z.last_notified_at, z.days_left, z.status
    from (${status}) z join domains d on d.id = z.group_id
    where (z.group_id, z.licence) > (${after[0]}, ${after[1]})
      and ${inRange} and ${filterSql(args, extra)}
    order by z.group_id, z.licence limit ${limit}`.execute(db);
  return rows.rows.map((r) => ({
    group_id: r.group_id,
    name: r.name,
    type: r.type,
    licence: r.licence,
    is_active: r.is_active,
    features: areasOf(r.entry?.features),
    from: r.lf,
    to: r.lt,
    status: r.status,
    days_left: r.days_left,
    notifications: { period: r.notify_period, notify_before: r.notify_before },
    last_notified_at:
      r.last_notified_at === null ? null : new Date(r.last_notified_at as string).toISOString(),
  }));
}
