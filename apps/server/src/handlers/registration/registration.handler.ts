import { sql, type Kysely, type Transaction } from 'kysely';
import type { SelfRegistrationBody } from '@lintel/core';
import type { ServerContext } from '../../context';
import type { DB } from '../../db/schema';
import { hashPassword, sha256, sixDigitCode, safeEqual } from '../../auth/crypto';
import { openProjectSessions, revokeAccountSessions } from '../../auth/sessions';
import { audit } from '../../audit/audit';
import { BuiltInRoles } from '../../bootstrap';
import { AppError } from '../../errors';
import { assertNoCrossAfterWrite, lockIdentities } from '../../auth/identities';
import { assertUserLimit } from '../../licensing/limits';
import type { SomeHandlers } from '../../pipeline/handler';
import { enforceMailTarget } from '../../security/rate-limit';
import { claimCode, findCode, issueCode, link, markUsed, sendTemplate } from './codes';

const MAX_CODE_ATTEMPTS = 5;
const RECOVERY_TTL_H = 2;

/** The project people register into: the first one (the default project). */
async function defaultProject(trx: Transaction<DB>) {
  const project = await trx
    .selectFrom('projects')
    .select(['id', 'name'])
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  if (!project) throw new AppError('unknown_project');
  const root = await trx
    .selectFrom('domains')
    .select('id')
    .where('project_id', '=', project.id)
    .where('parent_id', 'is', null)
    .orderBy('id')
    .limit(1)
    .executeTakeFirstOrThrow();
  return { projectId: project.id, rootDomainId: root.id };
}

async function builtInRole(trx: Transaction<DB>, projectId: number, key: 'installer' | 'private') {
  const role = await trx
    .selectFrom('roles')
    .select('id')
    .where('project_id', '=', projectId)
    .where('name', '=', BuiltInRoles[key].name)
    .where('is_system', '=', true)
    .executeTakeFirst();
  if (!role) throw new AppError('cant_perform_action', { reason: 'role_missing' });
  return role.id;
}

async function assertFree(trx: Kysely<DB> | Transaction<DB>, login: string, email: string | null) {
  // in a transaction, held to its end: no other account takes these keys meanwhile (auth/identities.ts); the
  // cheap check before it locks nothing
  if (trx.isTransaction) await lockIdentities(trx, [login, email]);
  const taken = await trx
    .selectFrom('accounts')
    .select(['login', 'email'])
    .where((eb) =>
      eb.or([
        // logins and e-mails are one sign-in namespace (docs/decisions.md)
        eb(sql`lower(login)`, '=', login.toLowerCase()),
        eb(sql`lower(email)`, '=', login.toLowerCase()),
        ...(email
          ? [eb(sql`lower(email)`, '=', email.toLowerCase()), eb(sql`lower(login)`, '=', email.toLowerCase())]
          : []),
      ]),
    )
    .executeTakeFirst();
  if (!taken) return;
  if (email && taken.email?.toLowerCase() === email.toLowerCase()) throw new AppError('email_already_used');
  throw new AppError('user_registered_already');
}

function resendIn(app: ServerContext, lastSent: Date | null): number {
  if (!lastSent) return 0;
  return Math.max(
    0,
    Math.ceil((lastSent.getTime() + app.config.resendCodeAfterS * 1000 - app.clock.now().getTime()) / 1000),
  );
}

interface PendingSelfRegistration extends Omit<SelfRegistrationBody, 'user_password'> {
  password_hash: string;
  locale: string;
}

