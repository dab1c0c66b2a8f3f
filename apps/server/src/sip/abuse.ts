/**
 * SIP abuse (issue 22 item 9): the SIP server reports every request whose credentials it refused (a wrong
 * password, a number it does not hold) with the address it came from; the SIP service's IP blocking — the
 * same counters, settings and whitelist as the console's sign-in (security/ip-blocking.ts) — counts it, and
 * past `max_failures` in `window_s` bans the address for `ban_time_s`. The SIP server drops a banned
 * address's requests itself (its `ipban` table, set from the answer, and from `activeSipBans` when it
 * starts or a ban is lifted in Lintel), so a flood costs Lintel nothing once the ban is in place.
 */
import net from 'node:net';
import { sql } from 'kysely';
import type { ServerContext } from '../context';
import { AppError } from '../errors';
import { blockingSettings, guardOf, normalizeIp, recordFailure } from '../security/ip-blocking';

const OWN_ADDRESSES = new Set(['127.0.0.1', '::1']);

/** `sip.auth_failed`: one refused authentication from `ip`; how long the address is banned now ("0": not). */
export async function sipAuthFailed(app: ServerContext, args: { ip: string }): Promise<{ ban_s: string }> {
  const ip = normalizeIp(args.ip.trim());
  if (!net.isIP(ip)) throw new AppError('check_fields_data', { fields: [{ field: 'ip', rule: 'ip' }] });
  // the host's own address is never counted: behind a local reverse proxy every browser's websocket comes
  // from it, and banning it would ban every dialer at once (fail2ban leaves loopback alone for the same reason)
  if (OWN_ADDRESSES.has(ip)) return { ban_s: '0' };
  const r = await recordFailure(app, 'sip', ip, 'auth_failed');
  if (!r.banned) return { ban_s: '0' };
  const guard = await guardOf(app, 'sip', ip);
  if (r.failures) app.log.warn({ ip, failures: r.failures, seconds: guard.bannedForS }, 'SIP address banned');
  return { ban_s: String(guard.bannedForS) };
}

/**
 * The SIP service's bans in force, as the SIP server must hold them: each address with the seconds its ban
 * has left. None while the service's blocking is off; never a whitelisted address.
 */
export async function activeSipBans(app: ServerContext): Promise<Array<{ ip: string; seconds: number }>> {
  const settings = await blockingSettings(app, 'sip');
  if (!settings.enabled) return [];
  const now = app.clock.now();
  const r = await sql<{ ip: string; seconds: number }>`
    select host(b.ip) as ip, ceil(extract(epoch from (b.banned_until - ${now}::timestamptz)))::int as seconds
    from ip_bans b
    where b.service = 'sip' and b.banned_until > ${now}
      and not exists (select 1 from ip_whitelist w where w.service = 'sip'
        and family(w.start_ip) = family(b.ip) and b.ip between w.start_ip and w.end_ip)
    order by b.ip`.execute(app.db);
  return r.rows.map((x) => ({ ip: x.ip, seconds: Math.max(1, Number(x.seconds)) }));
}
