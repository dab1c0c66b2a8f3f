import { sql, type Kysely, type Transaction } from 'kysely';
import type { ServerContext } from '../context';
import type { DB } from '../db/schema';
import { deviceStatusRecipients, notify } from '../notifications/notify';

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
