import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { verifyPassword } from '../../auth/crypto';
import { openProjectSessions, revokeSession, rotateRefresh } from '../../auth/sessions';
import { beginLoginAttempt } from '../../auth/throttle';
import { audit } from '../../audit/audit';
import { AppError } from '../../errors';
import { signedIn, type SomeHandlers } from '../../pipeline/handler';

export const sessionHandlers = {
  'session.login': async (ctx, args) => {
    const { app, caller } = ctx;
    const account = await app.db
      .selectFrom('accounts')
      .select(['id', 'password_hash', 'activated_at'])
      .where((eb) =>
        eb.or([
          eb(sql`lower(login)`, '=', args.login.toLowerCase()),
          eb(sql`lower(email)`, '=', args.login.toLowerCase()),
        ]),
      )
      .executeTakeFirst();
    // counted as a failure before anything is checked; an unknown login counts under the name typed
    const attempt = await beginLoginAttempt(
      app,
      caller.ip,
      account ? `id:${account.id}` : `name:${args.login.toLowerCase()}`,
    );
    const ok = await verifyPassword(account?.password_hash ?? null, args.password);
    if (!account || !ok || !account.activated_at) {
      await audit(app.db, {
        projectId: null,
        userId: null,
        action: 'login_failed',
        ip: caller.ip,
        data: { login: args.login.slice(0, 64) },
      });
      if (attempt.delayMs) await sleep(attempt.delayMs);
      throw new AppError('incorrect_login_password');
    }
    await attempt.succeeded();
    const sessions = await app.db
      .transaction()
      .execute((trx) => openProjectSessions(app, trx, account.id, caller, args.project));
    if (sessions.length === 0)
      throw new AppError(args.project !== undefined ? 'unknown_project' : 'incorrect_login_password');
    for (const s of sessions)
      await audit(app.db, {
        projectId: s.project.id,
        userId: null,
        action: 'login',
        entity: 'account',
        entityId: account.id,
        ip: caller.ip,
      });
    return { sessions };
  },

  'session.refresh': async (ctx, args) => ({ session: await rotateRefresh(ctx.app, args.token) }),

  'session.logout': async (ctx) => {
    const auth = signedIn(ctx);
    await revokeSession(ctx.app.db, auth.sessionId, 'logout');
    await audit(ctx.app.db, {
      projectId: auth.projectId,
      userId: auth.userId,
      action: 'logout',
      ip: ctx.caller.ip,
    });
    return { ok: true as const };
  },
} satisfies SomeHandlers;
