/**
 * A project's access control as the one decision and the device sync read it (packages/core/src/access/):
 * its rules with their relations, schedules, holidays per group, identifiers with their owners' names and
 * groups, devices with their groups, the anti-passback areas and the project's time zone — read in a few
 * statements, whole.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import {
  AccessIndex,
  DeviceIdentifierTypes,
  isTimeZone,
  type AccessRuleSpec,
  type AntiPassbackArea,
  type IdentifierType,
  type ScheduleSpec,
  type SyncIdentifier,
} from '@lintel/core';
import type { DB } from '../db/schema';
import { loadAreas } from '../access/passback';

type Q = Kysely<DB> | Transaction<DB>;

/** A project's zone until its settings name one (docs/decisions.md "Access control: the decision and the sync"). */
const DEFAULT_TIME_ZONE = 'Etc/GMT-2';

export interface ProjectAccess {
  projectId: number;
  tz: string;
  index: AccessIndex;
  rules: AccessRuleSpec[];
  /** the anti-passback areas (the index decides with them; devices are sent nothing of them) */
  areas: AntiPassbackArea[];
  schedules: Map<number, ScheduleSpec & { name: string }>;
  /** every identifier of the project (revoked ones too: the ACS log names them), by id */
  identifiers: Map<number, SyncIdentifier & { name: string }>;
  /** by `type:value` (the platform's type names) */
  byValue: Map<string, SyncIdentifier & { name: string }>;
  devices: Array<{ id: number; domain_id: number; protocol: string }>;
  /** the holiday dates in force at a device: the project's and those of its group and the groups above */
  holidaysAt(deviceId: number): string[];
  /** the groups of a group's chain, itself first */
  chain(domainId: number): number[];
}

const iso = (d: Date | string | null): string | null =>
  d === null ? null : new Date(d).toISOString().replace('.000Z', 'Z');

