import { Locales, PermissionCategories, TimeFormats } from '@lintel/core';
import { signedIn, type SomeHandlers } from '../../http/handler';
import { licenceWarning } from '../../licensing/licence';
import { VERSION } from '../../version';

export const serverHandlers = {
  'server.info': async (ctx) => ({
    name: 'Lintel',
    version: VERSION,
    api: 'v0',
    time: new Date().toISOString(),
    registration_open: ctx.app.config.registrationOpen,
    self_registration_open: ctx.app.config.selfRegistrationOpen,
  }),

  'server.settings': async (ctx) => ({
    license_warning: await licenceWarning(ctx.app.db, signedIn(ctx).projectId),
    registration_open: ctx.app.config.registrationOpen,
    self_registration_open: ctx.app.config.selfRegistrationOpen,
    sip_enabled: false,
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
