import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema';
import { AppError } from '../errors';
import { lockCount, lockShared } from '../licensing/limits';

/**
 * Logins and e-mails are one sign-in namespace (a login may be typed where an e-mail is, and back): a login
 * may equal no other account's login or e-mail, an e-mail no other account's e-mail or login. The unique
 * indexes hold each column alone; across the two columns, locks do:
 *
 * - a writer of one account's keys (user.create and update, registration) locks its keys (`lockIdentities`)
 *   and checks them before it writes; then, as the last thing its transaction does before it commits, takes
 *   the namespace shared and checks its account across the two columns (`assertNoCrossAfterWrite`);
 * - a writer of many (a users import's commit, both paths) checks its rows set-based as it goes; then, as the
 *   last thing before its commit, takes the namespace exclusive and checks the two columns across
 *   (`assertNoCrossIdentities`).
 *
 * Whichever takes the namespace first commits before the other's last check reads, so that check sees it.
 * Last, because a writer waits on the other's rows only before (a login the import inserted and has not
 * committed, a group's cap the import locked): a writer holding the namespace while it waited for the import,
 * which waits for the namespace, would be a deadlock, and PostgreSQL would end the import.
 */
/** the namespace's advisory lock key (`hashtext` of it) */
export const NAMESPACE = 'identities';

type Q = Kysely<DB>;

/** Each key (lowercased, in order: two writers never wait on each other's), for the transaction. */
export async function lockIdentities(q: Q, keys: readonly (string | null | undefined)[]): Promise<void> {
  const sorted = [...new Set(keys.filter((k): k is string => !!k).map((k) => k.toLowerCase()))].sort();
  for (const k of sorted) await lockCount(q, `identity:${k}`);
}

/**
 * The namespace shared, then this account's login against the other accounts' e-mails and its e-mail against
 * their logins: `login_already_used` or `email_already_used`. The last thing before the commit (above).
 */
export async function assertNoCrossAfterWrite(q: Q, accountId: number): Promise<void> {
  await lockShared(q, NAMESPACE);
  const found = await sql<{ field: 'login' | 'email' | null }>`
    select case
      when exists (select 1 from accounts o where lower(o.email) = lower(a.login) and o.id <> a.id) then 'login'
      when a.email is not null
        and exists (select 1 from accounts o where lower(o.login) = lower(a.email) and o.id <> a.id) then 'email'
    end as field
    from accounts a where a.id = ${accountId}`.execute(q);
  const field = found.rows[0]?.field;
  if (field) throw new AppError(`${field}_already_used`, { field });
}

/**
 * The namespace exclusive (for the rest of the transaction), then the import's valid staged rows against the
 * other accounts across the two columns: a login (lowercased, `login_key`) that is another account's e-mail,
 * an e-mail (`email_key`) that is another account's login. Such a key can only hold an `@` (an e-mail always
 * does), so only logins with one are looked at. The first found fails the import whole, as a login or e-mail
 * taken meanwhile in its own column does (the unique index): `login_already_used` or `email_already_used`.
 */
export async function assertNoCrossIdentities(q: Q, importId: string): Promise<void> {
  await lockCount(q, NAMESPACE);
  const found = await sql<{ field: 'login' | 'email' }>`
    (select 'login' as field from user_import_rows r
      where r.import_id = ${importId} and r.errors is null and strpos(r.login_key, '@') > 0
        and exists (select 1 from accounts a where lower(a.email) = r.login_key and lower(a.login) <> r.login_key)
      limit 1)
    union all
    (select 'email' as field
      from (select lower(a.login) as k from accounts a where strpos(a.login, '@') > 0) l
      join user_import_rows r on r.email_key = l.k
      where r.import_id = ${importId} and r.errors is null and l.k <> r.login_key
      limit 1)
    limit 1`.execute(q);
  const field = found.rows[0]?.field;
  if (field) throw new AppError(`${field}_already_used`, { field });
}
