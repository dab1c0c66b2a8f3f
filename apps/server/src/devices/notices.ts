import { sql, type Kysely, type Transaction } from 'kysely';
import type { ServerContext } from '../context';
import type { DB } from '../db/schema';
import { deviceStatusRecipients, notify, notifyMany, type Notice } from '../notifications/notify';
import { DeviceEventCreatedEvent } from '../events/define';

/**
 * Tells the users the device's group chain lists in `device_status_notify` for this kind of notice (offline,
 * or a task that failed) — in the caller's transaction, so the notice exists only if the change does.
 */
export async function notifyAboutDevice(
  app: Pick<ServerContext, 'outbox' | 'clock'>,
  trx: Transaction<DB> | Kysely<DB>,
  deviceId: number,
  type: 'device_offline' | 'device_task_failed',
  extra: { status: string; has_error?: boolean },
): Promise<void> {
  const device = (
    await sql<{
      id: number;
      name: string;
      serial_number: string;
      project_id: number;
      group_id: number;
      group_name: string;
    }>`select v.id, v.name, v.serial_number, v.project_id, d.id as group_id, d.name as group_name
       from devices v join domains d on d.id = v.domain_id where v.id = ${deviceId}`.execute(trx)
  ).rows[0];
  if (!device) return;
  const recipients = await deviceStatusRecipients(
    trx,
    device.group_id,
    type === 'device_offline' ? 'notify_about_offline_device' : 'notify_about_device_task_failed',
  );
  if (!recipients.length) return;
  await notify(app, trx, {
    projectId: device.project_id,
    recipients,
    type,
    data: {
      name: device.name,
      ...extra,
      device: { id: device.id, name: device.name, serial_number: device.serial_number },
      group: { id: device.group_id, name: device.group_name },
    },
  });
}

/**
 * The users of project `projectId` an event with this `scope` audience reaches for a row of group `domainId`
 * (events/define.ts `mayReceive`, in SQL over every user): holding one of `require`, and one of `reach`'s
 * permissions whose scope — all, the user's groups and those below them, the user's own groups — takes in
 * the group. A row without a group is reached only by `all`.
 */
export async function usersReaching(
  q: Transaction<DB> | Kysely<DB>,
  projectId: number,
  domainId: number | null,
  audience: ScopeAudience,
): Promise<number[]> {
  const r = await sql<{ id: number }>`${reachingSql(projectId, domainId, audience)} order by u.id`.execute(q);
  return r.rows.map((x) => x.id);
}

type ScopeAudience = {
  require?: readonly string[];
  reach: Readonly<Record<string, 'all' | 'descendants' | 'domain'>>;
};

/** `select u.id, u.project_id, u.profile from users u …` of the users an audience reaches (usersReaching). */
function reachingSql(projectId: number, domainId: number | null, audience: ScopeAudience) {
  const holds = (p: string) => sql<boolean>`r.permissions @> ${JSON.stringify([p])}::jsonb`;
  const reach = Object.entries(audience.reach).map(([p, scope]) => {
    if (scope === 'all') return holds(p);
    if (domainId === null) return sql<boolean>`false`;
    // the user's own groups, or (descendants) a group of his above the row's: the row is in his subtree
    return scope === 'domain'
      ? sql<boolean>`(${holds(p)} and exists (select 1 from user_domains s
          where s.user_id = u.id and s.domain_id = ${domainId}))`
      : sql<boolean>`(${holds(p)} and exists (select 1 from user_domains s
          where s.user_id = u.id and s.domain_id in (select id from up)))`;
  });
  const required = audience.require?.length
    ? sql<boolean>`(${sql.join(audience.require.map(holds), sql` or `)})`
    : sql<boolean>`true`;
  return sql`
    with recursive up(id) as (
      select ${domainId ?? 0}::int
      union
      select d.parent_id from domains d join up on d.id = up.id where d.parent_id is not null
    )
    select u.id, u.project_id, u.profile from users u join roles r on r.id = u.role_id
    where u.project_id = ${projectId} and ${required}
      and (${reach.length ? sql.join(reach, sql` or `) : sql<boolean>`false`})`;
}

/** A stored device event, as much of it as its notification says. */
export interface StoredIdentifierEvent {
  kind: string;
  result: string | null;
  reason: string | null;
  identifier_type: string | null;
  identifier_number: string | null;
  lock: number | null;
}

/**
 * The ACS notification a stored device event makes, if any: an identifier used and granted is
 * `identifier_used`; one refused because it is revoked is `revoked_identifier_used`; anything else none.
 */
