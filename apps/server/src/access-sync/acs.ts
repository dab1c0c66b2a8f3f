/**
 * The access-control log's entries, made from a device's logs as they are stored (device_gateway.logs, in its
 * transaction): each identifier used or refused becomes an ACS event naming the identifier the platform knows
 * by that type and number, its owner, the device, the decision and a refusal's reason as a catalogue code.
 *
 * The device's decision is the decision (it opened the door or not). Its reason is read as a catalogue code
 * (`reasonFromDevice`); when the device did not hold the identifier (`unknown`) and the platform knows it,
 * the platform's own decision names why (revoked, expired, outside schedule…: a panel only knows it lacks
 * the card). A granted passage names the rule the platform's decision allows by, and counts a pass of the
 * identifier (`passes_count`, once per stored event: a push sent again stores nothing) and the device's own
 * count of it (`identifier_device_passes`, docs/decisions.md "A pass limit across devices").
 */
import { sql, type Transaction } from 'kysely';
import { decide, holidayDays, reasonFromDevice, type DecisionReason, type Passage } from '@lintel/core';
import type { ServerContext } from '../context';
import type { DB } from '../db/schema';
import { AcsEventCreatedEvent } from '../events/define';
import { loadProjectAccess, type ProjectAccess } from './load';
import { areasAt, lastPassages, passed } from '../access/passback';

export interface StoredDeviceEvent {
  event_id: string;
  created_at: Date;
  kind: string;
  result: string | null;
  reason: string | null;
  identifier_type: string | null;
  identifier_number: string | null;
  lock: number | null;
}

interface KnownIdentifier {
  id: number;
  name: string;
  type: string;
  value: string;
  owner_type: 'user' | 'guest';
  owner: number | null;
  owner_name: string | null;
  is_active: boolean;
  period_restrict_active: boolean;
  period_restrict_from_u: Date | null;
  period_restrict_to_u: Date | null;
  passes_restrict_active: boolean;
  passes_restrict_max_count: number;
  passes_count: number;
}

const iso = (d: Date | null) => (d === null ? null : new Date(d).toISOString());

type AcsDevice = { id: number; serial_number: string; domain_id: number | null; project_id: number };

/**
 * Stores the ACS events of a device's freshly stored events (in the caller's transaction) and announces them
 * on `private-access-control`; the catalogue reason of each refusal, by the device's event id.
 */
export async function recordAccessEvents(
  app: ServerContext,
  trx: Transaction<DB>,
  device: AcsDevice,
  events: readonly StoredDeviceEvent[],
): Promise<Map<string, DecisionReason | null>> {
  const [reasons] = await recordAccessEventsOf(app, trx, [{ device, events }]);
  return reasons!;
}

/**
 * `recordAccessEvents` for the pushes of several devices in one transaction (the group commit of device
 * events): the identifiers read once per project, the rules' names, the ACS rows, the passes and their outbox
 * rows each in one statement for them all, whatever the number of pushes. Each push is decided in the order
 * given, its events in their order, as one transaction after another would; one map of reasons per push.
 */
