import { sql, type Kysely } from 'kysely';
import {
  DeviceEvent,
  deviceEventFields,
  getCommand,
  identifierTypeOf,
  type DeviceLogEntry,
} from '@lintel/commands';
import type { DB } from '../../db/schema';
import { AppError } from '../../errors';
import { journalPlan, journalStore, runJournal } from '../../engine/journal';
import { exportReply } from '../../engine/export';
import { callerOf } from '../../engine/family';
import { scopePredicate, scopesFor, type ScopeRule } from '../../engine/scope';
import { DeviceEventCreatedEvent } from '../../events/define';
import type { HandlerContext, SomeHandlers } from '../../pipeline/handler';
import { authOf, DeviceChangedError } from '../../pipeline/principal';
import { checkGates } from '../../pipeline/dispatch';
import { deviceStore } from '../device/device.store';
import { notifyAboutIdentifiers, notifyAboutIdentifiersOf } from '../../devices/notices';
import { GroupCommit } from '../../devices/group-commit';
import { parkSlot } from '../../devices/fair-queue';
import type { ServerContext } from '../../context';
import {
  PICTURES_DIR,
  pictureName,
  pictureOf,
  pictureUrlKey,
  releasePictures,
  removePictures,
  reservePictures,
  signedPictureUrl,
  writePictures,
} from '../../devices/pictures';
import { recordAccessEvents, recordAccessEventsOf, type StoredDeviceEvent } from '../../access-sync/acs';

interface EventRow {
  id: number;
  created_at: Date;
  received_at: Date;
  device_id: number | null;
  device_name: string | null;
  serial_number: string;
  domain_id: number | null;
  domain_name: string | null;
  kind: DeviceEvent['kind'];
  identifier_type: string | null;
  identifier_number: string | null;
  lock: number | null;
  result: DeviceEvent['result'];
  reason: string | null;
  number: string | null;
  image: string | null;
  event_id: string;
}

async function loadEvents(q: Kysely<DB>, ids: readonly number[]): Promise<DeviceEvent[]> {
  if (!ids.length) return [];
  const rows = await sql<EventRow>`
    select t.id, t.created_at, t.received_at, t.device_id, d.name as device_name, t.serial_number, t.domain_id,
      g.name as domain_name, t.kind, t.identifier_type, t.identifier_number, t.lock, t.result, t.reason,
      t.number, t.image, t.event_id
    from device_events t left join devices d on d.id = t.device_id left join domains g on g.id = t.domain_id
    where t.id in (${sql.join(ids)})`.execute(q);
  const byId = new Map(rows.rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => {
    const r = byId.get(id);
    if (!r) return [];
    return [
      {
        id: r.id,
        created_at: new Date(r.created_at).toISOString(),
        received_at: new Date(r.received_at).toISOString(),
        device: r.device_id !== null ? { id: r.device_id, name: r.device_name ?? r.serial_number } : null,
        serial_number: r.serial_number,
        domain: r.domain_id !== null ? { id: r.domain_id, name: r.domain_name ?? '' } : null,
        kind: r.kind,
        identifier_type: r.identifier_type,
        identifier_number: r.identifier_number,
        lock: r.lock === null ? null : Number(r.lock),
        result: r.result,
        reason: r.reason,
        number: r.number,
        image: r.image ? `/storage/${PICTURES_DIR}/${r.image}` : null,
        event_id: r.event_id,
      },
    ];
  });
}

const column = (name: string) => ({ expr: sql.ref(`t.${name}`) });

