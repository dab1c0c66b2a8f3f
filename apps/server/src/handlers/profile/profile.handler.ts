import { hashPassword, verifyPassword } from '../../auth/crypto';
import { revokeAccountSessions } from '../../auth/sessions';
import { audit } from '../../audit/audit';
import { AppError } from '../../errors';
import { signedIn, type SomeHandlers } from '../../pipeline/handler';
import { loadProfile } from './profile.service';
import { effectiveWhiteLabel, projectWhiteLabel } from '../group/group.whitelabel';
import { licenceFacts } from '../../licensing/licence';
import { decideGates } from '../../licensing/gates';
import { enforce } from '../../security/rate-limit';

export const profileHandlers = {
  'profile.get': async (ctx) => loadProfile(ctx.app, signedIn(ctx).userId),

  'profile.whitelabel': async (ctx) => {
    const auth = signedIn(ctx);
    const db = ctx.app.db;
    const own = (
      await db
        .selectFrom('user_domains')
        .select('domain_id')
        .where('user_id', '=', auth.userId)
        .orderBy('domain_id')
        .execute()
    ).map((d) => d.domain_id);
    // a group's brand needs the white-label licence, as changing it does; the project's is its settings'
    const flag = 'mobile_app.is_white_label_enabled' as const;
    const licence = await licenceFacts(db, auth.projectId, own, [flag], ctx.app.clock.now());
    const groups = decideGates({ licence: [flag] }, { permissions: auth.permissions, ...licence }).can;
    for (const group of groups ? own : []) {
      const effective = await effectiveWhiteLabel(db, auth.projectId, group);
      if (effective.source === 'group')
        return { data: { source: 'group', name: effective.settings.name, logo: effective.settings.logo } };
    }
    const project = await projectWhiteLabel(db, auth.projectId);
    return project.is_enabled
      ? { data: { source: 'project', name: project.name, logo: project.logo } }
      : { data: null };
  },

  'profile.update': async (ctx, args) => {
    const auth = signedIn(ctx);
    const before = await loadProfile(ctx.app, auth.userId);
    await ctx.app.db.transaction().execute(async (trx) => {
      if (args.name !== undefined || args.profile !== undefined) {
        await trx
          .updateTable('users')
          .set({
            ...(args.name !== undefined ? { name: args.name } : {}),
            ...(args.profile !== undefined
              ? { profile: JSON.stringify({ ...before.profile, ...args.profile }) }
              : {}),
            updated_at: ctx.app.clock.now(),
          })
          .where('id', '=', auth.userId)
          .execute();
      }
      if (args.locale !== undefined)
        await trx
          .updateTable('accounts')
          .set({ locale: args.locale })
          .where('id', '=', auth.accountId)
          .execute();
      await audit(trx, {
        projectId: auth.projectId,
        userId: auth.userId,
        action: 'update',
        entity: 'profile',
        entityId: auth.userId,
        ip: ctx.caller.ip,
        data: { before: { name: before.name, locale: before.locale, profile: before.profile }, after: args },
      });
    });
    return loadProfile(ctx.app, auth.userId);
  },

  'profile.password': async (ctx, args) => {
    const auth = signedIn(ctx);
    // a stolen session cannot guess the password at argon2's cost: counted per account before checking
    await enforce(ctx.app, 'password_account', String(auth.accountId), { ip: ctx.caller.ip });
    const account = await ctx.app.db
      .selectFrom('accounts')
      .select('password_hash')
      .where('id', '=', auth.accountId)
      .executeTakeFirstOrThrow();
    if (!(await verifyPassword(account.password_hash, args.old)))
      throw new AppError('invalid_credentials', { field: 'old' });
    const hash = await hashPassword(args.new);
    await ctx.app.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('accounts')
        .set({ password_hash: hash })
        .where('id', '=', auth.accountId)
        .execute();
      // other sessions of this login end; this one goes on
      await revokeAccountSessions(trx, auth.accountId, 'password_changed', auth.sessionId);
      await audit(trx, {
        projectId: auth.projectId,
        userId: auth.userId,
        action: 'password_changed',
        entity: 'account',
        entityId: auth.accountId,
        ip: ctx.caller.ip,
      });
    });
    return { ok: true as const };
  },

  'profile.mobile_popup': async (ctx, args) => {
    const auth = signedIn(ctx);
    const before = await loadProfile(ctx.app, auth.userId);
    await ctx.app.db
      .updateTable('users')
      .set({
        profile: JSON.stringify({ ...before.profile, is_app_popup_active: args.is_app_popup_active }),
        updated_at: ctx.app.clock.now(),
      })
      .where('id', '=', auth.userId)
      .execute();
    return loadProfile(ctx.app, auth.userId);
  },

  /** Leaves the current project; the login itself goes when it belongs to no project any more. */
  'profile.delete': async (ctx, args) => {
    const auth = signedIn(ctx);
    await enforce(ctx.app, 'password_account', String(auth.accountId), { ip: ctx.caller.ip });
    const account = await ctx.app.db
      .selectFrom('accounts')
      .select('password_hash')
      .where('id', '=', auth.accountId)
      .executeTakeFirstOrThrow();
    if (!(await verifyPassword(account.password_hash, args.password)))
      throw new AppError('invalid_credentials', { field: 'password' });
    const admins = await ctx.app.db
      .selectFrom('users')
      .innerJoin('roles', 'roles.id', 'users.role_id')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('users.project_id', '=', auth.projectId)
      .where('roles.is_system', '=', true)
      .where('roles.name', '=', 'Administrator')
      .where('users.id', '!=', auth.userId)
      .executeTakeFirstOrThrow();
    const me = await ctx.app.db
      .selectFrom('users')
      .innerJoin('roles', 'roles.id', 'users.role_id')
      .select(['roles.is_system', 'roles.name'])
      .where('users.id', '=', auth.userId)
      .executeTakeFirstOrThrow();
    // the last administrator of a project cannot delete himself: the project would have no one to run it
    if (me.is_system && me.name === 'Administrator' && Number(admins.n) === 0)
      throw new AppError('cant_perform_action', { reason: 'last_administrator' });
    await ctx.app.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('users').where('id', '=', auth.userId).execute();
      const rest = await trx
        .selectFrom('users')
        .select('id')
        .where('account_id', '=', auth.accountId)
        .executeTakeFirst();
      if (!rest) await trx.deleteFrom('accounts').where('id', '=', auth.accountId).execute();
      await audit(trx, {
        projectId: auth.projectId,
        userId: auth.userId,
        action: 'delete',
        entity: 'account',
        entityId: auth.accountId,
        ip: ctx.caller.ip,
      });
    });
    return { ok: true as const };
  },
} satisfies SomeHandlers;
