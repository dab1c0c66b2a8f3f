import { AppError } from '../../errors';
import { signedIn, type SomeHandlers } from '../../pipeline/handler';
import { wsIsPlain } from '../../sip/config';
import { userSipNumber } from '../profile/profile.service';

/**
 * The SIP service (spec part 2 §7): its status, re-initialisation and restart. An instance that does not run
 * the `sip` module answers "down, disabled".
 */
export const sipHandlers = {
  'sip.status': async (ctx) => (await ctx.app.sip.check()) as never,

  'sip.reinit': async (ctx) => {
    const status = await ctx.app.sip.reinit(signedIn(ctx).projectId);
    if (status.state !== 'up') throw new AppError('sip_service_start_failed', { reason: status.reason });
    return status as never;
  },

  'sip.restart': async (ctx, args) => {
    const status = ctx.app.sip.status();
    if (args.ip_address && !status.instances.some((i) => i.ip_address === args.ip_address))
      throw new AppError('item_not_found');
    const after = await ctx.app.sip.restart(signedIn(ctx).projectId);
    if (after.state !== 'up') throw new AppError('sip_service_start_failed', { reason: after.reason });
    return after as never;
  },

  'sip.profile': async (ctx) => {
    const auth = signedIn(ctx);
    if (!ctx.app.sip.enabled) return null;
    const number = await userSipNumber(ctx.app, auth.userId);
    // the settings in force: the SIP settings' realm and ICE servers over the environment's
    const sip = await ctx.app.sip.currentConfig();
    if (!number?.password_ha1 || !number.is_active || number.ha1_realm !== sip.realm) return null;
    return {
      number: number.number,
      name: number.name,
      realm: sip.realm,
      ha1: number.password_ha1,
      ws_port: sip.wsPort,
      ws_secure: !wsIsPlain(sip),
      ice_servers: sip.iceServers,
    };
  },
} satisfies SomeHandlers;