/** Device events as a journal: kept LINTEL_DEVICE_EVENTS_RETENTION_DAYS days (default 365). */
export const deviceEventStore = journalStore<DeviceEvent>({
  noun: 'device_event',
  table: 'device_events',
  timeColumn: 'created_at',
  retention: { defaultDays: 365, env: 'LINTEL_DEVICE_EVENTS_RETENTION_DAYS' },
  from: sql`device_events t`,
  filterable: Object.fromEntries(Object.entries(deviceEventFields).filter(([, f]) => f.filterable)),
  sortable: Object.entries(deviceEventFields)
    .filter(([, f]) => f.sortable)
    .map(([k]) => k),
  columns: {
    id: column('id'),
    created_at: column('created_at'),
    received_at: column('received_at'),
    device: column('device_id'),
    domain: column('domain_id'),
    serial_number: column('serial_number'),
    kind: column('kind'),
    identifier_type: column('identifier_type'),
    identifier_number: column('identifier_number'),
    lock: column('lock'),
    result: column('result'),
    reason: column('reason'),
    number: column('number'),
    image: column('image'),
    event_id: column('event_id'),
  },
  search: [sql`t.identifier_number`, sql`t.serial_number`, sql`t.number`],
  load: loadEvents,
  // the retention gives the pictures' room back with their events, and removes their files after the commit
  pruned: {
    returning: ['device_id', 'image', 'image_bytes'],
    inTransaction: (trx, rows) =>
      releasePictures(trx, rows as { device_id: number | null; image_bytes: number | null }[]),
    afterCommit: (config, rows) =>
      removePictures(
        config.storageDir,
        rows.map((r) => (r as { image: string | null }).image),
      ),
  },
});

/**
 * The records' pictures as signed URLs (devices/pictures.ts), good for a short while: only a caller who may
 * read an event is handed its picture's URL, and the console's link works without a bearer header.
 */
async function withPictureUrls(ctx: HandlerContext, records: DeviceEvent[]): Promise<DeviceEvent[]> {
  if (!records.some((r) => r.image)) return records;
  const key = await pictureUrlKey(ctx.app.db);
  const now = ctx.app.clock.now();
  return records.map((r) =>
    r.image ? { ...r, image: signedPictureUrl(key, r.image.slice(r.image.lastIndexOf('/') + 1), now) } : r,
  );
}

/**
 * Who reads which events: the device view scope (all, subtree, own groups) over the group the device was in
 * when it pushed the event; `devices.view_events` alone reaches the caller's own groups.
 */
const eventViewRules: readonly ScopeRule[] = [
  ...deviceStore.scopes.view,
  { permission: 'devices.view_events', scope: 'domain' },
];

async function visible(ctx: HandlerContext) {
  const caller = callerOf(ctx);
  const reach = await scopePredicate(
    caller,
    scopesFor(caller, eventViewRules),
    deviceStore.scopeSql,
    null,
    false,
  );
  return sql<boolean>`t.project_id = ${caller.projectId} and ${reach}`;
}

