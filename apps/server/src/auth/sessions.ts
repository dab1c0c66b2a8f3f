import { sql, type Kysely, type Transaction } from 'kysely';
import type { ProjectSession, SessionTokens } from '@lintel/core';
import type { DB } from '../db/schema';
import { PREPARED } from '../db/database';
import type { AuthInfo, CallerInfo, ServerContext } from '../context';
import { AppError } from '../errors';
import { newToken, openWith, sealFor, sha256 } from './crypto';
import { after } from '../clock';

type Q = Kysely<DB> | Transaction<DB>;

const later = (app: ServerContext, seconds: number) => after(app.clock, seconds);

/** Opens a session of one user in one project: a short-lived access token and a rotating refresh token. */
export async function openSession(
  app: ServerContext,
  q: Q,
  userId: number,
  caller: CallerInfo,
): Promise<SessionTokens> {
  const token = newToken();
  const refresh = newToken();
  await q
    .insertInto('sessions')
    .values({
      user_id: userId,
      token_hash: sha256(token),
      token_expires_at: later(app, app.config.accessTtlS),
      refresh_hash: sha256(refresh),
      refresh_expires_at: later(app, app.config.refreshTtlS),
      ip: caller.ip,
      user_agent: caller.userAgent?.slice(0, 255) ?? null,
    })
    .execute();
  return { token, refresh };
}

/** One session per project the account belongs to (spec: login returns sessions[]). */
export async function openProjectSessions(
  app: ServerContext,
  q: Q,
  accountId: number,
  caller: CallerInfo,
  projectUid?: string,
): Promise<ProjectSession[]> {
  let query = q
    .selectFrom('users')
    .innerJoin('projects', 'projects.id', 'users.project_id')
    .select(['users.id as user_id', 'projects.id', 'projects.uid', 'projects.name', 'projects.description'])
    .where('users.account_id', '=', accountId)
    .orderBy('projects.id');
  if (projectUid !== undefined) query = query.where('projects.uid', '=', projectUid);
  const memberships = await query.execute();
  const sessions: ProjectSession[] = [];
  for (const m of memberships) {
    const tokens = await openSession(app, q, m.user_id, caller);
    sessions.push({ ...tokens, project: { id: m.id, uid: m.uid, name: m.name, description: m.description } });
  }
  return sessions;
}

/** The caller behind an access token, or null when it is unknown, expired or revoked. */
export async function authenticate(app: ServerContext, token: string): Promise<AuthInfo | null> {
  const r = await authenticateToken(app, token);
  return 'auth' in r ? r.auth : null;
}

/**
 * An access token's caller and when the token expires, or why it is refused: `token_expired` (a refresh
 * helps) or `invalid_token` (unknown or revoked). The websocket closes with the reason.
 */
export async function authenticateToken(
  app: ServerContext,
  token: string,
): Promise<{ auth: AuthInfo; expiresAt: Date } | { refused: 'token_expired' | 'invalid_token' }> {
  const hash = sha256(token);
  // a session that exists and is not revoked is remembered (engine/request-cache.ts); its expiry is checked on
  // every use against the clock, a refusal is never remembered
  const found = await app.authCache.get(
    `session:${hash}`,
    async () => {
      const row = (
        await sql<{
          session_id: number;
          token_expires_at: Date;
          revoked_at: Date | null;
          user_id: number;
          account_id: number;
          project_id: number;
          role_id: number;
          permissions: string[];
        }>`${sql.raw(PREPARED)}
          select s.id as session_id, s.token_expires_at, s.revoked_at, u.id as user_id, u.account_id,
            u.project_id, u.role_id, r.permissions
          from sessions s join users u on u.id = s.user_id join roles r on r.id = u.role_id
          where s.token_hash = ${hash}`.execute(app.db)
      ).rows[0];
      if (!row || row.revoked_at) return null;
      return {
        expiresAt: row.token_expires_at,
        auth: {
          sessionId: row.session_id,
          userId: row.user_id,
          accountId: row.account_id,
          projectId: row.project_id,
          roleId: row.role_id,
          permissions: new Set(row.permissions) as ReadonlySet<string>,
        },
      };
    },
    (v) => v !== null,
  );
  if (!found) return { refused: 'invalid_token' };
  if (found.expiresAt.getTime() <= app.clock.now().getTime()) return { refused: 'token_expired' };
  return found;
}

/**
 * The callers of these sessions as they stand now (their users' current role and permissions), for the
 * sessions that are not revoked. A long-lived connection re-reads its caller with it.
 */