export async function recordAccessEventsOf(
  app: ServerContext,
  trx: Transaction<DB>,
  pushes: ReadonlyArray<{ device: AcsDevice; events: readonly StoredDeviceEvent[] }>,
): Promise<Array<Map<string, DecisionReason | null>>> {
  const out = pushes.map(() => new Map<string, DecisionReason | null>());
  const decisionsOf = pushes.map((p) =>
    p.events.filter(
      (e) => (e.kind === 'identifier_used' || e.kind === 'identifier_refused') && e.identifier_number,
    ),
  );
  if (!decisionsOf.some((d) => d.length)) return out;
  // the identifiers the pushes name, one statement per project (a push names its device's project)
  const pairsOf = new Map<number, Set<string>>();
  pushes.forEach((p, k) => {
    for (const e of decisionsOf[k]!) {
      const set = pairsOf.get(p.device.project_id) ?? new Set<string>();
      set.add(`${e.identifier_type ?? 'card'}:${e.identifier_number}`);
      pairsOf.set(p.device.project_id, set);
    }
  });
  const known = new Map<string, KnownIdentifier>();
  for (const [projectId, pairs] of pairsOf) {
    const found = await sql<KnownIdentifier>`
      select i.id, i.name, i.type, i.value, i.owner_type, i.owner, u.name as owner_name, i.is_active,
        i.period_restrict_active, i.period_restrict_from_u, i.period_restrict_to_u, i.passes_restrict_active,
        i.passes_restrict_max_count, i.passes_count
      from identifiers i left join users u on u.id = i.owner
      where i.project_id = ${projectId}
        and (i.type || ':' || i.value) in (${sql.join([...pairs])})`.execute(trx);
    for (const r of found.rows) known.set(`${projectId}:${r.type}:${r.value}`, r);
  }
  const accessOf = new Map<number, ProjectAccess>();
  const accessNow = async (projectId: number) => {
    let a = accessOf.get(projectId);
    if (!a) accessOf.set(projectId, (a = await app.accessSync.access(trx, projectId)));
    return a;
  };
  const passes = new Map<number, number>();
  /** the same passes by identifier and device (`{identifier}:{device}`) */
  const passesAt = new Map<string, number>();
  const decided: Array<{
    device: AcsDevice;
    e: StoredDeviceEvent;
    i: KnownIdentifier | undefined;
    granted: boolean;
    reason: DecisionReason | null;
    rule: number | null;
  }> = [];
  for (const [k, { device }] of pushes.entries()) {
    const decisions = decisionsOf[k]!;
    if (!decisions.length) continue;
    const reasons = out[k]!;
    const identify = (e: StoredDeviceEvent) =>
      known.get(`${device.project_id}:${e.identifier_type ?? 'card'}:${e.identifier_number}`);
    const mine = [...new Set(decisions.map(identify).filter((i) => i !== undefined))];
    // the identifiers' last passages in the anti-passback areas of this device, before this push; each granted
    // passage of the push is added as it is read (a second entry in the same push is seen)
    const areaData = mine.length ? await accessNow(device.project_id) : null;
    const areas = areaData ? areasAt(areaData.areas, device.id) : [];
    const last = areas.length
      ? await lastPassages(
          trx,
          device.project_id,
          mine.map((r) => Number(r.id)),
          areas,
          new Date(Math.max(...decisions.map((e) => new Date(e.created_at).getTime()))),
        )
      : new Map<number, Map<number, Passage>>();
    for (const e of decisions) {
      const granted = e.kind === 'identifier_used' && (e.result === null || e.result === 'granted');
      const i = identify(e);
      let reason: DecisionReason | null = granted ? null : (reasonFromDevice(e.reason) ?? 'no_access_rule');
      let rule: number | null = null;
      if (i) {
        // what the platform decides for it at that device and time (its rule, or why not)
        const data = await accessNow(device.project_id);
        const cached = data.identifiers.get(Number(i.id));
        if (cached) {
          // the rules as last read; the identifier as it is now (a revoke is seen at once)
          const identifier = {
            ...cached,
            is_active: i.is_active,
            period_restrict_active: i.period_restrict_active,
            period_restrict_from_u: iso(i.period_restrict_from_u),
            period_restrict_to_u: iso(i.period_restrict_to_u),
            passes_restrict_active: i.passes_restrict_active,
            passes_restrict_max_count: Number(i.passes_restrict_max_count),
            // the passes before this one: the device decided before counting it
            passes_count: Number(i.passes_count) + (passes.get(Number(i.id)) ?? 0),
          };
          const d = decide(identifier, device.id, new Date(e.created_at), data.index, {
            tz: data.tz,
            holidays: holidayDays(data.holidaysAt(device.id)),
            groups: identifier.groups,
            lastPassages: last.get(Number(i.id)),
          });
          rule = d.rule;
          // a device that did not hold it knows no more than that: the platform names the reason
          if (!granted && e.reason === 'unknown' && !d.allowed && d.reason) reason = d.reason;
          // a device lets pass by its own holding: anti-passback is the server's (the rule still allowed it)
          if (granted && !d.allowed && d.reason !== 'anti_passback') rule = null;
        }
        if (granted) {
          passes.set(Number(i.id), (passes.get(Number(i.id)) ?? 0) + 1);
          const at = `${Number(i.id)}:${device.id}`;
          passesAt.set(at, (passesAt.get(at) ?? 0) + 1);
          if (areas.length) {
            const seen = last.get(Number(i.id)) ?? new Map<number, Passage>();
            last.set(Number(i.id), seen);
            passed(seen, areas, device.id, new Date(e.created_at).getTime());
          }
        }
      }
      reasons.set(e.event_id, reason);
      decided.push({ device, e, i, granted, reason, rule });
    }
  }
  // the rules' names in one statement (a push of 100 events costs what a push of one does)
  const ruleIds = [...new Set(decided.map((d) => d.rule).filter((r): r is number => r !== null))];
  const ruleNames = new Map(
    ruleIds.length
      ? (
          await sql<{
            id: number;
            name: string;
          }>`select id, name from access_rules where id in (${sql.join(ruleIds)})`.execute(trx)
        ).rows.map((r) => [Number(r.id), r.name])
      : [],
  );
  const now = app.clock.now();
  const rows = decided.map(
    ({ device, e, i, granted, reason, rule }) => sql`(${device.project_id}, ${new Date(e.created_at)},
      ${now}, ${device.id}, ${device.serial_number}, ${device.domain_id}, ${i ? Number(i.id) : null},
      ${i?.name ?? null}, ${e.identifier_type}, ${e.identifier_number}, ${i?.owner ?? null},
      ${i ? (i.owner_type === 'guest' ? i.name || 'Guest identifier' : (i.owner_name ?? null)) : null},
      ${i ? i.owner_type : null}, ${granted ? 'granted' : 'denied'}, ${reason}, ${rule},
      ${rule === null ? null : (ruleNames.get(rule) ?? null)}, ${e.lock}, ${e.event_id})`,
  );
  const inserted = await sql<{
    id: number;
    project_id: number;
    device_id: number;
    identifier_id: number | null;
    decision: 'granted' | 'denied';
    reason: string | null;
    created_at: Date;
  }>`insert into acs_events (project_id, created_at, received_at, device_id, serial_number, domain_id,
      identifier_id, identifier_name, identifier_type, identifier_number, owner_id, owner_name, owner_type,
      decision, reason, rule_id, rule_name, lock, event_id)
    values ${sql.join(rows)}
    on conflict on constraint acs_events_device_event do nothing
    returning id, project_id, device_id, identifier_id, decision, reason, created_at`.execute(trx);
  // in the order of the values (identities are drawn in that order)
  inserted.rows.sort((a, b) => Number(a.id) - Number(b.id));
  // the passes the devices counted (the decision's `passes_count`) and, in the same statement, each device's
  // own count of them (`identifier_device_passes`): what a device must hold of a pass limit is the limit less
  // the passes counted elsewhere (migration 0081's trigger plans the identifier's other devices again)
  if (passesAt.size)
    await sql`with v(id, device, n) as (values ${sql.join(
      [...passesAt].map(([at, n]) => {
        const [id, device] = at.split(':').map(Number);
        return sql`(${id}::int, ${device}::int, ${n}::int)`;
      }),
    )}),
      counted as (update identifiers set passes_count = passes_count + t.n
        from (select id, sum(n)::int as n from v group by id) as t
        where identifiers.id = t.id returning identifiers.id)
      insert into identifier_device_passes (identifier_id, device_id, passes)
        select v.id, v.device, v.n from v join counted c on c.id = v.id
      on conflict (identifier_id, device_id) do update
        set passes = identifier_device_passes.passes + excluded.passes`.execute(trx);
  await app.outbox.emitMany(
    trx,
    AcsEventCreatedEvent,
    inserted.rows.map((r) => ({
      eventId: Number(r.id),
      deviceId: Number(r.device_id),
      projectId: Number(r.project_id),
      identifierId: r.identifier_id === null ? null : Number(r.identifier_id),
      decision: r.decision,
      reason: r.reason,
      at: new Date(r.created_at).toISOString(),
    })),
  );
  return out;
}

