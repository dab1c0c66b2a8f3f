import { sql, type Transaction } from 'kysely';
import type { SelfRegistrationBody } from '@lintel/core';
import type { ServerContext } from '../../context';
import type { DB } from '../../db/schema';
import { hashPassword, sha256, sixDigitCode, safeEqual } from '../../auth/crypto';
import { openProjectSessions, revokeAccountSessions } from '../../auth/sessions';
import { audit } from '../../audit/audit';
import { BuiltInRoles } from '../../bootstrap';
import { AppError } from '../../errors';
import type { SomeHandlers } from '../../http/handler';
import { findCode, issueCode, link, markUsed, sendTemplate } from './codes';

const MAX_CODE_ATTEMPTS = 5;
const RECOVERY_TTL_H = 2;

/** The project people register into: the first one (the default project). */
async function defaultProject(trx: Transaction<DB>) {
  const project = await trx.selectFrom('projects').select(['id', 'name']).orderBy('id').limit(1).executeTakeFirst();
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

async function assertFree(trx: Transaction<DB>, login: string, email: string | null) {
  const taken = await trx
    .selectFrom('accounts')
    .select(['login', 'email'])
    .where((eb) =>
      eb.or([
        eb(sql`lower(login)`, '=', login.toLowerCase()),
        ...(email ? [eb(sql`lower(email)`, '=', email.toLowerCase()), eb(sql`lower(login)`, '=', email.toLowerCase())] : []),
      ]),
    )
    .executeTakeFirst();
  if (!taken) return;
  if (email && taken.email?.toLowerCase() === email.toLowerCase()) throw new AppError('email_already_used');
  throw new AppError('user_registered_already');
}

function resendIn(app: ServerContext, lastSent: Date | null): number {
  if (!lastSent) return 0;
  return Math.max(0, Math.ceil((lastSent.getTime() + app.config.resendCodeAfterS * 1000 - Date.now()) / 1000));
}

interface PendingSelfRegistration extends Omit<SelfRegistrationBody, 'user_password'> {
  password_hash: string;
  locale: string;
}

export const registrationHandlers = {
  'registration.register': async (ctx, args) => {
    const { app, caller } = ctx;
    if (!app.config.registrationOpen) throw new AppError('method_prohibited');
    const hash = await hashPassword(args.password);
    const sessions = await app.db.transaction().execute(async (trx) => {
      await assertFree(trx, args.login, null);
      const { projectId, rootDomainId } = await defaultProject(trx);
      const account = await trx
        .insertInto('accounts')
        .values({ login: args.login, email: null, password_hash: hash, activated_at: new Date(), locale: caller.locale })
        .returning('id')
        .executeTakeFirstOrThrow();
      const user = await trx
        .insertInto('users')
        .values({ project_id: projectId, account_id: account.id, role_id: await builtInRole(trx, projectId, 'private'), name: args.name })
        .returning('id')
        .executeTakeFirstOrThrow();
      await trx.insertInto('user_domains').values({ user_id: user.id, domain_id: rootDomainId }).execute();
      await audit(trx, { projectId, userId: user.id, action: 'register', entity: 'user', entityId: user.id, ip: caller.ip });
      return openProjectSessions(app, trx, account.id, caller);
    });
    return { sessions };
  },

  'registration.invite_info': async (ctx, args) => {
    const code = await findCode(ctx.app.db, 'invitation', args.token);
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
    const hash = await hashPassword(args.password);
    const sessions = await app.db.transaction().execute(async (trx) => {
      const code = await findCode(trx, 'invitation', args.token);
      const account = await trx.selectFrom('accounts').select(['id', 'password_hash']).where('id', '=', code.account_id ?? -1).forUpdate().executeTakeFirst();
      if (!account) throw new AppError('invite_user_not_found');
      if (account.password_hash) throw new AppError('user_registered_already');
      await trx.updateTable('accounts').set({ password_hash: hash, activated_at: new Date() }).where('id', '=', account.id).execute();
      await trx.updateTable('users').set({ is_invited: false }).where('account_id', '=', account.id).execute();
      await markUsed(trx, code.id);
      await audit(trx, { projectId: code.project_id, userId: null, action: 'invitation_accepted', entity: 'account', entityId: account.id, ip: caller.ip });
      return openProjectSessions(app, trx, account.id, caller);
    });
    return { sessions };
  },

  'registration.confirm': async (ctx, args) => {
    await ctx.app.db.transaction().execute(async (trx) => {
      const code = await findCode(trx, 'confirm', args.token);
      const account = await trx.selectFrom('accounts').select(['id', 'activated_at']).where('id', '=', code.account_id ?? -1).executeTakeFirst();
      if (!account) throw new AppError('invite_user_not_found');
      if (!account.activated_at) await trx.updateTable('accounts').set({ activated_at: new Date() }).where('id', '=', account.id).execute();
      await markUsed(trx, code.id);
      await audit(trx, { projectId: code.project_id, userId: null, action: 'account_confirmed', entity: 'account', entityId: account.id, ip: ctx.caller.ip });
    });
    return { ok: true as const };
  },

  'self_registration.create': async (ctx, args) => {
    const { app, caller } = ctx;
    if (!app.config.selfRegistrationOpen) throw new AppError('method_prohibited');
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
      return { projectId, ...(await issueCode(trx, { kind: 'self_registration', ttlH: app.config.codeTtlH, projectId, payload: { ...payload }, digits: true })) };
    });
    await sendTemplate(app, {
      projectId: issued.projectId,
      to: args.user_email,
      locale: caller.locale,
      template: 'self_registration',
      params: { name: args.user_name, code: issued.code, link: link(app, `/self-registration/${issued.token}`) },
    });
    return { token: issued.token, resend_in: app.config.resendCodeAfterS };
  },

  'self_registration.info': async (ctx, args) => {
    const code = await findCode(ctx.app.db, 'self_registration', args.token, 'invalid_confirmation_code');
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
    const code = await findCode(app.db, 'self_registration', args.token, 'invalid_confirmation_code');
    const wait = resendIn(app, code.last_sent_at);
    if (wait > 0) throw new AppError('too_many_attempts', { seconds: wait });
    const fresh = sixDigitCode();
    await app.db
      .updateTable('auth_codes')
      .set({ code_hash: sha256(fresh), attempts: 0, last_sent_at: new Date(), expires_at: new Date(Date.now() + app.config.codeTtlH * 3600_000) })
      .where('id', '=', code.id)
      .execute();
    const p = code.payload as unknown as PendingSelfRegistration;
    await sendTemplate(app, {
      projectId: code.project_id,
      to: p.user_email,
      locale: p.locale,
      template: 'self_registration',
      params: { name: p.user_name, code: fresh, link: link(app, `/self-registration/${args.token}`) },
    });
    return { token: args.token, resend_in: app.config.resendCodeAfterS };
  },

  'self_registration.confirm': async (ctx, args) => {
    const { app, caller } = ctx;
    const code = await findCode(app.db, 'self_registration', args.token, 'invalid_confirmation_code');
    if (code.attempts >= MAX_CODE_ATTEMPTS || !code.code_hash || !safeEqual(code.code_hash, sha256(args.code))) {
      await app.db.updateTable('auth_codes').set((eb) => ({ attempts: eb('attempts', '+', 1) })).where('id', '=', code.id).execute();
      throw new AppError('invalid_confirmation_code', { attempts_left: Math.max(0, MAX_CODE_ATTEMPTS - code.attempts - 1) });
    }
    const p = code.payload as unknown as PendingSelfRegistration;
    const sessions = await app.db.transaction().execute(async (trx) => {
      const again = await findCode(trx, 'self_registration', args.token, 'invalid_confirmation_code');
      await assertFree(trx, p.user_email, p.user_email);
      const { projectId, rootDomainId } = await defaultProject(trx);
      const account = await trx
        .insertInto('accounts')
        .values({ login: p.user_email, email: p.user_email, password_hash: p.password_hash, activated_at: new Date(), locale: p.locale === 'ru' ? 'ru' : 'en' })
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
      await markUsed(trx, again.id);
      await audit(trx, { projectId, userId: user.id, action: 'self_registered', entity: 'user', entityId: user.id, ip: caller.ip, data: { user_type: p.user_type, object: p.object_name } });
      return openProjectSessions(app, trx, account.id, caller);
    });
    return { sessions };
  },

  /** Always answers ok, so the form does not tell which e-mails have an account. */
  'password.recovery': async (ctx, args) => {
    const { app } = ctx;
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
      .where('created_at', '>', new Date(Date.now() - app.config.resendCodeAfterS * 1000))
      .executeTakeFirst();
    if (recent) return { ok: true as const };
    const user = await app.db.selectFrom('users').select(['name', 'project_id']).where('account_id', '=', account.id).orderBy('project_id').limit(1).executeTakeFirst();
    const { token } = await issueCode(app.db, { kind: 'recovery', ttlH: RECOVERY_TTL_H, accountId: account.id });
    await sendTemplate(app, {
      projectId: user?.project_id ?? null,
      to: account.email,
      locale: account.locale,
      template: 'recovery',
      params: { name: user?.name ?? account.login, login: account.login, link: link(app, `/password/reset/${token}`), hours: RECOVERY_TTL_H },
    });
    await audit(app.db, { projectId: null, userId: null, action: 'password_recovery_requested', entity: 'account', entityId: account.id, ip: ctx.caller.ip });
    return { ok: true as const };
  },

  'password.reset': async (ctx, args) => {
    const hash = await hashPassword(args.password);
    await ctx.app.db.transaction().execute(async (trx) => {
      const code = await findCode(trx, 'recovery', args.code);
      await trx.updateTable('accounts').set({ password_hash: hash }).where('id', '=', code.account_id ?? -1).execute();
      await markUsed(trx, code.id);
      await revokeAccountSessions(trx, code.account_id ?? -1, 'password_reset');
      await audit(trx, { projectId: null, userId: null, action: 'password_reset', entity: 'account', entityId: code.account_id ?? undefined, ip: ctx.caller.ip });
    });
    return { ok: true as const };
  },
} satisfies SomeHandlers;
