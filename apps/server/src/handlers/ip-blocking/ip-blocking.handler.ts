import type { AuditAction } from '@lintel/core';
import { sql } from 'kysely';
import { IpServices, type IpBan, type IpBlockingStatus, type IpWhitelistEntry } from '@lintel/commands';
import { signedIn, type HandlerContext, type SomeHandlers } from '../../pipeline/handler';
import { AppError } from '../../errors';
import { audit } from '../../audit/audit';
import {
  blockingSettings,
  defaultSettings,
  normalizeIp,
  unban,
  type IpService,
} from '../../security/ip-blocking';

const servicesOf = (service: IpService | undefined): IpService[] => (service ? [service] : [...IpServices]);
const iso = (d: Date | string) => new Date(d).toISOString();

async function statusOf(ctx: HandlerContext, service: IpService): Promise<IpBlockingStatus> {
  const s = await blockingSettings(ctx.app, service);
  const now = ctx.app.clock.now();
  const r = await sql<{ banned: number; whitelisted: number }>`
    select (select count(*)::int from ip_bans where service = ${service} and banned_until > ${now}) as banned,
           (select count(*)::int from ip_whitelist where service = ${service}) as whitelisted`.execute(
    ctx.app.db,
  );
  // the console's window is the login throttle's (LINTEL_LOGIN_WINDOW): its counter is the failure count
  const window_s = service === 'console' ? ctx.app.config.login.windowS : s.window_s;
  return { service, ...s, window_s, ...r.rows[0]! };
}

async function whitelist(ctx: HandlerContext, services: IpService[]): Promise<IpWhitelistEntry[]> {
  const r = await sql<{
    id: number;
    service: IpService;
    label: string;
    start_ip: string;
    end_ip: string;
    description: string;
    created_at: Date | string;
  }>`select id, service, label, host(start_ip) as start_ip, host(end_ip) as end_ip, description, created_at
     from ip_whitelist where service = any(${services}::text[]) order by service, start_ip, id`.execute(
    ctx.app.db,
  );
  return r.rows.map((w) => ({ ...w, created_at: iso(w.created_at) }));
}

/** The range an entry covers: `[start, end]` as inet texts (a prefix becomes its first and last address). */
function rangeSql(pattern: string) {
  const slash = pattern.indexOf('/');
  if (slash > 0)
    return sql`select host(network(${pattern}::inet))::inet as s, host(broadcast(${pattern}::inet))::inet as e`;
  const dash = pattern.indexOf('-');
  if (dash > 0)
    return sql`select ${normalizeIp(pattern.slice(0, dash).trim())}::inet as s, ${normalizeIp(pattern.slice(dash + 1).trim())}::inet as e`;
  return sql`select ${normalizeIp(pattern)}::inet as s, ${normalizeIp(pattern)}::inet as e`;
}

/** The SIP server holds the SIP service's bans itself: a change to them, its whitelist or settings reaches it. */
async function toSipServer(ctx: HandlerContext, services: IpService[]): Promise<void> {
  if (!services.includes('sip')) return;
  await ctx.app.sip
    .syncBans()
    .catch((err: Error) =>
      ctx.app.log.warn({ err: err.message }, 'the SIP bans did not reach the SIP server'),
    );
}

const logged = (ctx: HandlerContext, action: AuditAction, data: Record<string, unknown>) =>
  audit(ctx.app.db, {
    projectId: signedIn(ctx).projectId,
    userId: signedIn(ctx).userId,
    action,
    ip: ctx.caller.ip,
    data,
  });

