import { hashPassword } from '../../auth/crypto';
import { revokeAccountSessions } from '../../auth/sessions';
import { audit } from '../../audit/audit';
import { AppError } from '../../errors';
import { assertMay, familyCtx, familyHandlers } from '../../engine/family';
import type { SomeHandlers } from '../../pipeline/handler';
import { sendInvitation } from '../registration/codes';
import { assertMayTakeOver } from '../../engine/grants';
import { userStore } from './user.store';
import { removeStored, storeAvatar } from '../../storage/files';

export const userHandlers = {
  ...familyHandlers(userStore),

  /** Sets another user's password (or one's own): his other sessions end. */
  'user.password': async (ctx, args) => {
    const c = await familyCtx(ctx);
    const hash = await hashPassword(args.new_password);
    await c.app.db.transaction().execute(async (trx) => {
      await assertMay(trx, userStore as never, c.caller, args.id, 'edit');
      await assertMayTakeOver(trx, c.caller, args.id);
      const { account_id } = await trx
        .selectFrom('users')
        .select('account_id')
        .where('id', '=', args.id)
        .executeTakeFirstOrThrow();
      const account = await trx
        .selectFrom('accounts')
        .select('activated_at')
        .where('id', '=', account_id)
        .executeTakeFirstOrThrow();
      await trx
        .updateTable('accounts')
        .set({ password_hash: hash, activated_at: account.activated_at ?? c.app.clock.now() })
        .where('id', '=', account_id)
        .execute();
      await revokeAccountSessions(
        trx,
        account_id,
        'password_set',
        args.id === c.caller.userId ? c.caller.auth.sessionId : undefined,
      );
      await audit(trx, {
        projectId: c.caller.projectId,
        userId: c.caller.userId,
        action: 'password_set',
        entity: 'user',
        entityId: args.id,
        ip: c.ip,
      });
    });
    return { ok: true as const };
  },

  'user.send_registration_link': async (ctx, args) => {
    const c = await familyCtx(ctx);
    await assertMay(c.app.db, userStore as never, c.caller, args.id, 'edit', c);
    const account = await c.app.db
      .selectFrom('users')
      .innerJoin('accounts', 'accounts.id', 'users.account_id')
      .select(['accounts.password_hash', 'accounts.email'])
      .where('users.id', '=', args.id)
      .executeTakeFirstOrThrow();
    if (account.password_hash) throw new AppError('user_registered_already');
    await sendInvitation(c.app, args.id);
    await audit(c.app.db, {
      projectId: c.caller.projectId,
      userId: c.caller.userId,
      action: 'registration_link_sent',
      entity: 'user',
      entityId: args.id,
      ip: c.ip,
    });
    return { ok: true as const };
  },

  'user.avatar_upload': async (ctx, args) => {
    const c = await familyCtx(ctx);
    await assertMay(c.app.db, userStore as never, c.caller, args.id, 'edit', c);
    const url = await storeAvatar(c.app.config, args.image, args);
    const before = await c.app.db
      .selectFrom('users')
      .select('avatar_url')
      .where('id', '=', args.id)
      .executeTakeFirstOrThrow();
    await c.app.db.updateTable('users').set({ avatar_url: url }).where('id', '=', args.id).execute();
    await removeStored(c.app.config, before.avatar_url);
    await audit(c.app.db, {
      projectId: c.caller.projectId,
      userId: c.caller.userId,
      action: 'avatar_uploaded',
      entity: 'user',
      entityId: args.id,
      ip: c.ip,
    });
    return { avatar_url: url };
  },

  'user.avatar_delete': async (ctx, args) => {
    const c = await familyCtx(ctx);
    await assertMay(c.app.db, userStore as never, c.caller, args.id, 'edit', c);
    const before = await c.app.db
      .selectFrom('users')
      .select('avatar_url')
      .where('id', '=', args.id)
      .executeTakeFirstOrThrow();
    await c.app.db.updateTable('users').set({ avatar_url: null }).where('id', '=', args.id).execute();
    await removeStored(c.app.config, before.avatar_url);
    await audit(c.app.db, {
      projectId: c.caller.projectId,
      userId: c.caller.userId,
      action: 'avatar_deleted',
      entity: 'user',
      entityId: args.id,
      ip: c.ip,
    });
    return { avatar_url: null };
  },
} satisfies SomeHandlers;

export { revokeAccountSessions };
