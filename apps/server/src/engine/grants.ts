import type { Kysely } from 'kysely';
import {
  mayActOnUser,
  mayAssignGroups,
  mayChangeUserRole,
  mayEditAdministratorRole,
  mayGrantPermissions,
  mayGrantRole,
  mayListRoles,
  mayRemoveAdministrator,
  type CallerFacts,
  type RoleFacts,
  type UserFacts,
  type Verdict,
} from '@lintel/core';
import type { DB } from '../db/schema';
import { BuiltInRoles } from '../bootstrap';
import { AppError } from '../errors';
import type { Caller } from './caller';

/**
 * Guarding privilege escalation (spec part 2 §6). The rules are the pure predicates of
 * `packages/core/src/grants.ts`; this file loads their facts from the database and turns a refusal into
 * `method_prohibited` with the predicate's reason.
 */

/** The caller's facts; the caller must have been prefetched (`Caller.prefetch`) or be outside a transaction. */
export async function callerFacts(caller: Caller): Promise<CallerFacts> {
  const [availableRoles, subtree] = await Promise.all([caller.availableRoles(), caller.subtree()]);
  return { userId: caller.userId, permissions: caller.auth.permissions, availableRoles, subtree };
}

export function enforce(v: Verdict): void {
  if (!v.ok) throw new AppError('method_prohibited', v.data);
}

async function roleFacts(q: Kysely<DB>, caller: Caller, roleId: number): Promise<RoleFacts> {
  const role = await q
    .selectFrom('roles')
    .select(['id', 'permissions'])
    .where('id', '=', roleId)
    .where('project_id', '=', caller.projectId)
    .executeTakeFirst();
  if (!role) throw new AppError('invalid_related_entity', { entity: 'roles', ids: [roleId] });
  return role;
}

/** A user as he is now: his role and its permissions, his groups. */
export async function userFacts(q: Kysely<DB>, userId: number): Promise<UserFacts> {
  const [row, domains] = await Promise.all([
    q
      .selectFrom('users')
      .innerJoin('roles', 'roles.id', 'users.role_id')
      .select(['users.id', 'roles.id as role_id', 'roles.permissions'])
      .where('users.id', '=', userId)
      .executeTakeFirstOrThrow(),
    q.selectFrom('user_domains').select('domain_id').where('user_id', '=', userId).execute(),
  ]);
  return {
    id: row.id,
    role: { id: row.role_id, permissions: row.permissions },
    domains: domains.map((d) => d.domain_id),
  };
}

export async function assertMayGrantRole(q: Kysely<DB>, caller: Caller, roleId: number): Promise<void> {
  enforce(mayGrantRole(await callerFacts(caller), await roleFacts(q, caller, roleId)));
}

/** A user's role changes: "edit users' roles", and the new role must be one the caller may give. */
export async function assertMayChangeRole(q: Kysely<DB>, caller: Caller, roleId: number): Promise<void> {
  const role = await roleFacts(q, caller, roleId);
  enforce(mayChangeUserRole(await callerFacts(caller), role));
}

export async function assertMayGrantPermissions(
  caller: Caller,
  permissions: readonly string[],
): Promise<void> {
  enforce(mayGrantPermissions(await callerFacts(caller), permissions));
}

export async function assertMayListRoles(
  q: Kysely<DB>,
  caller: Caller,
  roleIds: readonly number[],
): Promise<void> {
  if (!roleIds.length) return;
  const found = await q
    .selectFrom('roles')
    .select('id')
    .where('project_id', '=', caller.projectId)
    .where('id', 'in', roleIds)
    .execute();
  const missing = roleIds.filter((id) => !found.some((f) => f.id === id));
  if (missing.length) throw new AppError('invalid_related_entity', { entity: 'roles', ids: missing });
  enforce(mayListRoles(await callerFacts(caller), roleIds));
}

/** Groups a caller may put users into: any with project-wide view, else his own subtree. */
export async function assertAssignableGroups(
  q: Kysely<DB>,
  caller: Caller,
  ids: readonly number[],
): Promise<void> {
  if (!ids.length) return;
  const found = await q
    .selectFrom('domains')
    .select('id')
    .where('project_id', '=', caller.projectId)
    .where('id', 'in', ids)
    .execute();
  const missing = ids.filter((id) => !found.some((f) => f.id === id));
  if (missing.length) throw new AppError('invalid_related_entity', { entity: 'domains', ids: missing });
  enforce(mayAssignGroups(await callerFacts(caller), ids));
}

/** Authority over the user as he is now (his role, his groups) before editing, moving or deleting him. */
export async function assertAuthorityOverUser(q: Kysely<DB>, caller: Caller, userId: number): Promise<void> {
  if (userId === caller.userId) return;
  enforce(mayActOnUser(await callerFacts(caller), await userFacts(q, userId)));
}

/**
 * Taking over an account is acquiring its permissions: the password, login or e-mail of another user may be
 * set only with authority over him — and never when his login also belongs to other projects.
 */
export async function assertMayTakeOver(q: Kysely<DB>, caller: Caller, userId: number): Promise<void> {
  if (userId === caller.userId) return;
  // a login that also belongs to other projects is its owner's alone: one project's administrator must
  // not change how someone signs in to another project
  const shared = await q
    .selectFrom('users as u')
    .innerJoin('users as other', 'other.account_id', 'u.account_id')
    .select('other.id')
    .where('u.id', '=', userId)
    .where('other.project_id', '!=', caller.projectId)
    .limit(1)
    .executeTakeFirst();
  if (shared) throw new AppError('method_prohibited', { reason: 'account_shared' });
  await assertAuthorityOverUser(q, caller, userId);
}

/** The project's built-in Administrator role. */
export async function administratorRoleId(q: Kysely<DB>, projectId: number): Promise<number | undefined> {
  const r = await q
    .selectFrom('roles')
    .select('id')
    .where('project_id', '=', projectId)
    .where('is_system', '=', true)
    .where('name', '=', BuiltInRoles.administrator.name)
    .executeTakeFirst();
  return r?.id;
}

/** The Administrator role keeps every permission it holds. */
export async function assertAdministratorRoleKept(
  q: Kysely<DB>,
  projectId: number,
  roleId: number,
  held: readonly string[],
  next: readonly string[],
): Promise<void> {
  if ((await administratorRoleId(q, projectId)) !== roleId) return;
  enforce(mayEditAdministratorRole(held, next));
}

/**
 * A user leaving the Administrator role (a role change or a delete) may not be its last holder. The role's
 * row is locked so two such changes at once cannot both see another holder.
 */
export async function assertNotLastAdministrator(
  q: Kysely<DB>,
  projectId: number,
  userId: number,
): Promise<void> {
  const adminRole = await administratorRoleId(q, projectId);
  if (adminRole === undefined) return;
  const held = await q.selectFrom('users').select('role_id').where('id', '=', userId).executeTakeFirst();
  if (held?.role_id !== adminRole) return;
  await q.selectFrom('roles').select('id').where('id', '=', adminRole).forUpdate().execute();
  const n = await q
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('role_id', '=', adminRole)
    .executeTakeFirstOrThrow();
  const v = mayRemoveAdministrator(Number(n.n), 1);
  if (!v.ok) throw new AppError('cant_perform_action', v.data, 409);
}
