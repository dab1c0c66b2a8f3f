import { sql } from 'kysely';
import { PASSWORD_PLACEHOLDER, type IceServerSetting, type SipSettings } from '@lintel/commands';
import type { FieldError } from '@lintel/core';
import { signedIn, type HandlerContext, type SomeHandlers } from '../../pipeline/handler';
import { AppError } from '../../errors';
import { audit } from '../../audit/audit';
import { SipSettingsChangedEvent } from '../../events/define';
import { withSipSettings, type IceServer, type SipConfig, type StoredSipSettings } from '../../sip/config';

/**
 * The SIP settings (issue 24 item 2, issue 22 items 1 and 10): table `sip_settings`, one row of the keys an
 * installer set over the environment's LINTEL_SIP_* (sip/config.ts `withSipSettings`). A change is written with
 * SipSettingsChangedEvent in its transaction, then applied here at once (sip/service.ts `applySettings`: the
 * configuration rendered again and Kamailio restarted with the SIP reboot notifications, when what it runs
 * with changed) and on every other instance when the event reaches it. The TURN credentials never leave the
 * server: the placeholder stands for each, and sent back it keeps it. docs/decisions.md "SIP settings and the
 * push server".
 */
const urlsOf = (s: { urls: string | string[] }) => (Array.isArray(s.urls) ? s.urls : [s.urls]);

function shownIce(servers: IceServer[]): IceServerSetting[] {
  return servers.map((s) => ({
    urls: urlsOf(s),
    username: s.username ?? '',
    credential: s.credential ? PASSWORD_PLACEHOLDER : '',
  }));
}

function shown(c: SipConfig): SipSettings {
  return {
    realm: c.realm,
    public_address: c.publicAddress ?? '',
    public_port: c.publicPort ?? null,
    ice_servers: shownIce(c.iceServers),
    ring_timeout_s: c.ringTimeoutS,
    route_timeout_s: c.routeTimeoutS,
    intercept_ring_s: c.interceptRingS,
    waiting_hold_s: c.waitingHoldS,
  };
}

async function reply(ctx: HandlerContext, stored: StoredSipSettings, applied: string | null) {
  const base = ctx.app.config.sip;
  const c = withSipSettings(base, stored);
  const other = await sql<{ n: number }>`
    select count(*)::int as n from sip_numbers
    where project_id = ${signedIn(ctx).projectId} and is_active and password_ha1 is not null
      and ha1_realm is distinct from ${c.realm}`.execute(ctx.app.db);
  return {
    data: shown(c),
    defaults: shown(withSipSettings(base, {})),
    overridden: Object.keys(stored).sort(),
    mode: c.mode,
    numbers_other_realm: other.rows[0]?.n ?? 0,
    applied: applied as never,
  };
}

/**
 * The ICE servers as given, each placeholder credential replaced by the one in force for the same URLs (a
 * server whose URLs changed needs its credential again); a placeholder with nothing behind it names its field.
 */
function iceServers(given: IceServerSetting[], current: IceServer[], fields: FieldError[]): IceServer[] {
  return given.map((s, i) => {
    let credential = s.credential;
    if (credential === PASSWORD_PLACEHOLDER) {
      const key = s.urls.join(' ');
      const same = current.find((c) => urlsOf(c).join(' ') === key);
      credential = same?.credential ?? '';
      if (!credential) fields.push({ field: `ice_servers.${i}.credential`, rule: 'required' });
    }
    return {
      urls: s.urls,
      ...(s.username ? { username: s.username } : {}),
      ...(credential ? { credential } : {}),
    };
  });
}

export const sipSettingsHandlers = {
  'settings.sip_get': async (ctx) => reply(ctx, await ctx.app.sip.readSettings(), null),

  'settings.sip_update': async (ctx, args) => {
    const auth = signedIn(ctx);
    const stored = await ctx.app.sip.readSettings();
    const current = withSipSettings(ctx.app.config.sip, stored);
    const next: StoredSipSettings = { ...stored };
    const fields: FieldError[] = [];
    const keys = [
      'realm',
      'public_address',
      'public_port',
      'ring_timeout_s',
      'route_timeout_s',
      'intercept_ring_s',
      'waiting_hold_s',
    ] as const;
    for (const k of keys) {
      const v = args[k];
      if (v === undefined) continue;
      if (v === null) delete next[k];
      else (next as Record<string, unknown>)[k] = v;
    }
    if (args.ice_servers === null) delete next.ice_servers;
    else if (args.ice_servers !== undefined)
      next.ice_servers = iceServers(args.ice_servers, current.iceServers, fields);
    const after = withSipSettings(ctx.app.config.sip, next);
    // a public port is the port of the public address: none without it
    if (after.publicPort && !after.publicAddress && args.public_port)
      fields.push({ field: 'public_address', rule: 'required' });
    if (fields.length) throw new AppError('check_fields_data', { fields });

    await ctx.app.db.transaction().execute(async (trx) => {
      await sql`insert into sip_settings (id, settings, updated_by, updated_at)
        values (true, ${JSON.stringify(next)}::jsonb, ${auth.userId}, ${ctx.app.clock.now()})
        on conflict (id) do update set settings = excluded.settings, updated_by = excluded.updated_by,
          updated_at = excluded.updated_at`.execute(trx);
      await ctx.app.outbox.emit(trx, SipSettingsChangedEvent, { projectId: auth.projectId });
      // what changed, never a credential: whether the ICE servers' credentials did
      await audit(trx, {
        projectId: auth.projectId,
        userId: auth.userId,
        action: 'sip_settings_changed',
        ip: ctx.caller.ip,
        data: {
          ...Object.fromEntries(keys.filter((k) => args[k] !== undefined).map((k) => [k, args[k]])),
          ...(args.ice_servers !== undefined
            ? {
                ice_servers: (next.ice_servers ?? []).map((s) => urlsOf(s).join(' ')),
                ice_credentials_changed:
                  JSON.stringify((next.ice_servers ?? []).map((s) => s.credential ?? '')) !==
                  JSON.stringify(current.iceServers.map((s) => s.credential ?? '')),
              }
            : {}),
        },
      });
    });
    const applied = await ctx.app.sip.applySettings(auth.projectId);
    return reply(ctx, next, applied);
  },
} satisfies SomeHandlers;
