import type { AllHandlers, HandlerContext } from '../../pipeline/handler';
import { audit } from '../../audit/audit';
import { assertMay, familyCtx, familyHandlers, loadOne } from '../../engine/family';
import { identifierStore, revokeIdentifier } from './identifier.store';

export const identifierHandlers = {
  ...familyHandlers(identifierStore),

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
} satisfies Partial<AllHandlers>;