export const deviceEventHandlers = {
  /** The events of the devices the caller sees, newest first (keyset by time and id). */
  'device_event.list': async (ctx, args) => {
    const page = await runJournal(ctx.app.db, deviceEventStore, args, await visible(ctx));
    return { ...page, data: await withPictureUrls(ctx, page.data) };
  },

  /** The events of the query, all of them, streamed (engine/export.ts). */
  'device_event.export': async (ctx, args) =>
    exportReply(
      ctx.app,
      {
        load: async (q, ids) => withPictureUrls(ctx, await deviceEventStore.load(q, ids)),
        record: DeviceEvent,
      },
      journalPlan(deviceEventStore, args, await visible(ctx)),
      args.format,
    ),

  /**
   * A device's logs: each event stored once by the device's own id, in one transaction, each announced on
   * `private-devices`; the reply (the device's acknowledgement) goes only after the commit. However many
   * events the push carries, the transaction is a constant number of statements (issue 26 item 1): the
   * events in one insert, their outbox rows in one more and one NOTIFY (`emitMany`), the identifiers'
   * notifications likewise (`notifyMany`), and — with pictures — the quota's three.
   */
  'device_gateway.logs': async (ctx, args) => {
    const p = ctx.principal;
    if (p.kind !== 'device') throw new AppError('method_prohibited');
    const app = ctx.app;
    // the device as it was authenticated for this push (its group read then); else read now
    const device =
      p.domainId !== undefined
        ? { id: p.deviceId, serial_number: p.serial, domain_id: p.domainId }
        : (
            await sql<{ id: number; serial_number: string; domain_id: number | null }>`
              select id, serial_number, domain_id from devices where id = ${p.deviceId}`.execute(app.db)
          ).rows[0];
    if (!device) throw new AppError('item_not_found');
    const pictures = args.events.map((e, i) => pictureOf(e, i));
    // with pictures, a device the gateway remembered is read again: what it pushes goes under its group now
    if (p.remembered && pictures.some(Boolean)) {
      const now = (
        await sql<{ project_id: number; serial_number: string; domain_id: number | null; protocol: string }>`
          select project_id, serial_number, domain_id, protocol from devices where id = ${p.deviceId}`.execute(
          app.db,
        )
      ).rows[0];
      if (
        !now ||
        now.project_id !== p.projectId ||
        now.serial_number !== p.serial ||
        now.domain_id !== device.domain_id ||
        now.protocol !== 'mqtt'
      )
        throw new DeviceChangedError(p.deviceId);
    }
    // without pictures (their quotas are a device's own): written with other devices' pushes, group commit
    if (!pictures.some(Boolean)) {
      // waiting for the batch holds no database place: the device queue's place goes to the next message
      parkSlot();
      const { inserted, changed } = await logBatches(app).submit(device.id, {
        device: { ...device, project_id: p.projectId },
        events: args.events,
        remembered: !!p.remembered,
      });
      if (changed) throw new DeviceChangedError(device.id);
      return {
        stored: [...new Set(args.events.map((e) => e.event_id))],
        duplicates: args.events.length - inserted,
      };
    }
    const now = app.clock.now();
    const names = pictures.map((pic) => (pic ? pictureName(pic) : null));
    const row = (e: (typeof args.events)[number], i: number, withPicture: boolean) => {
      // the device's clock, never later than ours (a device whose clock runs ahead would sort above the present)
      const at = e.time ? new Date(Math.min(Date.parse(e.time), now.getTime())) : now;
      return sql`(${p.projectId}, ${device.id}, ${device.serial_number}, ${device.domain_id}, ${at}, ${now},
        ${e.kind}, ${e.identifier_type ? identifierTypeOf(e.identifier_type) : null},
        ${e.identifier_number ?? null}, ${e.lock ?? null}, ${e.result ?? null}, ${e.reason ?? null},
        ${e.number ?? null}, ${withPicture ? names[i] : null},
        ${withPicture ? pictures[i]!.bytes.length : null}, ${e.event_id})`;
    };
    const outcome = await app.db.transaction().execute((trx) =>
      app.outbox.gathered(trx, async () => {
        // the pictures of events not stored before, first within the quotas (a repeated event keeps its own)
        const known = new Set<string>();
        if (pictures.some(Boolean)) {
          const ids = args.events.filter((_, i) => pictures[i]).map((e) => e.event_id);
          const r = await sql<{ event_id: string }>`
          select event_id from device_events where device_id = ${device.id}
            and event_id in (${sql.join(ids)})`.execute(trx);
          for (const x of r.rows) known.add(x.event_id);
        }
        const seen = new Set<string>();
        const candidates = args.events.flatMap((e, i) => {
          if (!pictures[i] || known.has(e.event_id) || seen.has(e.event_id)) return [];
          seen.add(e.event_id);
          return [i];
        });
        const fits = await reservePictures(
          trx,
          app.config.devices,
          device.id,
          candidates.map((i) => pictures[i]!.bytes.length),
        );
        const kept = new Set(candidates.filter((_, k) => fits[k]));
        const refused = candidates.filter((_, k) => !fits[k]).map((i) => args.events[i]!.event_id);
        const r = await sql<StoredDeviceEvent & { id: number; image: string | null }>`
        insert into device_events (project_id, device_id, serial_number, domain_id, created_at, received_at, kind,
          identifier_type, identifier_number, lock, result, reason, number, image, image_bytes, event_id)
        values ${sql.join(args.events.map((e, i) => row(e, i, kept.has(i))))}
        on conflict on constraint device_events_device_event do nothing
        returning id, event_id, created_at, kind, result, reason, identifier_type, identifier_number, lock, image`.execute(
          trx,
        );
        // in the order the device sent them (identities are drawn in that order)
        r.rows.sort((a, b) => a.id - b.id);
        // the files of the pictures stored now; a rolled-back transaction leaves files no row names (harmless)
        const stored = new Set(r.rows.map((x) => x.image).filter(Boolean));
        // room taken for an event a push beside this one stored first is given back
        const raced = [...kept].filter((i) => !stored.has(names[i]!));
        if (raced.length)
          await releasePictures(
            trx,
            raced.map((i) => ({ device_id: device.id, image_bytes: pictures[i]!.bytes.length })),
          );
        await writePictures(
          app.config.storageDir,
          [...kept]
            .filter((i) => stored.has(names[i]!))
            .map((i) => ({ name: names[i]!, bytes: pictures[i]!.bytes })),
        );
        await app.outbox.emitMany(
          trx,
          DeviceEventCreatedEvent,
          r.rows.map((x) => ({
            eventId: x.id,
            deviceId: device.id,
            projectId: p.projectId,
            domainId: device.domain_id,
            kind: x.kind,
            result: x.result,
            at: new Date(x.created_at).toISOString(),
          })),
        );
        // the decisions at the door: the ACS log (access-sync/acs.ts), with the reasons the platform knows
        const reasons = await recordAccessEvents(app, trx, { ...device, project_id: p.projectId }, r.rows);
        // identifiers used: the ACS notifications, for the events stored now only (a repeat tells no one again)
        await notifyAboutIdentifiers(
          app,
          trx,
          { ...device, project_id: p.projectId },
          // a panel's "unknown" for a card the platform knows revoked is the revoked card's notice
          r.rows.map((row) =>
            reasons.get(row.event_id) === 'identifier_revoked'
              ? { ...row, reason: 'identifier_revoked' }
              : row,
          ),
        );
        return { inserted: r.rows.length, refused };
      }),
    );
    return {
      stored: [...new Set(args.events.map((e) => e.event_id))],
      duplicates: args.events.length - outcome.inserted,
      ...(outcome.refused.length ? { pictures_refused: outcome.refused } : {}),
    };
  },
} satisfies SomeHandlers;

