import { sql } from 'kysely';
import { POOL_LIMIT, SerialNumber } from '@lintel/commands';
import type { ServerContext } from '../context';

/**
 * A device called the gateway over HTTP (`POST /device-gateway/heartbeat`) with `Basic serial:…` naming a
 * serial number no device has: it is noted in the pool (docs/decisions.md "Device commands, the rest") —
 * once per serial (later calls count and refresh it), only a well-formed serial, and never past
 * `POOL_LIMIT` rows, so unknown callers cannot grow it without bound. The call itself is still refused (401).
 */
export async function notePoolContact(
  app: ServerContext,
  header: string | undefined,
  ip: string,
  body: unknown,
): Promise<void> {
  const m = /^Basic\s+([A-Za-z0-9+/=]{1,512})$/i.exec(header ?? '');
  if (!m) return;
  const text = Buffer.from(m[1]!, 'base64').toString('utf8');
  const serial = SerialNumber.safeParse(text.slice(0, Math.max(0, text.indexOf(':'))));
  if (!serial.success) return;
  const fw = (body as { firmware_version?: unknown } | null)?.firmware_version;
  const firmware = typeof fw === 'string' ? fw.slice(0, 64) : null;
  const now = app.clock.now();
  await sql`insert into device_pool (serial_number, ip_address, firmware_version, first_seen_at, last_seen_at)
    select ${serial.data}, ${ip.slice(0, 45)}, ${firmware}, ${now}, ${now}
    where not exists (select 1 from devices where serial_number = ${serial.data})
      and ((select count(*) from device_pool) < ${POOL_LIMIT}
        or exists (select 1 from device_pool where serial_number = ${serial.data}))
    on conflict (serial_number) do update set contacts = device_pool.contacts + 1,
      ip_address = excluded.ip_address,
      firmware_version = coalesce(excluded.firmware_version, device_pool.firmware_version),
      last_seen_at = excluded.last_seen_at`.execute(app.db);
}
