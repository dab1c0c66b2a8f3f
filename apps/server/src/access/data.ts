/**
 * The access data of a project as the one decision reads it (packages/core/src/access/decide.ts): the rules
 * with their relations as id lists (`AccessRuleSpec`), the schedules (`ScheduleSpec`), the project's zone,
 * the holiday calendar in force at each device (its group's and the groups above it, and the project's own),
 * each user's groups with the groups above them, and the anti-passback areas. Read straight from the tables
 * of migrations 0054 and 0075, with no translation: the access matrix reads it, and so may the device sync
 * and the ACS log.
 */
import { sql, type Kysely } from 'kysely';
import {
  AccessIndex,
  holidayDays,
  type AccessRuleSpec,
  type AntiPassbackArea,
  type DecisionContext,
  type DecisionIdentifier,
  type ScheduleSpec,
} from '@lintel/core';
import type { DB } from '../db/schema';
import { projectTimeZone } from './time-zone';
import { loadAreas } from './passback';

export interface ProjectAccess {
  tz: string;
  rules: AccessRuleSpec[];
  schedules: Map<number, ScheduleSpec>;
  index: AccessIndex;
  /** the anti-passback areas (the index decides with them; `lastPassages` of ./passback reads the passages) */
  areas: AntiPassbackArea[];
  /** the devices some rule names */
  devices: number[];
  /** a device's holidays (day numbers) */
  holidaysAt(device: number): ReadonlySet<number>;
  /** a user's groups with the groups above them */
  groupsOf(user: number | null): readonly number[];
  /** the decision's context for an identifier's owner at a device */
  contextFor(owner: number | null, device: number): DecisionContext;
}

const EMPTY: ReadonlySet<number> = new Set();

const byKey = <T>(rows: T[], key: (r: T) => number, value: (r: T) => number) => {
  const m = new Map<number, number[]>();
  for (const r of rows) {
    const k = key(r);
    const l = m.get(k);
    if (l) l.push(value(r));
    else m.set(k, [value(r)]);
  }
  return m;
};

/** Reads the project's rules, schedules, holidays and groups, and indexes the rules. */
export async function loadProjectAccess(db: Kysely<DB>, projectId: number): Promise<ProjectAccess> {
  const tz = await projectTimeZone(db, projectId);
  const rows = async <T>(q: ReturnType<typeof sql<T>>) => (await q.execute(db)).rows;
  const ruleRows = await rows<{ id: number; prohibition: boolean }>(
    sql`select id, prohibition from access_rules where project_id = ${projectId} order by id`,
  );
  const join = (table: string, column: string) =>
    rows<{ r: number; x: number }>(
      sql`select j.access_rule_id as r, ${sql.ref(`j.${column}`)} as x from ${sql.table(table)} j join access_rules a on a.id = j.access_rule_id where a.project_id = ${projectId}`,
    );
  const [devices, schedulesOf, users, identifiers, domains] = await Promise.all([
    join('access_rule_devices', 'device_id'),
    join('access_rule_schedules', 'schedule_id'),
    join('access_rule_users', 'user_id'),
    join('access_rule_identifiers', 'identifier_id'),
    join('access_rule_domains', 'domain_id'),
  ]).then((all) =>
    all.map((l) =>
      byKey(
        l,
        (r) => r.r,
        (r) => r.x,
      ),
    ),
  );
  const rules: AccessRuleSpec[] = ruleRows.map((r) => ({
    id: r.id,
    prohibition: r.prohibition,
    devices: devices!.get(r.id) ?? [],
    time_rules: schedulesOf!.get(r.id) ?? [],
    users: users!.get(r.id) ?? [],
    identifiers: identifiers!.get(r.id) ?? [],
    domains: domains!.get(r.id) ?? [],
  }));
  const scheduleRows = await rows<ScheduleSpec & { id: number }>(
    sql`select id, valid_from, valid_to, is_all_day, repeat_mode, repeat_days, time_from, time_to from schedules where project_id = ${projectId}`,
  );
  const schedules = new Map<number, ScheduleSpec>(scheduleRows.map((s) => [s.id, s]));

  // groups: each one's chain of groups above it
  const groupRows = await rows<{ id: number; parent_id: number | null }>(
    sql`select id, parent_id from domains where project_id = ${projectId}`,
  );
  const parent = new Map(groupRows.map((g) => [g.id, g.parent_id]));
  const chains = new Map<number, number[]>();
  const chainOf = (g: number): number[] => {
    let c = chains.get(g);
    if (!c) {
      c = [];
      for (let x: number | null | undefined = g; x != null && c.length <= parent.size; x = parent.get(x))
        c.push(x);
      chains.set(g, c);
    }
    return c;
  };
  const memberRows = await rows<{ user_id: number; domain_id: number }>(
    sql`select ud.user_id, ud.domain_id from user_domains ud join users u on u.id = ud.user_id where u.project_id = ${projectId}`,
  );
  const userGroups = new Map<number, number[]>();
  for (const [user, groups] of byKey(
    memberRows,
    (r) => r.user_id,
    (r) => r.domain_id,
  ))
    userGroups.set(user, [...new Set(groups.flatMap(chainOf))]);

  // holidays: the project's own (no group) everywhere, a group's at its devices and those below it
  const holidayRows = await rows<{ date: string; domain_id: number | null }>(
    sql`select h.date, hd.domain_id from holidays h left join holiday_domains hd on hd.holiday_id = h.id where h.project_id = ${projectId}`,
  );
  const everywhere = holidayRows.filter((h) => h.domain_id === null).map((h) => h.date);
  const byGroup = new Map<number, string[]>();
  for (const h of holidayRows)
    if (h.domain_id !== null) byGroup.set(h.domain_id, [...(byGroup.get(h.domain_id) ?? []), h.date]);
  const deviceRows = await rows<{ id: number; domain_id: number }>(
    sql`select id, domain_id from devices where project_id = ${projectId}`,
  );
  const calendars = new Map<number, ReadonlySet<number>>();
  for (const d of deviceRows) {
    const dates = [...everywhere, ...chainOf(d.domain_id).flatMap((g) => byGroup.get(g) ?? [])];
    if (dates.length) calendars.set(d.id, holidayDays(dates));
  }
  const everywhereDays = everywhere.length ? holidayDays(everywhere) : EMPTY;

  const areas = await loadAreas(db, projectId);
  const index = new AccessIndex({ rules, schedules, areas });
  const ruled = [...new Set(rules.flatMap((r) => r.devices))].sort((a, b) => a - b);
  const groupsOf = (user: number | null) => (user === null ? [] : (userGroups.get(user) ?? []));
  const holidaysAt = (device: number) => calendars.get(device) ?? everywhereDays;
  return {
    tz,
    rules,
    schedules,
    index,
    areas,
    devices: ruled,
    holidaysAt,
    groupsOf,
    contextFor: (owner, device) => ({ tz, holidays: holidaysAt(device), groups: groupsOf(owner) }),
  };
}

/** An identifier row as the decision reads it (the columns of the `identifiers` table). */
export interface IdentifierRow extends DecisionIdentifier {
  name: string;
  type: string;
  value: string;
}

/** The `_u` instants as the core writes them (`…Z` without milliseconds). */
export const identifierDecisionColumns = sql`i.id, i.name, i.type, i.value, i.is_active, i.owner, i.period_restrict_active,
  to_char(i.period_restrict_from_u at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as period_restrict_from_u,
  to_char(i.period_restrict_to_u at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as period_restrict_to_u,
  i.passes_restrict_active, i.passes_restrict_max_count, i.passes_count`;