type LogEvent = DeviceLogEntry;
/**
 * A push written: its events stored now, and whether it was taken for a device whose row is no longer the one
 * it names (`changed`: removed, or its serial number, project or group changed; nothing of it stored).
 */
interface LogPushStored {
  inserted: number;
  changed: boolean;
}
interface LogPush {
  device: { id: number; serial_number: string; domain_id: number | null; project_id: number };
  events: readonly LogEvent[];
  /** taken by the MQTT gateway for the device as it remembered it: the device must still speak MQTT */
  remembered: boolean;
}

/**
 * The pushes of several devices (without pictures) in ONE transaction, in a constant number of statements
 * however many pushes and events (issue 26 item 1, group commit): their events in one insert, the ACS events
 * (`recordAccessEventsOf`) and the identifiers' notices (`notifyAboutIdentifiersOf`) for them all, and every
 * outbox row in one insert with one NOTIFY (`outbox.gathered`). The events stored, push by push.
 */
async function writeLogs(app: ServerContext, pushes: readonly LogPush[]): Promise<LogPushStored[]> {
  const now = app.clock.now();
  // the events as columns (issue 26 item 1): the insert is one statement of 13 arrays, whatever the batch's
  // size — a row of values each was 16 parameters an event for the server to compile and send and for the
  // database to parse and plan. Kept beside them, what the ACS log and the outbox need of each stored event.
  const c = {
    project: [] as number[],
    device: [] as number[],
    serial: [] as string[],
    domain: [] as (number | null)[],
    at: [] as string[],
    kind: [] as string[],
    itype: [] as (string | null)[],
    inumber: [] as (string | null)[],
    lock: [] as (number | null)[],
    result: [] as (string | null)[],
    reason: [] as (string | null)[],
    number: [] as (string | null)[],
    event: [] as string[],
  };
  /** the devices of the pushes the MQTT gateway took as it remembered them: set to http since, they are changed */
  const remembered = pushes.filter((q) => q.remembered).map((q) => q.device.id);
  /** what was sent, by device and the device's event id (the first of a repeat is the one stored) */
  const sent = new Map<string, StoredDeviceEvent>();
  for (const { device, events } of pushes)
    for (const e of events) {
      // the device's clock, never later than ours (a device whose clock runs ahead would sort above the present)
      const at = e.time ? new Date(Math.min(Date.parse(e.time), now.getTime())) : now;
      const row: StoredDeviceEvent = {
        event_id: e.event_id,
        created_at: at,
        kind: e.kind,
        result: e.result ?? null,
        reason: e.reason ?? null,
        identifier_type: e.identifier_type ? identifierTypeOf(e.identifier_type) : null,
        identifier_number: e.identifier_number ?? null,
        lock: e.lock ?? null,
      };
      const key = `${device.id}:${e.event_id}`;
      if (!sent.has(key)) sent.set(key, row);
      c.project.push(device.project_id);
      c.device.push(device.id);
      c.serial.push(device.serial_number);
      c.domain.push(device.domain_id);
      c.at.push(at.toISOString());
      c.kind.push(row.kind);
      c.itype.push(row.identifier_type);
      c.inumber.push(row.identifier_number);
      c.lock.push(row.lock);
      c.result.push(row.result);
      c.reason.push(row.reason);
      c.number.push(e.number ?? null);
      c.event.push(e.event_id);
    }
  // the outbox's rows are delivered once this unit's transaction committed, before the devices are answered
  return app.outbox.transaction(app.db, (trx) =>
    app.outbox.gathered(trx, async () => {
      // in the order sent (ordinality): identities are drawn in that order; a repeat stores nothing
      const inserted = await sql<{ id: number; device_id: number; event_id: string }>`
          insert into device_events (project_id, device_id, serial_number, domain_id, created_at, received_at,
            kind, identifier_type, identifier_number, lock, result, reason, number, event_id)
          select e.project_id, e.device_id, e.serial_number, e.domain_id, e.created_at, ${now}, e.kind,
            e.identifier_type, e.identifier_number, e.lock, e.result, e.reason, e.number, e.event_id
          from unnest(${c.project}::int[], ${c.device}::int[], ${c.serial}::text[], ${c.domain}::int[],
            ${c.at}::timestamptz[], ${c.kind}::text[], ${c.itype}::text[], ${c.inumber}::text[],
            ${c.lock}::smallint[], ${c.result}::text[], ${c.reason}::text[], ${c.number}::text[],
            ${c.event}::text[])
            with ordinality as e(project_id, device_id, serial_number, domain_id, created_at, kind,
              identifier_type, identifier_number, lock, result, reason, number, event_id, n)
          -- the device as the push was taken for it (the gateway may not have read it for this push)
          join devices d on d.id = e.device_id and d.project_id = e.project_id
            and d.serial_number = e.serial_number and d.domain_id is not distinct from e.domain_id
            and (d.protocol = 'mqtt' or d.id <> all(${remembered}::int[]))
          order by e.n
          on conflict on constraint device_events_device_event do nothing
          returning id, device_id, event_id`.execute(trx);
      const r = {
        rows: inserted.rows.map((x) => ({
          ...sent.get(`${x.device_id}:${x.event_id}`)!,
          id: Number(x.id),
          device_id: Number(x.device_id),
        })),
      };
      // in the order the devices sent them (identities are drawn in that order)
      r.rows.sort((a, b) => a.id - b.id);
      const devices = new Map(pushes.map((q) => [q.device.id, q.device]));
      const byDevice = new Map<number, typeof r.rows>();
      for (const x of r.rows) {
        const list = byDevice.get(Number(x.device_id)) ?? [];
        list.push(x);
        byDevice.set(Number(x.device_id), list);
      }
      await app.outbox.emitMany(
        trx,
        DeviceEventCreatedEvent,
        r.rows.map((x) => {
          const device = devices.get(Number(x.device_id))!;
          return {
            eventId: x.id,
            deviceId: device.id,
            projectId: device.project_id,
            domainId: device.domain_id,
            kind: x.kind,
            result: x.result,
            at: new Date(x.created_at).toISOString(),
          };
        }),
      );
      const stored = pushes.map(({ device }) => ({ device, events: byDevice.get(device.id) ?? [] }));
      // the decisions at the door: the ACS log (access-sync/acs.ts), with the reasons the platform knows
      const reasons = await recordAccessEventsOf(app, trx, stored);
      // identifiers used: the ACS notifications, for the events stored now only (a repeat tells no one again)
      await notifyAboutIdentifiersOf(
        app,
        trx,
        stored.map(({ device, events }, k) => ({
          device,
          // a panel's "unknown" for a card the platform knows revoked is the revoked card's notice
          events: events.map((row) =>
            reasons[k]!.get(row.event_id) === 'identifier_revoked'
              ? { ...row, reason: 'identifier_revoked' }
              : row,
          ),
        })),
      );
      // a push that stored nothing sent events stored before, or was taken for a device changed since
      const none = stored.filter((x) => !x.events.length).map((x) => x.device);
      const unchanged = new Set<number>();
      if (none.length)
        for (const r of (
          await sql<{ id: number }>`
              select d.id from unnest(${none.map((d) => d.id)}::int[], ${none.map((d) => d.project_id)}::int[],
                ${none.map((d) => d.serial_number)}::text[], ${none.map((d) => d.domain_id)}::int[])
                as e(id, project_id, serial_number, domain_id)
              join devices d on d.id = e.id and d.project_id = e.project_id
                and d.serial_number = e.serial_number and d.domain_id is not distinct from e.domain_id
                and (d.protocol = 'mqtt' or d.id <> all(${remembered}::int[]))`.execute(trx)
        ).rows)
          unchanged.add(Number(r.id));
      return stored.map((x) => ({
        inserted: x.events.length,
        changed: !x.events.length && !unchanged.has(x.device.id),
      }));
    }),
  );
}