export async function sessionsAuth(
  app: ServerContext,
  sessionIds: readonly number[],
): Promise<Map<number, AuthInfo>> {
  const out = new Map<number, AuthInfo>();
  if (!sessionIds.length) return out;
  const rows = await app.db
    .selectFrom('sessions')
    .innerJoin('users', 'users.id', 'sessions.user_id')
    .innerJoin('roles', 'roles.id', 'users.role_id')
    .select([
      'sessions.id as session_id',
      'users.id as user_id',
      'users.account_id',
      'users.project_id',
      'users.role_id',
      'roles.permissions',
    ])
    .where('sessions.id', 'in', [...new Set(sessionIds)])
    .where('sessions.revoked_at', 'is', null)
    .execute();
  for (const row of rows)
    out.set(row.session_id, {
      sessionId: row.session_id,
      userId: row.user_id,
      accountId: row.account_id,
      projectId: row.project_id,
      roleId: row.role_id,
      permissions: new Set(row.permissions),
    });
  return out;
}

/**
 * Exchanges a refresh token for a new pair. A refresh token works once: presented again after the reuse
 * grace, it means someone else holds a copy, and the whole session is revoked. Within the grace the same pair
 * is answered again (kept sealed for that token's holder): a reply lost with a reload or the network, or a
 * second tab refreshing with the same token, gets what the first refresh gave, and every holder goes on with
 * it. When the session has moved on since, that pair's own refresh leads on the same way.
 */
export async function rotateRefresh(app: ServerContext, refresh: string): Promise<SessionTokens> {
  const hash = sha256(refresh);
  const outcome = await app.db.transaction().execute(async (trx) => {
    const session = await trx
      .selectFrom('sessions')
      .select(['id', 'refresh_expires_at', 'revoked_at'])
      .where('refresh_hash', '=', hash)
      .forUpdate()
      .executeTakeFirst();
    if (!session) {
      const reused = await trx
        .selectFrom('used_refresh_tokens as u')
        .innerJoin('sessions as s', 's.id', 'u.session_id')
        .select(['u.session_id', 'u.used_at', 'u.successor', 's.revoked_at'])
        .where('u.hash', '=', hash)
        .executeTakeFirst();
      // used a moment ago: the same pair again (a lost reply, another tab of the same browser refreshing)
      const graceMs = app.config.refreshReuseGraceS * 1000;
      if (reused && app.clock.now().getTime() - reused.used_at.getTime() < graceMs) {
        const opened = !reused.revoked_at && reused.successor ? openWith(refresh, reused.successor) : null;
        return opened ? ({ tokens: JSON.parse(opened) as SessionTokens } as const) : null;
      }
      if (reused) {
        await trx
          .updateTable('sessions')
          .set({ revoked_at: app.clock.now(), revoked_reason: 'refresh_reuse' })
          .where('id', '=', reused.session_id)
          .where('revoked_at', 'is', null)
          .execute();
        return { reuse: reused.session_id } as const;
      }
      return null;
    }
    if (session.revoked_at || session.refresh_expires_at.getTime() <= app.clock.now().getTime()) return null;
    const token = newToken();
    const next = newToken();
    await trx
      .insertInto('used_refresh_tokens')
      .values({
        hash,
        session_id: session.id,
        used_at: app.clock.now(),
        successor: sealFor(refresh, JSON.stringify({ token, refresh: next })),
      })
      .execute();
    await trx
      .updateTable('sessions')
      .set({
        token_hash: sha256(token),
        token_expires_at: later(app, app.config.accessTtlS),
        refresh_hash: sha256(next),
        refresh_expires_at: later(app, app.config.refreshTtlS),
        last_used_at: app.clock.now(),
      })
      .where('id', '=', session.id)
      .execute();
    return { tokens: { token, refresh: next } } as const;
  });
  if (outcome && 'tokens' in outcome && outcome.tokens) return outcome.tokens;
  if (outcome && 'reuse' in outcome)
    app.log.warn({ session: outcome.reuse }, 'refresh token presented twice: session revoked');
  throw new AppError('invalid_token');
}

export async function revokeSession(q: Q, sessionId: number, reason: string): Promise<void> {
  await q
    .updateTable('sessions')
    .set({ revoked_at: new Date(), revoked_reason: reason })
    .where('id', '=', sessionId)
    .where('revoked_at', 'is', null)
    .execute();
}

/** Ends every session of an account (password reset, account deletion), optionally but one. */
export async function revokeAccountSessions(
  q: Q,
  accountId: number,
  reason: string,
  except?: number,
): Promise<void> {
  let query = q
    .updateTable('sessions')
    .set({ revoked_at: new Date(), revoked_reason: reason })
    .where('revoked_at', 'is', null)
    .where('user_id', 'in', q.selectFrom('users').select('id').where('account_id', '=', accountId));
  if (except !== undefined) query = query.where('id', '!=', except);
  await query.execute();
}

/** Forget expired sessions and used tokens now and then (called at start). */
export async function pruneSessions(q: Q, now: Date): Promise<void> {
  await q
    .deleteFrom('sessions')
    .where('refresh_expires_at', '<', new Date(now.getTime() - 7 * 86_400_000))
    .execute();
}
