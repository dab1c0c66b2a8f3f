import type { Identifier } from '@lintel/commands';
import type { AllHandlers, HandlerContext } from '../../pipeline/handler';
import { signedIn } from '../../pipeline/handler';
import { audit } from '../../audit/audit';
import { assertMay, familyCtx, familyHandlers, loadOne } from '../../engine/family';
import { identifierStore, revokeIdentifier } from './identifier.store';
import { identifierImportHandlers } from './identifier.import';
import { facePhotoReply, qrReply, replaceFacePhoto, walletPassReply } from './identifier.files';

const family = familyHandlers(identifierStore);

/** The identifier as `identifier.get` reads it: the same gate and view scope (404 outside it). */
const readable = (ctx: HandlerContext, id: number) =>
  family['identifier.get'](ctx, { id }) as Promise<Identifier>;

export const identifierHandlers = {
  ...family,
  ...identifierImportHandlers,

  /** active → revoked, audited as an update of the identifier */
  'identifier.revoke': async (ctx: HandlerContext, args: { id: number }) => {
    const c = await familyCtx(ctx);
    const data = await ctx.app.db.transaction().execute(async (trx) => {
      await assertMay(trx, identifierStore, c.caller, args.id, 'edit', c);
      const before = await loadOne(trx, identifierStore, args.id);
      await revokeIdentifier(trx, args.id, ctx.app.clock.now());
      const after = await loadOne(trx, identifierStore, args.id);
      if (before.is_active)
        await audit(trx, {
          projectId: c.caller.projectId,
          userId: c.caller.userId,
          action: 'update',
          entity: 'identifier',
          entityId: args.id,
          ip: c.ip,
          data: { before, after },
        });
      return after;
    });
    return { data };
  },

  'identifier.qr': async (ctx: HandlerContext, args: { id: number; format: 'png' | 'svg'; size: number }) =>
    qrReply(await readable(ctx, args.id), args.format, args.size),

  'identifier.wallet_pass': async (ctx: HandlerContext, args: { id: number }) =>
    walletPassReply(ctx.app.db, signedIn(ctx).projectId, await readable(ctx, args.id), ctx.caller.locale),

  /** a face identifier's photo, checked like an avatar; audited as an update of the identifier */
  'identifier.photo_upload': async (
    ctx: HandlerContext,
    args: { id: number; image: Blob; x?: number; y?: number; size?: number },
  ) => {
    const c = await familyCtx(ctx);
    await assertMay(ctx.app.db, identifierStore, c.caller, args.id, 'edit', c);
    const ident = await loadOne(ctx.app.db, identifierStore, args.id);
    // no size: the largest square at the image's centre
    const crop = args.size === undefined ? null : { x: args.x ?? 0, y: args.y ?? 0, size: args.size };
    const photo_sha256 = await replaceFacePhoto(ctx.app.db, ctx.app.config, ident, args.image, crop);
    await audit(ctx.app.db, {
      projectId: c.caller.projectId,
      userId: c.caller.userId,
      action: 'photo_uploaded',
      entity: 'identifier',
      entityId: args.id,
      ip: c.ip,
    });
    return { photo_sha256 };
  },

  'identifier.photo': async (ctx: HandlerContext, args: { id: number }) =>
    facePhotoReply(ctx.app.db, ctx.app.config, await readable(ctx, args.id)),
} satisfies Partial<AllHandlers>;