/** Each server's group commit of device events (one per context: tests run several servers in a process). */
const batchers = new WeakMap<ServerContext, GroupCommit<LogPush, LogPushStored>>();
function logBatches(app: ServerContext): GroupCommit<LogPush, LogPushStored> {
  let b = batchers.get(app);
  if (!b) {
    b = new GroupCommit((pushes) => writeLogs(app, pushes), {
      // one batch at a time, on PostgreSQL too: what arrives while a batch is written makes the next one, whole.
      // Each statement is a round trip costing the server 60–80 µs of CPU here whatever it carries, and a
      // second batch beside the first halved the batches: at 1,600 events a second, two at once cost the
      // database 0.41 ms an event against 0.30–0.33 for one, and p99 was 191–203 ms against 83–99
      // (docs/decisions.md, "Group commit: one batch at a time")
      concurrency: 1,
      maxItems: 200,
      maxWeight: 2000,
      weight: (p) => p.events.length,
    });
    batchers.set(app, b);
  }
  return b;
}

/**
 * Whether a signed-in principal may read the event a picture belongs to: the events list's gates, then the
 * event's view scope (the journal's own predicate). A user who cannot see the device does not get its picture.
 */
export async function pictureReadable(
  app: HandlerContext['app'],
  principal: HandlerContext['principal'],
  name: string,
  caller: HandlerContext['caller'],
): Promise<boolean> {
  const auth = authOf(principal);
  if (!auth) return false;
  try {
    await checkGates(app, getCommand('device_event.list'), auth, caller);
  } catch {
    return false;
  }
  const ctx: HandlerContext = { app, caller, auth, principal };
  const r = await sql<{ one: number }>`
    select 1 as one from device_events t where t.image = ${name} and ${await visible(ctx)} limit 1`.execute(
    app.db,
  );
  return r.rows.length > 0;
}