export const ipBlockingHandlers = {
  'ip_blocking.status': async (ctx, args) => ({
    data: await Promise.all(servicesOf(args.service).map((s) => statusOf(ctx, s))),
  }),

  'ip_blocking.status_set': async (ctx, args) => {
    if (args.service === 'console' && args.window_s !== undefined)
      throw new AppError('cant_perform_action', { reason: 'console_window_is_the_login_window' });
    const cur = await blockingSettings(ctx.app, args.service);
    const next = {
      enabled: args.enabled ?? cur.enabled,
      max_failures: args.max_failures ?? cur.max_failures,
      window_s: args.window_s ?? cur.window_s ?? defaultSettings(ctx.app, args.service).window_s,
      ban_time_s: args.ban_time_s ?? cur.ban_time_s,
    };
    await sql`
      insert into ip_blocking_settings (service, enabled, max_failures, window_s, ban_time_s, updated_at)
      values (${args.service}, ${next.enabled}, ${next.max_failures}, ${next.window_s}, ${next.ban_time_s}, ${ctx.app.clock.now()})
      on conflict (service) do update set enabled = excluded.enabled, max_failures = excluded.max_failures,
        window_s = excluded.window_s, ban_time_s = excluded.ban_time_s, updated_at = excluded.updated_at`.execute(
      ctx.app.db,
    );
    await logged(ctx, 'ip_blocking_changed', { service: args.service, before: cur, after: next });
    await toSipServer(ctx, [args.service]);
    return { data: await statusOf(ctx, args.service) };
  },

  'ip_blocking.banned': async (ctx, args) => {
    const r = await sql<IpBan & { banned_at: Date | string; banned_until: Date | string }>`
      select service, host(ip) as ip, cause, failures, banned_at, banned_until from ip_bans
      where service = any(${servicesOf(args.service)}::text[]) and banned_until > ${ctx.app.clock.now()}
      order by banned_at desc, ip`.execute(ctx.app.db);
    return {
      data: r.rows.map((b) => ({ ...b, banned_at: iso(b.banned_at), banned_until: iso(b.banned_until) })),
    };
  },

  'ip_blocking.unban_all': async (ctx, args) => {
    const unbanned = await unban(ctx.app, servicesOf(args.service), null);
    await logged(ctx, 'ip_unbanned', { service: args.service ?? 'all', unbanned });
    await toSipServer(ctx, servicesOf(args.service));
    return { unbanned };
  },

  'ip_blocking.unban': async (ctx, args) => {
    const unbanned = await unban(ctx.app, [args.service], args.ips);
    await logged(ctx, 'ip_unbanned', { service: args.service, ips: args.ips, unbanned });
    await toSipServer(ctx, [args.service]);
    return { unbanned };
  },

  'ip_blocking.whitelist': async (ctx, args) => ({ data: await whitelist(ctx, servicesOf(args.service)) }),

  'ip_blocking.whitelist_add': async (ctx, args) => {
    const auth = signedIn(ctx);
    const patterns = [
      ...(args.ips ?? []),
      ...(args.start_ip !== undefined
        ? [args.end_ip && args.end_ip !== args.start_ip ? `${args.start_ip}-${args.end_ip}` : args.start_ip]
        : []),
    ];
    const now = ctx.app.clock.now();
    await ctx.app.db.transaction().execute(async (trx) => {
      for (const label of patterns) {
        const range = (await rangeSql(label).execute(trx)).rows[0] as { s: string; e: string };
        const ok = await sql<{ ok: boolean }>`select ${range.s}::inet <= ${range.e}::inet as ok`.execute(trx);
        if (!ok.rows[0]!.ok)
          throw new AppError('check_fields_data', { fields: [{ field: 'ips', rule: 'ip_range' }] });
        await sql`
          insert into ip_whitelist (service, label, start_ip, end_ip, description, created_by, created_at)
          values (${args.service}, ${label}, ${range.s}::inet, ${range.e}::inet, ${args.description ?? ''}, ${auth.userId}, ${now})
          on conflict (service, label) do update set description = excluded.description`.execute(trx);
        // an address banned now and whitelisted: its ban does not hold any more, and is lifted
        await sql`delete from ip_bans where service = ${args.service}
          and family(ip) = family(${range.s}::inet) and ip between ${range.s}::inet and ${range.e}::inet`.execute(
          trx,
        );
      }
    });
    await logged(ctx, 'ip_whitelisted', { service: args.service, ips: patterns });
    await toSipServer(ctx, [args.service]);
    return { data: await whitelist(ctx, [args.service]) };
  },

  'ip_blocking.whitelist_delete': async (ctx, args) => {
    await sql`delete from ip_whitelist where service = ${args.service}
      and (label = any(${args.ips ?? []}::text[]) or id = any(${args.items ?? []}::int[]))`.execute(
      ctx.app.db,
    );
    await logged(ctx, 'ip_whitelist_deleted', { service: args.service, ips: args.ips, items: args.items });
    return { ok: true as const };
  },
} satisfies SomeHandlers;