/** A project's access control, read again when it changed (the planner ran) or after `ttlMs`. */
export class AccessCache {
  private readonly entries = new Map<number, { data: ProjectAccess; at: number }>();
  constructor(private readonly ttlMs = 5000) {}

  async get(q: Transaction<DB> | ServerContext['db'], projectId: number): Promise<ProjectAccess> {
    const e = this.entries.get(projectId);
    if (e && Date.now() - e.at < this.ttlMs) return e.data;
    const data = await loadProjectAccess(q, projectId);
    this.entries.set(projectId, { data, at: Date.now() });
    return data;
  }

  forget(projectId: number): void {
    this.entries.delete(projectId);
  }
}

/**
 * A door the server opened for an identifier after its own decision (a guest pass's door): an ACS event as a
 * device's would be, granted, naming the rule — so the ACS log shows it and anti-passback counts the passage.
 */
export async function recordOpening(
  app: ServerContext,
  q: Transaction<DB> | ServerContext['db'],
  o: {
    projectId: number;
    deviceId: number;
    identifier: {
      id: number;
      name: string;
      type: string;
      value: string;
      owner: number | null;
      guest: boolean;
    };
    rule: number | null;
    lock: number;
    at: Date;
    eventId: string;
  },
): Promise<void> {
  const i = o.identifier;
  const inserted = await sql<{ id: number; created_at: Date }>`
    insert into acs_events (project_id, created_at, received_at, device_id, serial_number, domain_id,
      identifier_id, identifier_name, identifier_type, identifier_number, owner_id, owner_name, owner_type,
      decision, reason, rule_id, rule_name, lock, event_id)
    select ${o.projectId}::int, ${o.at}::timestamptz, ${o.at}::timestamptz, d.id, d.serial_number, d.domain_id,
      ${i.id}::int, ${i.name}::text, ${i.type}::text, ${i.value}::text, ${i.owner}::int,
      ${i.guest ? sql`${i.name || 'Guest identifier'}::text` : sql`(select name from users where id = ${i.owner}::int)`},
      ${i.guest ? 'guest' : 'user'}::text, 'granted', null, ${o.rule}::int,
      (select name from access_rules where id = ${o.rule}::int), ${o.lock}::smallint, ${o.eventId}::text
    from devices d where d.id = ${o.deviceId}
    returning id, created_at`.execute(q);
  await app.outbox.emitMany(
    q,
    AcsEventCreatedEvent,
    inserted.rows.map((r) => ({
      eventId: Number(r.id),
      deviceId: o.deviceId,
      projectId: o.projectId,
      identifierId: i.id,
      decision: 'granted' as const,
      reason: null,
      at: new Date(r.created_at).toISOString(),
    })),
  );
}
