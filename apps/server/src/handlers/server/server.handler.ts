import { Locales, PermissionCategories, TimeFormats } from '@lintel/core';
import { signedIn, type SomeHandlers } from '../../pipeline/handler';
import { licenceWarningFor } from '../../licensing/licence.service';
import { VERSION } from '../../version';

export const serverHandlers = {
  'server.info': async (ctx) => ({
    name: 'Lintel',
    version: VERSION,
    api: 'v0',
    time: ctx.app.clock.now().toISOString(),
    registration_open: ctx.app.config.registrationOpen,
    self_registration_open: ctx.app.config.selfRegistrationOpen,
  }),

  'server.settings': async (ctx) => ({
    license_warning: await licenceWarningFor(ctx.app, signedIn(ctx).projectId, signedIn(ctx).permissions),
    registration_open: ctx.app.config.registrationOpen,
    self_registration_open: ctx.app.config.selfRegistrationOpen,
    // telephony is configured here: a local Kamailio installed, or a remote one (sip/status says if it is up)
    sip_enabled: ctx.app.sip.enabled,
    resend_code_after_s: ctx.app.config.resendCodeAfterS,
  }),

  'resources.meta': async () => ({
    meta: { locales: [...Locales], time_formats: Object.keys(TimeFormats), version: VERSION },
    permissions: Object.entries(PermissionCategories).map(([category, codes]) => ({
      category,
      items: codes.map((code) => ({ code })),
    })),
    notification_settings: { acs: false },
  }),
} satisfies SomeHandlers;
