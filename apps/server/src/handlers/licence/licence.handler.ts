import { signedIn, type SomeHandlers } from '../../pipeline/handler';
import {
  addLicenceFile,
  addLicenceFromCloud,
  deleteLicence,
  getNotifySettings,
  licenceUsage,
  listLicences,
  updateNotifySettings,
} from '../../licensing/licence.service';

export const licenceHandlers = {
  'licence.list': async (ctx) => listLicences(ctx.app, signedIn(ctx).projectId),
  'licence.delete': async (ctx, args) => {
    await deleteLicence(ctx.app.db, signedIn(ctx).projectId, args.id);
    return { ok: true as const };
  },
  'licence.usage': async (ctx) => licenceUsage(ctx.app, signedIn(ctx).projectId),
  'licence.add_file': async (ctx, args) =>
    addLicenceFile(ctx.app, signedIn(ctx).projectId, await args.file.text()),
  'licence.add_cloud': async (ctx) => addLicenceFromCloud(ctx.app, signedIn(ctx).projectId),
  'licence.notify_get': async (ctx) => getNotifySettings(ctx.app.db, signedIn(ctx).projectId),
  'licence.notify_update': async (ctx, args) =>
    updateNotifySettings(ctx.app.db, signedIn(ctx).projectId, args),
} satisfies SomeHandlers;
