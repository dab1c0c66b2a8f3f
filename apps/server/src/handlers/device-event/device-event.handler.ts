import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import {
  DEVICE_EVENT_IMAGE_MAX_BYTES,
  DeviceEvent,
  deviceEventFields,
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
import { deviceStore } from '../device/device.store';
import { notifyAboutIdentifiers } from '../../devices/notices';
import { recordAccessEvents } from '../../access-sync/acs';

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
        image: r.image ? `/storage/logs/${r.image}` : null,
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
});

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

/** A picture a device attached: JPEG or PNG by its first bytes, within the size; else `invalid_file`. */
function pictureOf(entry: DeviceLogEntry, index: number): { bytes: Buffer; ext: string } | null {
  if (entry.image === undefined) return null;
  const bytes = Buffer.from(entry.image, 'base64');
  const field = `events.${index}.image`;
  if (bytes.length > DEVICE_EVENT_IMAGE_MAX_BYTES)
    throw new AppError('invalid_file', { field, max: DEVICE_EVENT_IMAGE_MAX_BYTES });
  if (bytes.length > 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff)
    return { bytes, ext: 'jpg' };
  if (bytes.length > 8 && bytes.subarray(0, 8).equals(Buffer.from([137, 80, 78, 71, 13, 10, 26, 10])))
    return { bytes, ext: 'png' };
  throw new AppError('invalid_file', { field });
}

export const deviceEventHandlers = {
  /** The events of the devices the caller sees, newest first (keyset by time and id). */
  'device_event.list': async (ctx, args) =>
    runJournal(ctx.app.db, deviceEventStore, args, await visible(ctx)),

  /** The events of the query, all of them, streamed (engine/export.ts). */
  'device_event.export': async (ctx, args) =>
    exportReply(
      ctx.app,
      { load: deviceEventStore.load, record: DeviceEvent },
      journalPlan(deviceEventStore, args, await visible(ctx)),
      args.format,
    ),

  /**
   * A device's logs: each event stored once by the device's own id, in one transaction, each announced on
   * `private-devices`; the reply (the device's acknowledgement) goes only after the commit.
   */
  'device_gateway.logs': async (ctx, args) => {
    const p = ctx.principal;
    if (p.kind !== 'device') throw new AppError('method_prohibited');
    const app = ctx.app;
    const device = (
      await sql<{ id: number; serial_number: string; domain_id: number | null }>`
        select id, serial_number, domain_id from devices where id = ${p.deviceId}`.execute(app.db)
    ).rows[0];
    if (!device) throw new AppError('item_not_found');
    const pictures = args.events.map((e, i) => pictureOf(e, i));
    const now = app.clock.now();
    const names = pictures.map((pic) => (pic ? `${randomBytes(12).toString('hex')}.${pic.ext}` : null));
    const rows = args.events.map((e, i) => {
      // the device's clock, never later than ours (a device whose clock runs ahead would sort above the present)
      const at = e.time ? new Date(Math.min(Date.parse(e.time), now.getTime())) : now;
      return sql`(${p.projectId}, ${device.id}, ${device.serial_number}, ${device.domain_id}, ${at}, ${now},
        ${e.kind}, ${e.identifier_type ? identifierTypeOf(e.identifier_type) : null},
        ${e.identifier_number ?? null}, ${e.lock ?? null}, ${e.result ?? null}, ${e.reason ?? null},
        ${e.number ?? null}, ${names[i]}, ${e.event_id})`;
    });
    const inserted = await app.db.transaction().execute(async (trx) => {
      const r = await sql<{
        id: number;
        event_id: string;
        created_at: Date;
        kind: string;
        result: string | null;
        reason: string | null;
        identifier_type: string | null;
        identifier_number: string | null;
        lock: number | null;
      }>`
        insert into device_events (project_id, device_id, serial_number, domain_id, created_at, received_at, kind,
          identifier_type, identifier_number, lock, result, reason, number, image, event_id)
        values ${sql.join(rows)}
        on conflict on constraint device_events_device_event do nothing
        returning id, event_id, created_at, kind, result, reason, identifier_type, identifier_number, lock`.execute(
        trx,
      );
      // the pictures of the events stored now (a repeated event keeps the one it has)
      const fresh = new Set(r.rows.map((row) => row.event_id));
      const dir = path.join(app.config.storageDir, 'logs');
      if (args.events.some((e, i) => names[i] && fresh.has(e.event_id)))
        await fs.mkdir(dir, { recursive: true });
      for (const [i, e] of args.events.entries()) {
        const name = names[i];
        const pic = pictures[i];
        if (name && pic && fresh.has(e.event_id)) {
          fresh.delete(e.event_id);
          await fs.writeFile(path.join(dir, name), pic.bytes);
        }
      }
      for (const row of r.rows)
        await app.outbox.emit(trx, DeviceEventCreatedEvent, {
          eventId: row.id,
          deviceId: device.id,
          projectId: p.projectId,
          domainId: device.domain_id,
          kind: row.kind,
          result: row.result,
          at: new Date(row.created_at).toISOString(),
        });
      // the decisions at the door: the ACS log (access-sync/acs.ts), with the reasons the platform knows
      const reasons = await recordAccessEvents(app, trx, { ...device, project_id: p.projectId }, r.rows);
      // identifiers used: the ACS notifications, for the events stored now only (a repeat tells no one again)
      await notifyAboutIdentifiers(
        app,
        trx,
        { ...device, project_id: p.projectId },
        // a panel's "unknown" for a card the platform knows revoked is the revoked card's notice
        r.rows.map((row) =>
          reasons.get(row.event_id) === 'identifier_revoked' ? { ...row, reason: 'identifier_revoked' } : row,
        ),
      );
      return r.rows.length;
    });
    return {
      stored: [...new Set(args.events.map((e) => e.event_id))],
      duplicates: args.events.length - inserted,
    };
  },
} satisfies SomeHandlers;