export function identifierNoticeOf(
  e: StoredIdentifierEvent,
): 'identifier_used' | 'revoked_identifier_used' | null {
  if (e.kind === 'identifier_used' && (e.result === null || e.result === 'granted')) return 'identifier_used';
  if (e.kind === 'identifier_refused' && (e.reason === 'revoked' || e.reason === 'identifier_revoked'))
    return 'revoked_identifier_used';
  return null;
}

/**
 * Tells of identifiers used at a device (its events just stored, in the caller's transaction): the users who
 * may read the device's events (the audience of DeviceEventCreatedEvent, the journal's scope) and whose
 * settings say `acs: true` (notify() leaves the others out).
 */
export async function notifyAboutIdentifiers(
  app: Pick<ServerContext, 'outbox' | 'clock'>,
  trx: Transaction<DB> | Kysely<DB>,
  device: { id: number; project_id: number; domain_id: number | null },
  events: readonly StoredIdentifierEvent[],
): Promise<void> {
  await notifyAboutIdentifiersOf(app, trx, [{ device, events }]);
}

/**
 * `notifyAboutIdentifiers` for the pushes of several devices in one transaction (the group commit of device
 * events): the recipients and the devices' names read once per project and group, every notice of a project
 * in one insert and one emit (`notifyMany`), whatever the number of pushes.
 */
export async function notifyAboutIdentifiersOf(
  app: Pick<ServerContext, 'outbox' | 'clock'>,
  trx: Transaction<DB> | Kysely<DB>,
  pushes: ReadonlyArray<{
    device: { id: number; project_id: number; domain_id: number | null };
    events: readonly StoredIdentifierEvent[];
  }>,
): Promise<void> {
  const audience = DeviceEventCreatedEvent.audience as ScopeAudience;
  // the pushes with notices, by the project and group of their device (the recipients are theirs)
  const places = new Map<string, { projectId: number; domainId: number | null; devices: Set<number> }>();
  for (const { device, events } of pushes) {
    if (!events.some((e) => identifierNoticeOf(e))) continue;
    const key = `${device.project_id}:${device.domain_id}`;
    const place = places.get(key) ?? {
      projectId: device.project_id,
      domainId: device.domain_id,
      devices: new Set<number>(),
    };
    place.devices.add(device.id);
    places.set(key, place);
  }
  if (!places.size) return;
  type Row = {
    id: number;
    project_id: number;
    profile: unknown;
    device_id: number;
    name: string;
    serial_number: string;
    group_id: number | null;
    group_name: string | null;
  };
  // the recipients (with what notifyMany needs of them) and the devices' names, in one statement a place
  const byDevice = new Map<number, Row[]>();
  for (const place of places.values()) {
    const rows = (
      await sql<Row>`
        with reached as (${reachingSql(place.projectId, place.domainId, audience)})
        select reached.id, reached.project_id, reached.profile, v.id as device_id, v.name, v.serial_number,
          d.id as group_id, d.name as group_name
        from reached cross join devices v left join domains d on d.id = v.domain_id
        where v.id in (${sql.join([...place.devices])})
        order by v.id, reached.id`.execute(trx)
    ).rows;
    for (const r of rows) {
      const list = byDevice.get(Number(r.device_id)) ?? [];
      list.push(r);
      byDevice.set(Number(r.device_id), list);
    }
  }
  // every notice of a project in one insert and one emit (notifyMany), however many events and pushes
  const byProject = new Map<number, { notices: Notice[]; known: Map<number, Row> }>();
  for (const { device, events } of pushes) {
    const rows = byDevice.get(device.id);
    const d = rows?.[0];
    if (!rows || !d) continue;
    const recipients = rows.map((r) => r.id);
    const project = byProject.get(device.project_id) ?? { notices: [], known: new Map<number, Row>() };
    byProject.set(device.project_id, project);
    for (const r of rows) project.known.set(r.id, r);
    for (const e of events) {
      const type = identifierNoticeOf(e);
      if (!type) continue;
      project.notices.push({
        projectId: device.project_id,
        recipients,
        type,
        data: {
          name: d.name,
          ...(e.identifier_type ? { identifier_type: e.identifier_type } : {}),
          ...(e.identifier_number ? { identifier_number: e.identifier_number } : {}),
          ...(e.lock !== null ? { lock: Number(e.lock) } : {}),
          ...(e.reason ? { reason: e.reason } : {}),
          device: { id: device.id, name: d.name, serial_number: d.serial_number },
          ...(d.group_id !== null ? { group: { id: d.group_id, name: d.group_name ?? '' } } : {}),
        },
      });
    }
  }
  for (const { notices, known } of byProject.values())
    if (notices.length)
      await notifyMany(
        app,
        trx,
        notices,
        [...known.values()].sort((a, b) => a.id - b.id),
      );
}
