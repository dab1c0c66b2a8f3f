import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { POOL_LIMIT, SerialNumber } from '@lintel/commands';
import type { ServerContext } from '../context';
import { WindowCounter } from './fair-queue';

/** New pool entries one address may announce per hour (issue 20 item 7). */
export const POOL_NEW_PER_ADDRESS_HOUR = 20;
/** How often a waiting device's heartbeats are written (its last contact and count): once a minute. */
export const POOL_REFRESH_MS = 60_000;

interface PoolState {
  /** new entries per address per hour */
  byAddress: WindowCounter;
  /** a serial's last write, by the server's clock */
  written: Map<string, number>;
}
const states = new WeakMap<ServerContext, PoolState>();
function stateOf(app: ServerContext): PoolState {
  let s = states.get(app);
  if (!s)
    states.set(
      app,
      (s = { byAddress: new WindowCounter(POOL_NEW_PER_ADDRESS_HOUR, 3_600_000), written: new Map() }),
    );
  return s;
}

/**
 * A device called the gateway over HTTP (`POST /device-gateway/heartbeat`) with `Basic serial:…` naming a
 * serial number no device has: it is noted in the pool (docs/decisions.md "Device commands, the rest") —
 * once per serial, only a well-formed serial, and never past `POOL_LIMIT` rows. Issue 20 item 7: the entry is
 * bound to the password the first heartbeat carried (its SHA-256): only a heartbeat with the same password
 * refreshes it or changes its address; one address may add at most `POOL_NEW_PER_ADDRESS_HOUR` entries an
 * hour; and a waiting device's heartbeats are written at most once per `POOL_REFRESH_MS`, not each time.
 * The call itself is still refused (401).
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
  const colon = text.indexOf(':');
  const serial = SerialNumber.safeParse(text.slice(0, Math.max(0, colon)));
  if (!serial.success) return;
  const secret = createHash('sha256')
    .update(text.slice(colon + 1))
    .digest('hex');
  const state = stateOf(app);
  const now = app.clock.now();
  const key = `${serial.data}:${secret}`;
  const last = state.written.get(key);
  if (last !== undefined && now.getTime() - last < POOL_REFRESH_MS) return;
  if (state.written.size > 10_000)
    for (const [k, t] of state.written) if (now.getTime() - t >= POOL_REFRESH_MS) state.written.delete(k);
  state.written.set(key, now.getTime());
  const fw = (body as { firmware_version?: unknown } | null)?.firmware_version;
  const firmware = typeof fw === 'string' ? fw.slice(0, 64) : null;
  // a refresh of an entry this password announced
  const refreshed = await sql`update device_pool set contacts = contacts + 1, ip_address = ${ip.slice(0, 45)},
      firmware_version = coalesce(${firmware}, firmware_version), last_seen_at = ${now},
      secret_sha256 = coalesce(secret_sha256, ${secret})
    where serial_number = ${serial.data} and (secret_sha256 = ${secret} or secret_sha256 is null)`.execute(
    app.db,
  );
  if (Number(refreshed.numAffectedRows ?? 0) > 0) return;
  // a new entry: counted against its address first, so one caller cannot fill the pool's places
  if (state.byAddress.hit(ip, now.getTime()) > 0) return;
  await sql`insert into device_pool
      (serial_number, ip_address, firmware_version, first_seen_at, last_seen_at, secret_sha256)
    select ${serial.data}, ${ip.slice(0, 45)}, ${firmware}, ${now}, ${now}, ${secret}
    where not exists (select 1 from devices where serial_number = ${serial.data})
      and (select count(*) from device_pool) < ${POOL_LIMIT}
    on conflict (serial_number) do nothing`.execute(app.db);
}