/** Reads a project's access control whole. */
export async function loadProjectAccess(q: Q, projectId: number): Promise<ProjectAccess> {
  const tzRow = await sql<{
    tz: string | null;
  }>`select settings->>'time_zone' as tz from projects where id = ${projectId}`.execute(q);
  const tzText = tzRow.rows[0]?.tz;
  const tz = tzText && isTimeZone(tzText) ? tzText : DEFAULT_TIME_ZONE;

  const domains = await sql<{
    id: number;
    parent_id: number | null;
  }>`select id, parent_id from domains where project_id = ${projectId}`.execute(q);
  const parent = new Map(
    domains.rows.map((d) => [Number(d.id), d.parent_id === null ? null : Number(d.parent_id)]),
  );
  const chains = new Map<number, number[]>();
  const chain = (id: number): number[] => {
    let c = chains.get(id);
    if (c) return c;
    c = [];
    const seen = new Set<number>();
    for (
      let g: number | null | undefined = id;
      g !== null && g !== undefined && !seen.has(g);
      g = parent.get(g)
    ) {
      seen.add(g);
      c.push(g);
    }
    chains.set(id, c);
    return c;
  };

  const ruleRows = await sql<{
    id: number;
    prohibition: boolean;
  }>`select id, prohibition from access_rules where project_id = ${projectId} order by id`.execute(q);
  const rules = new Map<number, AccessRuleSpec>(
    ruleRows.rows.map((r) => [
      Number(r.id),
      {
        id: Number(r.id),
        prohibition: r.prohibition,
        devices: [],
        time_rules: [],
        users: [],
        identifiers: [],
        domains: [],
      },
    ]),
  );
  const relation = async (
    table: string,
    column: string,
    field: 'devices' | 'time_rules' | 'users' | 'identifiers' | 'domains',
  ) => {
    const r = await sql<{ rule: number; other: number }>`
      select j.access_rule_id as rule, j.${sql.ref(column)} as other
      from ${sql.table(table)} j join access_rules r on r.id = j.access_rule_id
      where r.project_id = ${projectId}`.execute(q);
    for (const row of r.rows)
      (rules.get(Number(row.rule))?.[field] as number[] | undefined)?.push(Number(row.other));
  };
  await relation('access_rule_devices', 'device_id', 'devices');
  await relation('access_rule_schedules', 'schedule_id', 'time_rules');
  await relation('access_rule_users', 'user_id', 'users');
  await relation('access_rule_identifiers', 'identifier_id', 'identifiers');
  await relation('access_rule_domains', 'domain_id', 'domains');

  const scheduleRows = await sql<{
    id: number;
    name: string;
    valid_from: string;
    valid_to: string | null;
    is_all_day: boolean;
    repeat_mode: ScheduleSpec['repeat_mode'];
    repeat_days: ScheduleSpec['repeat_days'];
    time_from: number;
    time_to: number;
  }>`select id, name, valid_from, valid_to, is_all_day, repeat_mode, repeat_days, time_from, time_to
     from schedules where project_id = ${projectId}`.execute(q);
  const schedules = new Map(
    scheduleRows.rows.map((s) => [
      Number(s.id),
      {
        name: s.name,
        valid_from: s.valid_from,
        valid_to: s.valid_to,
        is_all_day: s.is_all_day,
        repeat_mode: s.repeat_mode,
        repeat_days: s.repeat_days ?? [],
        time_from: Number(s.time_from),
        time_to: Number(s.time_to),
      },
    ]),
  );

  const holidayRows = await sql<{ date: string; domain_id: number | null }>`
    select h.date, hd.domain_id from holidays h left join holiday_domains hd on hd.holiday_id = h.id
    where h.project_id = ${projectId}`.execute(q);
  const everywhere: string[] = [];
  const byGroup = new Map<number, string[]>();
  for (const h of holidayRows.rows) {
    if (h.domain_id === null) everywhere.push(h.date);
    else {
      const l = byGroup.get(Number(h.domain_id)) ?? [];
      l.push(h.date);
      byGroup.set(Number(h.domain_id), l);
    }
  }

  const deviceRows = await sql<{ id: number; domain_id: number; protocol: string }>`
    select id, domain_id, protocol from devices where project_id = ${projectId} order by id`.execute(q);
  const devices = deviceRows.rows.map((d) => ({
    id: Number(d.id),
    domain_id: Number(d.domain_id),
    protocol: d.protocol,
  }));
  const deviceGroup = new Map(devices.map((d) => [d.id, d.domain_id]));

  const members = await sql<{ user_id: number; domain_id: number }>`
    select ud.user_id, ud.domain_id from user_domains ud join users u on u.id = ud.user_id
    where u.project_id = ${projectId}`.execute(q);
  const groupsOf = new Map<number, Set<number>>();
  for (const m of members.rows) {
    const s = groupsOf.get(Number(m.user_id)) ?? new Set<number>();
    for (const g of chain(Number(m.domain_id))) s.add(g);
    groupsOf.set(Number(m.user_id), s);
  }

  const identifierRows = await sql<{
    id: number;
    name: string;
    type: IdentifierType;
    value: string;
    is_active: boolean;
    owner_type: 'user' | 'guest';
    owner: number | null;
    owner_name: string | null;
    period_restrict_active: boolean;
    period_restrict_from_u: Date | null;
    period_restrict_to_u: Date | null;
    passes_restrict_active: boolean;
    passes_restrict_max_count: number;
    passes_count: number;
    photo_sha256: string | null;
  }>`select i.id, i.name, i.type, i.value, i.is_active, i.owner_type, i.owner, u.name as owner_name,
       i.period_restrict_active, i.period_restrict_from_u, i.period_restrict_to_u, i.passes_restrict_active,
       i.passes_restrict_max_count, i.passes_count, i.photo_sha256
     from identifiers i left join users u on u.id = i.owner
     where i.project_id = ${projectId} order by i.id`.execute(q);
  // the passes each device counted of the identifiers with a pass limit (what it holds is the limit less the
  // passes counted elsewhere; migration 0081)
  const passesAt = new Map<number, Map<number, number>>();
  const counted = await sql<{ identifier_id: number; device_id: number; passes: number }>`
    select p.identifier_id, p.device_id, p.passes from identifier_device_passes p
      join identifiers i on i.id = p.identifier_id
    where i.project_id = ${projectId} and i.passes_restrict_active`.execute(q);
  for (const r of counted.rows) {
    const m = passesAt.get(Number(r.identifier_id)) ?? new Map<number, number>();
    m.set(Number(r.device_id), Number(r.passes));
    passesAt.set(Number(r.identifier_id), m);
  }
  const identifiers = new Map<number, SyncIdentifier & { name: string }>();
  const byValue = new Map<string, SyncIdentifier & { name: string }>();
  const ownRules = new Map<number, number[]>();
  for (const r of rules.values())
    for (const i of r.identifiers) {
      const l = ownRules.get(i) ?? [];
      l.push(r.id);
      ownRules.set(i, l);
    }
  for (const r of identifierRows.rows) {
    const owner = r.owner === null ? null : Number(r.owner);
    const guest = r.owner_type === 'guest' || owner === null;
    const i: SyncIdentifier & { name: string } = {
      id: Number(r.id),
      name: r.name,
      type: r.type,
      value: r.value,
      is_active: r.is_active,
      owner,
      owner_type: guest ? 'guest' : 'owner',
      owner_name: guest ? r.name || 'Guest identifier' : (r.owner_name ?? ''),
      period_restrict_active: r.period_restrict_active,
      period_restrict_from_u: iso(r.period_restrict_from_u),
      period_restrict_to_u: iso(r.period_restrict_to_u),
      passes_restrict_active: r.passes_restrict_active,
      passes_restrict_max_count: Number(r.passes_restrict_max_count),
      passes_count: Number(r.passes_count),
      passes_at: passesAt.get(Number(r.id)),
      access_rules: ownRules.get(Number(r.id)) ?? [],
      groups: owner === null ? [] : [...(groupsOf.get(owner) ?? [])],
      photo_sha256: r.photo_sha256,
    };
    identifiers.set(i.id, i);
    byValue.set(`${i.type}:${i.value}`, i);
  }

  const ruleList = [...rules.values()];
  const areas = await loadAreas(q, projectId);
  return {
    projectId,
    tz,
    index: new AccessIndex({ rules: ruleList, schedules, areas }),
    rules: ruleList,
    areas,
    schedules,
    identifiers,
    byValue,
    devices,
    chain,
    holidaysAt(deviceId) {
      const g = deviceGroup.get(deviceId);
      const dates = new Set(everywhere);
      if (g !== undefined) for (const c of chain(g)) for (const d of byGroup.get(c) ?? []) dates.add(d);
      return [...dates].sort();
    },
  };
}

/** The identifier types a device takes (url and ukey2 never reach one). */
export const deviceTypes = Object.entries(DeviceIdentifierTypes)
  .filter(([, v]) => v !== null)
  .map(([k]) => k as IdentifierType);