export const registrationHandlers = {
  'registration.register': async (ctx, args) => {
    const { app, caller } = ctx;
    if (!app.config.registrationOpen) throw new AppError('method_prohibited');
    // the cheap checks first: a taken login costs no password hash
    await assertFree(app.db, args.login, null);
    const hash = await hashPassword(args.password);
    const sessions = await app.db.transaction().execute(async (trx) => {
      await assertFree(trx, args.login, null);
      const { projectId, rootDomainId } = await defaultProject(trx);
      await assertUserLimit(trx, [rootDomainId], null);
      const account = await trx
        .insertInto('accounts')
        .values({
          login: args.login,
          email: null,
          password_hash: hash,
          activated_at: app.clock.now(),
          locale: caller.locale,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const user = await trx
        .insertInto('users')
        .values({
          project_id: projectId,
          account_id: account.id,
          role_id: await builtInRole(trx, projectId, 'private'),
          name: args.name,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      await trx.insertInto('user_domains').values({ user_id: user.id, domain_id: rootDomainId }).execute();
      await audit(trx, {
        projectId,
        userId: user.id,
        action: 'register',
        entity: 'user',
        entityId: user.id,
        ip: caller.ip,
      });
      await assertNoCrossAfterWrite(trx, account.id);
      return openProjectSessions(app, trx, account.id, caller);
    });
    return { sessions };
  },

  'registration.invite_info': async (ctx, args) => {
    const code = await findCode(ctx.app.db, ctx.app.clock.now(), 'invitation', args.token);
    const row = await ctx.app.db
      .selectFrom('accounts')
      .innerJoin('users', 'users.account_id', 'accounts.id')
      .select(['users.name', 'accounts.login', 'accounts.email', 'accounts.password_hash'])
      .where('accounts.id', '=', code.account_id ?? -1)
      .where('users.project_id', '=', code.project_id ?? -1)
      .executeTakeFirst();
    if (!row) throw new AppError('invite_user_not_found');
    if (row.password_hash) throw new AppError('user_registered_already');
    return { name: row.name, login: row.login, email: row.email };
  },

  'registration.invite_attempt': async (ctx, args) => {
    const { app, caller } = ctx;
    // the link is checked before the password is hashed: a wrong one costs a lookup, not argon2
    const live = await findCode(app.db, app.clock.now(), 'invitation', args.token);
    const invited = await app.db
      .selectFrom('accounts')
      .select(['id', 'password_hash'])
      .where('id', '=', live.account_id ?? -1)
      .executeTakeFirst();
    if (!invited) throw new AppError('invite_user_not_found');
    if (invited.password_hash) throw new AppError('user_registered_already');
    const hash = await hashPassword(args.password);
    const sessions = await app.db.transaction().execute(async (trx) => {
      const code = await findCode(trx, app.clock.now(), 'invitation', args.token);
      const account = await trx
        .selectFrom('accounts')
        .select(['id', 'password_hash'])
        .where('id', '=', code.account_id ?? -1)
        .forUpdate()
        .executeTakeFirst();
      if (!account) throw new AppError('invite_user_not_found');
      if (account.password_hash) throw new AppError('user_registered_already');
      await trx
        .updateTable('accounts')
        .set({ password_hash: hash, activated_at: app.clock.now() })
        .where('id', '=', account.id)
        .execute();
      await trx
        .updateTable('users')
        .set({ is_invited: false })
        .where('account_id', '=', account.id)
        .execute();
      await claimCode(trx, app.clock.now(), code.id);
      await audit(trx, {
        projectId: code.project_id,
        userId: null,
        action: 'invitation_accepted',
        entity: 'account',
        entityId: account.id,
        ip: caller.ip,
      });
      return openProjectSessions(app, trx, account.id, caller);
    });
    return { sessions };
  },

  'registration.confirm': async (ctx, args) => {
    await ctx.app.db.transaction().execute(async (trx) => {
      const code = await findCode(trx, ctx.app.clock.now(), 'confirm', args.token);
      const account = await trx
        .selectFrom('accounts')
        .select(['id', 'activated_at'])
        .where('id', '=', code.account_id ?? -1)
        .executeTakeFirst();
      if (!account) throw new AppError('invite_user_not_found');
      if (!account.activated_at)
        await trx
          .updateTable('accounts')
          .set({ activated_at: ctx.app.clock.now() })
          .where('id', '=', account.id)
          .execute();
      await markUsed(trx, ctx.app.clock.now(), code.id);
      await audit(trx, {
        projectId: code.project_id,
        userId: null,
        action: 'account_confirmed',
        entity: 'account',
        entityId: account.id,
        ip: ctx.caller.ip,
      });
    });
    return { ok: true as const };
  },

  'self_registration.create': async (ctx, args) => {
    const { app, caller } = ctx;
    if (!app.config.selfRegistrationOpen) throw new AppError('method_prohibited');
    // counted against the recipient before anything else: a flood to one address sends at most its share
    await enforceMailTarget(app, args.user_email, caller.ip);
    // and a taken e-mail costs no password hash
    await assertFree(app.db, args.user_email, args.user_email);
    const password_hash = await hashPassword(args.user_password);
    const issued = await app.db.transaction().execute(async (trx) => {
      await assertFree(trx, args.user_email, args.user_email);
      const { projectId } = await defaultProject(trx);
      const payload: PendingSelfRegistration = {
        user_name: args.user_name,
        user_email: args.user_email,
        user_type: args.user_type,
        object_name: args.object_name,
        password_hash,
        locale: caller.locale,
      };
      return {
        projectId,
        ...(await issueCode(trx, {
          now: app.clock.now(),
          kind: 'self_registration',
          ttlH: app.config.codeTtlH,
          projectId,
          payload: { ...payload },
          digits: true,
        })),
      };
    });
    await sendTemplate(app, {
      projectId: issued.projectId,
      to: args.user_email,
      locale: caller.locale,
      template: 'self_registration',
      params: {
        name: args.user_name,
        code: issued.code,
        link: link(app, `/self-registration/${issued.token}`),
      },
      counted: true,
    });
    return { token: issued.token, resend_in: app.config.resendCodeAfterS };
  },

  'self_registration.info': async (ctx, args) => {
    const code = await findCode(
      ctx.app.db,
      ctx.app.clock.now(),
      'self_registration',
      args.token,
      'invalid_confirmation_code',
    );
    const p = code.payload as unknown as PendingSelfRegistration;
    return {
      code_type: 'self_registration' as const,
      user_type: p.user_type,
      object_name: p.object_name,
      user_name: p.user_name,
      user_email: p.user_email,
      user_password: '' as const,
      resend_in: resendIn(ctx.app, code.last_sent_at),
    };
  },

  'self_registration.resend': async (ctx, args) => {
    const { app } = ctx;
    const code = await findCode(
      app.db,
      app.clock.now(),
      'self_registration',
      args.token,
      'invalid_confirmation_code',
    );
    const wait = resendIn(app, code.last_sent_at);
    if (wait > 0) throw new AppError('too_many_attempts', { seconds: wait });
    const p = code.payload as unknown as PendingSelfRegistration;
    await enforceMailTarget(app, p.user_email, ctx.caller.ip);
    const fresh = sixDigitCode();
    // one statement decides: of parallel resends only one finds the last code old enough
    const renewed = await app.db
      .updateTable('auth_codes')
      .set({
        code_hash: sha256(fresh),
        attempts: 0,
        last_sent_at: app.clock.now(),
        expires_at: new Date(app.clock.now().getTime() + app.config.codeTtlH * 3600_000),
      })
      .where('id', '=', code.id)
      .where('used_at', 'is', null)
      .where((eb) =>
        eb.or([
          eb('last_sent_at', 'is', null),
          eb('last_sent_at', '<=', new Date(app.clock.now().getTime() - app.config.resendCodeAfterS * 1000)),
        ]),
      )
      .returning('id')
      .executeTakeFirst();
    if (!renewed)
      throw new AppError('too_many_attempts', { seconds: Math.max(1, app.config.resendCodeAfterS) });
    await sendTemplate(app, {
      projectId: code.project_id,
      to: p.user_email,
      locale: p.locale,
      template: 'self_registration',
      params: { name: p.user_name, code: fresh, link: link(app, `/self-registration/${args.token}`) },
      counted: true,
    });
    return { token: args.token, resend_in: app.config.resendCodeAfterS };
  },

  'self_registration.confirm': async (ctx, args) => {
    const { app, caller } = ctx;
    const code = await findCode(
      app.db,
      app.clock.now(),
      'self_registration',
      args.token,
      'invalid_confirmation_code',
    );
    // the attempt is counted first, in one statement that refuses the sixth: parallel guesses get 5 in all
    const counted = await app.db
      .updateTable('auth_codes')
      .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
      .where('id', '=', code.id)
      .where('used_at', 'is', null)
      .where('attempts', '<', MAX_CODE_ATTEMPTS)
      .returning(['attempts', 'code_hash'])
      .executeTakeFirst();
    if (!counted) throw new AppError('invalid_confirmation_code', { attempts_left: 0 });
    if (!counted.code_hash || !safeEqual(counted.code_hash, sha256(args.code)))
      throw new AppError('invalid_confirmation_code', {
        attempts_left: MAX_CODE_ATTEMPTS - counted.attempts,
      });
    const p = code.payload as unknown as PendingSelfRegistration;
    const sessions = await app.db.transaction().execute(async (trx) => {
      const again = await findCode(
        trx,
        app.clock.now(),
        'self_registration',
        args.token,
        'invalid_confirmation_code',
      );
      await assertFree(trx, p.user_email, p.user_email);
      const { projectId, rootDomainId } = await defaultProject(trx);
      const account = await trx
        .insertInto('accounts')
        .values({
          login: p.user_email,
          email: p.user_email,
          password_hash: p.password_hash,
          activated_at: app.clock.now(),
          locale: p.locale === 'ru' ? 'ru' : 'en',
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      // the object (group) the person registered, under the project's root group
      const domain = await trx
        .insertInto('domains')
        .values({ project_id: projectId, parent_id: rootDomainId, name: p.object_name })
        .returning('id')
        .executeTakeFirstOrThrow();
      const user = await trx
        .insertInto('users')
        .values({
          project_id: projectId,
          account_id: account.id,
          role_id: await builtInRole(trx, projectId, p.user_type),
          name: p.user_name,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      await trx.updateTable('domains').set({ created_by: user.id }).where('id', '=', domain.id).execute();
      await trx.insertInto('user_domains').values({ user_id: user.id, domain_id: domain.id }).execute();
      await claimCode(trx, app.clock.now(), again.id, 'invalid_confirmation_code');
      await audit(trx, {
        projectId,
        userId: user.id,
        action: 'self_registered',
        entity: 'user',
        entityId: user.id,
        ip: caller.ip,
        data: { user_type: p.user_type, object: p.object_name },
      });
      await assertNoCrossAfterWrite(trx, account.id);
      return openProjectSessions(app, trx, account.id, caller);
    });
    return { sessions };
  },

  /** Always answers ok, so the form does not tell which e-mails have an account. */
  'password.recovery': async (ctx, args) => {
    const { app } = ctx;
    // counted per e-mail whether or not it has an account, so a refusal tells nothing about accounts
    await enforceMailTarget(app, args.email, ctx.caller.ip);
    const account = await app.db
      .selectFrom('accounts')
      .select(['id', 'login', 'email', 'locale', 'activated_at'])
      .where(sql`lower(email)`, '=', args.email.toLowerCase())
      .executeTakeFirst();
    if (!account?.email || !account.activated_at) return { ok: true as const };
    const recent = await app.db
      .selectFrom('auth_codes')
      .select('id')
      .where('kind', '=', 'recovery')
      .where('account_id', '=', account.id)
      .where('used_at', 'is', null)
      .where('created_at', '>', new Date(app.clock.now().getTime() - app.config.resendCodeAfterS * 1000))
      .executeTakeFirst();
    if (recent) return { ok: true as const };
    const user = await app.db
      .selectFrom('users')
      .select(['id', 'name', 'project_id'])
      .where('account_id', '=', account.id)
      .orderBy('project_id')
      .limit(1)
      .executeTakeFirst();
    const { token } = await issueCode(app.db, {
      now: app.clock.now(),
      kind: 'recovery',
      ttlH: RECOVERY_TTL_H,
      accountId: account.id,
    });
    await sendTemplate(app, {
      projectId: user?.project_id ?? null,
      to: account.email,
      locale: account.locale,
      template: 'recovery',
      userId: user?.id ?? null,
      params: {
        name: user?.name ?? account.login,
        login: account.login,
        link: link(app, `/password/reset/${token}`),
        hours: RECOVERY_TTL_H,
      },
      counted: true,
    });
    await audit(app.db, {
      projectId: null,
      userId: null,
      action: 'password_recovery_requested',
      entity: 'account',
      entityId: account.id,
      ip: ctx.caller.ip,
    });
    return { ok: true as const };
  },

  'password.reset': async (ctx, args) => {
    // the code is checked before the password is hashed: a wrong one costs a lookup, not argon2
    await findCode(ctx.app.db, ctx.app.clock.now(), 'recovery', args.code);
    const hash = await hashPassword(args.password);
    await ctx.app.db.transaction().execute(async (trx) => {
      const code = await findCode(trx, ctx.app.clock.now(), 'recovery', args.code);
      await claimCode(trx, ctx.app.clock.now(), code.id);
      await trx
        .updateTable('accounts')
        .set({ password_hash: hash })
        .where('id', '=', code.account_id ?? -1)
        .execute();
      await revokeAccountSessions(trx, code.account_id ?? -1, 'password_reset');
      await audit(trx, {
        projectId: null,
        userId: null,
        action: 'password_reset',
        entity: 'account',
        entityId: code.account_id ?? undefined,
        ip: ctx.caller.ip,
      });
    });
    return { ok: true as const };
  },
} satisfies SomeHandlers;
