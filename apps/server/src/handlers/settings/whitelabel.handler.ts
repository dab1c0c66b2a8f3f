import { sql } from 'kysely';
import { signedIn, type HandlerContext, type SomeHandlers } from '../../pipeline/handler';
import { audit } from '../../audit/audit';
import { removeStored, storeLogo } from '../../storage/files';
import { DefaultWhiteLabel } from '../group/group.store';
import { projectWhiteLabel } from '../group/group.whitelabel';

/**
 * The project's white-label (issue 24 item 2): the key `whitelabel_settings` of the project's settings
 * document (carried by backups with the set `settings`; its logo file too), the logo a stored file under
 * storage/logos/ as a group's is (handlers/group/group.whitelabel.ts).
 */
const current = (ctx: HandlerContext) => projectWhiteLabel(ctx.app.db, signedIn(ctx).projectId);

/** Sets keys of the project's white-label over what is stored, in one statement. */
async function set(ctx: HandlerContext, changes: Record<string, unknown>): Promise<void> {
  await sql`update projects set settings = jsonb_set(settings, '{whitelabel_settings}',
      ${JSON.stringify(DefaultWhiteLabel)}::jsonb || coalesce(settings->'whitelabel_settings', '{}'::jsonb)
        || ${JSON.stringify(changes)}::jsonb)
    where id = ${signedIn(ctx).projectId}`.execute(ctx.app.db);
}

const changed = (
  ctx: HandlerContext,
  action: 'whitelabel_changed' | 'whitelabel_logo_uploaded' | 'whitelabel_logo_deleted',
  data?: Record<string, unknown>,
) =>
  audit(ctx.app.db, {
    projectId: signedIn(ctx).projectId,
    userId: signedIn(ctx).userId,
    action,
    ip: ctx.caller.ip,
    ...(data ? { data } : {}),
  });

export const whiteLabelSettingsHandlers = {
  'settings.whitelabel_get': async (ctx) => ({ data: await current(ctx) }),

  'settings.whitelabel_update': async (ctx, args) => {
    const before = await current(ctx);
    await set(ctx, args);
    await changed(ctx, 'whitelabel_changed', { before, after: args });
    return { data: await current(ctx) };
  },

  'settings.whitelabel_logo_upload': async (ctx, args) => {
    const url = await storeLogo(ctx.app.config, args.image);
    const before = await current(ctx);
    await set(ctx, { logo: url });
    await removeStored(ctx.app.config, before.logo);
    await changed(ctx, 'whitelabel_logo_uploaded');
    return { data: await current(ctx) };
  },

  'settings.whitelabel_logo_delete': async (ctx) => {
    const before = await current(ctx);
    await set(ctx, { logo: null });
    await removeStored(ctx.app.config, before.logo);
    if (before.logo) await changed(ctx, 'whitelabel_logo_deleted');
    return { data: await current(ctx) };
  },
} satisfies SomeHandlers;
