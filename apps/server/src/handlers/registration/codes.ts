import type { Kysely, Transaction } from 'kysely';
import type { ServerContext } from '../../context';
import type { AuthCodesTable, DB } from '../../db/schema';
import { AppError } from '../../errors';
import { newToken, sha256, sixDigitCode } from '../../auth/crypto';
import { composeMail, groupOfUser } from '../../mail/templates';
import { enforceMailTarget } from '../../security/rate-limit';

type Q = Kysely<DB> | Transaction<DB>;
type Kind = AuthCodesTable['kind'];

/** Issues a link token (and, for self-registration, a six-digit code). Only their hashes are stored. */
export async function issueCode(
  q: Q,
  opts: {
    kind: Kind;
    ttlH: number;
    now: Date;
    accountId?: number;
    projectId?: number;
    payload?: Record<string, unknown>;
    digits?: boolean;
  },
): Promise<{ id: number; token: string; code?: string }> {
  const token = newToken();
  const code = opts.digits ? sixDigitCode() : undefined;
  const row = await q
    .insertInto('auth_codes')
    .values({
      kind: opts.kind,
      token_hash: sha256(token),
      code_hash: code ? sha256(code) : null,
      account_id: opts.accountId ?? null,
      project_id: opts.projectId ?? null,
      payload: JSON.stringify(opts.payload ?? {}),
      expires_at: new Date(opts.now.getTime() + opts.ttlH * 3600_000),
      last_sent_at: opts.now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { id: row.id, token, code };
}

/** A live code of this kind for a link token, or the catalogue error for an outdated or unknown link. */
export async function findCode(
  q: Q,
  now: Date,
  kind: Kind,
  token: string,
  error:
    | 'verification_link_outdated'
    | 'invalid_confirmation_code'
    | 'invite_user_not_found' = 'verification_link_outdated',
) {
  const row = await q
    .selectFrom('auth_codes')
    .selectAll()
    .where('token_hash', '=', sha256(token))
    .where('kind', '=', kind)
    .executeTakeFirst();
  if (!row || row.used_at || row.expires_at.getTime() <= now.getTime()) throw new AppError(error);
  return row;
}

export async function markUsed(q: Q, now: Date, id: number): Promise<void> {
  await q.updateTable('auth_codes').set({ used_at: now }).where('id', '=', id).execute();
}

/** Spends a code in one statement: of two requests with the same code only one gets it. */
export async function claimCode(
  q: Q,
  now: Date,
  id: number,
  error: 'verification_link_outdated' | 'invalid_confirmation_code' = 'verification_link_outdated',
): Promise<void> {
  const row = await q
    .updateTable('auth_codes')
    .set({ used_at: now })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  if (!row) throw new AppError(error);
}

/**
 * Sends a templated e-mail (locales namespace `mail`) in the recipient's language, counted against the
 * recipient's limit (`mail_target`) unless the caller counted it already, before doing any work.
 */
export async function sendTemplate(
  app: ServerContext,
  opts: {
    projectId: number | null;
    to: string;
    locale: string | null;
    template: 'self_registration' | 'invitation' | 'confirm' | 'recovery';
    params: Record<string, unknown>;
    counted?: boolean;
    /** the recipient's user, whose group's mail template (if any) writes it (mail/templates.ts) */
    userId?: number | null;
  },
) {
  if (!opts.counted) await enforceMailTarget(app, opts.to);
  const params = { hours: app.config.codeTtlH, ...opts.params };
  const mail = await composeMail(app, {
    projectId: opts.projectId,
    type: opts.template,
    locale: opts.locale,
    params,
    groupId: opts.userId ? await groupOfUser(app, opts.userId) : null,
  });
  return app.mailer.send({ projectId: opts.projectId, to: opts.to, subject: mail.subject, text: mail.text });
}

export const link = (app: ServerContext, path: string) => `${app.config.publicUrl}${path}`;

/**
 * Invites an existing user who has no password yet: an e-mail with /registration/{token}, where the person
 * chooses a password. Used by "send registration link" on users.
 */
export async function sendInvitation(app: ServerContext, userId: number): Promise<{ token: string }> {
  const user = await app.db
    .selectFrom('users')
    .innerJoin('accounts', 'accounts.id', 'users.account_id')
    .innerJoin('projects', 'projects.id', 'users.project_id')
    .select([
      'users.id',
      'users.name',
      'users.project_id',
      'accounts.id as account_id',
      'accounts.login',
      'accounts.email',
      'accounts.locale',
      'projects.name as project',
    ])
    .where('users.id', '=', userId)
    .executeTakeFirst();
  if (!user) throw new AppError('item_not_found');
  if (!user.email) throw new AppError('email_required_for_registration');
  await enforceMailTarget(app, user.email);
  const { token } = await issueCode(app.db, {
    now: app.clock.now(),
    kind: 'invitation',
    ttlH: app.config.codeTtlH,
    accountId: user.account_id,
    projectId: user.project_id,
  });
  await app.db.updateTable('users').set({ is_invited: true }).where('id', '=', user.id).execute();
  await sendTemplate(app, {
    projectId: user.project_id,
    to: user.email,
    locale: user.locale,
    template: 'invitation',
    userId: user.id,
    params: {
      name: user.name,
      login: user.login,
      project: user.project,
      link: link(app, `/registration/${token}`),
    },
    counted: true,
  });
  return { token };
}

/** Asks an account that has a password to confirm its e-mail: /registration/confirm/{token}. */
export async function sendConfirmation(
  app: ServerContext,
  accountId: number,
  projectId: number | null,
): Promise<{ token: string }> {
  const account = await app.db
    .selectFrom('accounts')
    .select(['id', 'email', 'locale', 'login'])
    .where('id', '=', accountId)
    .executeTakeFirstOrThrow();
  if (!account.email) throw new AppError('email_required_for_registration');
  await enforceMailTarget(app, account.email);
  const { token } = await issueCode(app.db, {
    now: app.clock.now(),
    kind: 'confirm',
    ttlH: app.config.codeTtlH,
    accountId,
    projectId: projectId ?? undefined,
  });
  await sendTemplate(app, {
    projectId,
    to: account.email,
    locale: account.locale,
    template: 'confirm',
    params: { name: account.login, link: link(app, `/registration/confirm/${token}`) },
    counted: true,
  });
  return { token };
}
