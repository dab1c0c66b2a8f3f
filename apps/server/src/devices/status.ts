import { sql, type Kysely, type Transaction } from 'kysely';
import { DeviceTiming } from '@lintel/core';
import type { ServerContext } from '../context';
import type { DB } from '../db/schema';
import { DeviceStatusChangedEvent } from '../events/define';
import { advance, retryNow } from './tasks';
import { notifyAboutDevice } from './notices';

type Cause = 'heartbeat' | 'status' | 'missed_heartbeats';

interface Row {
  id: number;
  project_id: number;
  domain_id: number;
  serial_number: string;
  name: string;
  status: string;
}

async function emitChange(
  app: ServerContext,
  trx: Transaction<DB> | Kysely<DB>,
  row: Row,
  status: 'online' | 'offline',
  cause: Cause,
  at: Date,
) {
  // the history the home's "devices online over time" reads (migration 0069)
  await sql`insert into device_status_changes (project_id, device_id, status, at)
    values (${row.project_id}, ${row.id}, ${status}, ${at})`.execute(trx);
  await app.outbox.emit(trx, DeviceStatusChangedEvent, {
    deviceId: row.id,
    projectId: row.project_id,
    domainId: row.domain_id,
    serialNumber: row.serial_number,
    status,
    cause,
    at: at.toISOString(),
  });
  // "device offline" to the users its group chain names in device_status_notify (spec part 1 §3 Group), in
  // the same transaction: told exactly when the device is turned offline, by whichever instance turns it
  if (status === 'offline') await notifyOffline(app, trx, row);
}

async function notifyOffline(app: ServerContext, trx: Transaction<DB> | Kysely<DB>, row: Row) {
  await notifyAboutDevice(app, trx, row.id, 'device_offline', { status: 'offline' });
}

/**
 * A sign of life (a heartbeat, or the device saying `online`): the device is online from the server's now,
 * and the change, if it is one, is an event. The row is locked, so two instances that each take one message of
 * the same device agree on which changed it.
 */
export async function markOnline(
  app: ServerContext,
  deviceId: number,
  cause: Cause,
  extra: { firmwareVersion?: string } = {},
): Promise<void> {
  const now = app.clock.now();
  await app.db.transaction().execute(async (trx) => {
    const r =
      await sql<Row>`select id, project_id, domain_id, serial_number, name, status from devices where id = ${deviceId} for update`.execute(
        trx,
      );
    const row = r.rows[0];
    if (!row) return;
    const changed = row.status !== 'online';
    await sql`update devices set status = 'online', last_heartbeat_at = ${now},
      status_changed_at = case when ${changed} then ${now}::timestamptz else status_changed_at end,
      firmware_version = coalesce(${extra.firmwareVersion ?? null}, firmware_version)
      where id = ${deviceId}`.execute(trx);
    if (changed) {
      await emitChange(app, trx, row, 'online', cause, now);
      // its tasks that waited for it are sent now
      await advance(app, trx, deviceId);
    }
    // it says it is here (not a mere heartbeat): a task waiting out a back-off goes now
    if (changed || cause === 'status') await retryNow(app, trx, deviceId);
  });
}

/** The device said it is going (or its broker said so for it: the last will). */
export async function markOffline(app: ServerContext, deviceId: number, cause: Cause): Promise<void> {
  const now = app.clock.now();
  await app.db.transaction().execute(async (trx) => {
    const r = await sql<Row>`update devices set status = 'offline', status_changed_at = ${now}
      where id = ${deviceId} and status <> 'offline'
      returning id, project_id, domain_id, serial_number, name, status`.execute(trx);
    for (const row of r.rows) await emitChange(app, trx, row, 'offline', cause, now);
  });
}

/**
 * Devices whose heartbeats stopped: online, watched by heartbeat, and silent for more than three heartbeat
 * intervals by the server's clock, go offline. One statement, so of several instances sweeping at once each
 * device is turned (and announced) by one.
 */
export async function sweepOffline(app: ServerContext): Promise<number> {
  const now = app.clock.now();
  const cutoff = new Date(now.getTime() - DeviceTiming.heartbeatS * DeviceTiming.missedHeartbeats * 1000);
  return app.outbox.transaction(app.db, async (trx) => {
    const r = await sql<Row>`update devices set status = 'offline', status_changed_at = ${now}
        where status = 'online' and coalesce((management->>'heartbeat')::boolean, true)
          and (last_heartbeat_at is null or last_heartbeat_at < ${cutoff})
        returning id, project_id, domain_id, serial_number, name, status`.execute(trx);
    for (const row of r.rows) await emitChange(app, trx, row, 'offline', 'missed_heartbeats', now);
    return r.rows.length;
  });
}

/** How long the devices' status history is kept (the home's chart reads the last day of it). */
export const STATUS_HISTORY_DAYS = 30;

/** Forgets status changes older than STATUS_HISTORY_DAYS (with the outbox's daily prune). */
export async function pruneStatusChanges(app: ServerContext): Promise<number> {
  const before = new Date(app.clock.now().getTime() - STATUS_HISTORY_DAYS * 86_400_000);
  const r = await sql`delete from device_status_changes where at < ${before}`.execute(app.db);
  return Number(r.numAffectedRows ?? 0);
}
