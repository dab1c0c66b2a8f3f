import { sql } from 'kysely';
import type { ServerContext } from '../context';
import { audit } from '../audit/audit';

/**
 * IP blocking (issue 24 item 4): per service, an address that failed `max_failures` times within `window_s`
 * is banned for `ban_time_s`; a whitelisted address (one address, a range or a prefix) is never banned and
 * never counted. Everything is in the database (tables of migration 0065 and the `rate_limits` counters), so
 * instances on one PostgreSQL share the bans: a ban written by one refuses the next attempt on any other.
 *
 * Who feeds it: the console's sign-in (auth/throttle.ts: its address counter is the failure count, cause
 * `auth_failed`); the SIP server's authentication failures call `recordFailure(app, 'sip', ip, cause)` — the
 * hook the telephony work wires to Kamailio's failed registrations (`auth_failed`) and calls to numbers that
 * do not exist (`wrong_number`). docs/decisions.md "Administration".
 */
export type IpService = 'console' | 'sip';
export type BlockCause = 'unknown' | 'auth_failed' | 'wrong_number';

export interface IpBlockingSettings {
  enabled: boolean;
  max_failures: number;
  window_s: number;
  ban_time_s: number;
}

/** An IPv4 address as IPv6 maps it (`::ffff:10.0.0.1`) is that IPv4 address. */
export function normalizeIp(ip: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  return m ? m[1]! : ip;
}

/** The settings of a service: its row, else the defaults (the console's are the login throttle's). */
export async function blockingSettings(app: ServerContext, service: IpService): Promise<IpBlockingSettings> {
  const r = await sql<IpBlockingSettings>`
    select enabled, max_failures, window_s, ban_time_s from ip_blocking_settings where service = ${service}`.execute(
    app.db,
  );
  return r.rows[0] ?? defaultSettings(app, service);
}

export function defaultSettings(app: ServerContext, service: IpService): IpBlockingSettings {
  const { blockAfter, windowS } = app.config.login;
  return service === 'console'
    ? { enabled: true, max_failures: blockAfter, window_s: windowS, ban_time_s: windowS }
    : { enabled: true, max_failures: 5, window_s: 600, ban_time_s: 3600 };
}

export interface Guard {
  settings: IpBlockingSettings;
  whitelisted: boolean;
  /** seconds the ban has left, 0 when the address is not banned */
  bannedForS: number;
}

/** What the service must do with an address now: one statement for the ban and the whitelist. */
export async function guardOf(app: ServerContext, service: IpService, rawIp: string): Promise<Guard> {
  const ip = normalizeIp(rawIp);
  const now = app.clock.now();
  const settings = await blockingSettings(app, service);
  const r = await sql<{ until: Date | string | null; white: boolean }>`
    select
      (select banned_until from ip_bans where service = ${service} and ip = ${ip}::inet and banned_until > ${now}) as until,
      exists (select 1 from ip_whitelist where service = ${service}
        and family(start_ip) = family(${ip}::inet) and ${ip}::inet between start_ip and end_ip) as white`.execute(
    app.db,
  );
  const row = r.rows[0]!;
  const until = row.until === null ? 0 : new Date(row.until).getTime();
  return {
    settings,
    whitelisted: row.white,
    // a ban of a whitelisted address (whitelisted after it was banned) does not hold
    bannedForS:
      settings.enabled && !row.white && until ? Math.max(1, Math.ceil((until - now.getTime()) / 1000)) : 0,
  };
}

/** Bans an address of a service for its ban time (a ban already there is extended and its cause kept fresh). */
export async function banAddress(
  app: ServerContext,
  service: IpService,
  rawIp: string,
  cause: BlockCause,
  failures: number,
  settings: IpBlockingSettings,
): Promise<number> {
  const ip = normalizeIp(rawIp);
  const now = app.clock.now();
  const until = new Date(now.getTime() + settings.ban_time_s * 1000);
  await sql`
    insert into ip_bans (service, ip, cause, failures, banned_at, banned_until)
    values (${service}, ${ip}::inet, ${cause}, ${failures}, ${now}, ${until})
    on conflict (service, ip) do update set cause = excluded.cause, failures = excluded.failures,
      banned_at = case when ip_bans.banned_until <= ${now} then excluded.banned_at else ip_bans.banned_at end,
      banned_until = excluded.banned_until`.execute(app.db);
  // the ban takes over from the failures' counter: its window now ends with the ban, so once the ban ends the
  // address starts afresh. It is not deleted: an attempt that passed the ban check just before the ban was
  // written would count from 1 again and be evaluated (parallel guesses beyond the limit)
  await sql`update rate_limits set window_end = ${until}
    where key = any(${counterKeys(service, ip)}::text[])`.execute(app.db);
  await audit(app.db, {
    projectId: null,
    userId: null,
    action: 'ip_banned',
    ip,
    data: { service, cause, failures, seconds: settings.ban_time_s },
  });
  return settings.ban_time_s;
}

/**
 * One failure of an address at a service (the SIP server's hook): counted in its window unless the address
 * is whitelisted or blocking is off; at `max_failures` the address is banned. Answers whether it is banned.
 */
export async function recordFailure(
  app: ServerContext,
  service: IpService,
  rawIp: string,
  cause: BlockCause,
): Promise<{ banned: boolean; failures: number }> {
  const ip = normalizeIp(rawIp);
  const guard = await guardOf(app, service, ip);
  if (!guard.settings.enabled || guard.whitelisted) return { banned: false, failures: 0 };
  if (guard.bannedForS) return { banned: true, failures: 0 };
  const now = app.clock.now();
  const end = new Date(now.getTime() + guard.settings.window_s * 1000);
  const key = `ip_block:${service}:${ip}`;
  const r = await sql<{ count: number }>`
    insert into rate_limits (key, window_start, window_end, count) values (${key}, ${now}, ${end}, 1)
    on conflict (key) do update set
      count = case when rate_limits.window_end <= ${now} then 1 else rate_limits.count + 1 end,
      window_start = case when rate_limits.window_end <= ${now} then ${now} else rate_limits.window_start end,
      window_end = case when rate_limits.window_end <= ${now} then ${end} else rate_limits.window_end end
    returning count`.execute(app.db);
  const failures = Number(r.rows[0]!.count);
  if (failures < guard.settings.max_failures) return { banned: false, failures };
  await banAddress(app, service, ip, cause, failures, guard.settings);
  return { banned: true, failures };
}

/** The counters a service keeps for an address: cleared with its ban, so an unbanned address starts afresh. */
function counterKeys(service: IpService, ip: string): string[] {
  return service === 'console' ? [`login_address:${ip.toLowerCase()}`] : [`ip_block:${service}:${ip}`];
}

/** Lifts bans (all of a service, or these addresses); answers how many were lifted. */
export async function unban(
  app: ServerContext,
  services: IpService[],
  ips: string[] | null,
): Promise<number> {
  let n = 0;
  for (const service of services) {
    const list = ips?.map(normalizeIp) ?? null;
    const r = await sql<{ ip: string; active: boolean }>`
      delete from ip_bans where service = ${service}
        ${list === null ? sql`` : sql`and ip = any(${list}::inet[])`}
      returning host(ip) as ip, banned_until > ${app.clock.now()} as active`.execute(app.db);
    n += r.rows.filter((x) => x.active).length;
    const addresses = new Set([...(list ?? []), ...r.rows.map((x) => x.ip)]);
    const keys = [...addresses].flatMap((ip) => counterKeys(service, ip));
    if (keys.length) await sql`delete from rate_limits where key = any(${keys}::text[])`.execute(app.db);
  }
  return n;
}
