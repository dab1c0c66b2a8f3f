import type { Kysely } from 'kysely';
import type { DB } from '../db/schema';
import { AppError } from '../errors';
import type { Caller } from './caller';

/**
 * Guarding privilege escalation (spec part 2 §6): a caller may assign or edit only the roles his role lists
 * in `available_roles`, and may not hand out a permission he does not hold — unless his role has
 * "grant more than own".
 */
export async function assertMayGrantRole(q: Kysely<DB>, caller: Caller, roleId: number): Promise<void> {
  const role = await q.selectFrom('roles').select(['id', 'permissions']).where('id', '=', roleId).where('project_id', '=', caller.projectId).executeTakeFirst();
  if (!role) throw new AppError('invalid_related_entity', { entity: 'roles', ids: [roleId] });
  if (caller.has('roles.grant_more_than_own')) return;
  if (!(await caller.availableRoles()).includes(roleId)) throw new AppError('method_prohibited', { reason: 'role_not_available', role: roleId });
  const beyond = role.permissions.filter((p) => !caller.has(p));
  if (beyond.length) throw new AppError('method_prohibited', { reason: 'grant_more_than_own', permissions: beyond });
}

export function assertMayGrantPermissions(caller: Caller, permissions: readonly string[]): void {
  if (caller.has('roles.grant_more_than_own')) return;
  const beyond = permissions.filter((p) => !caller.has(p));
  if (beyond.length) throw new AppError('method_prohibited', { reason: 'grant_more_than_own', permissions: beyond });
}

export async function assertMayListRoles(q: Kysely<DB>, caller: Caller, roleIds: readonly number[]): Promise<void> {
  if (!roleIds.length) return;
  const found = await q.selectFrom('roles').select('id').where('project_id', '=', caller.projectId).where('id', 'in', roleIds).execute();
  const missing = roleIds.filter((id) => !found.some((f) => f.id === id));
  if (missing.length) throw new AppError('invalid_related_entity', { entity: 'roles', ids: missing });
  if (caller.has('roles.grant_more_than_own')) return;
  const available = new Set(await caller.availableRoles());
  const beyond = roleIds.filter((id) => !available.has(id));
  if (beyond.length) throw new AppError('method_prohibited', { reason: 'role_not_available', roles: beyond });
}

/** Groups a caller may put users into: any with project-wide view, else his own subtree. */
export async function assertAssignableGroups(q: Kysely<DB>, caller: Caller, ids: readonly number[]): Promise<void> {
  if (!ids.length) return;
  const found = await q.selectFrom('domains').select('id').where('project_id', '=', caller.projectId).where('id', 'in', ids).execute();
  const missing = ids.filter((id) => !found.some((f) => f.id === id));
  if (missing.length) throw new AppError('invalid_related_entity', { entity: 'domains', ids: missing });
  if (caller.has('domains.view_all') || caller.has('users.view_all')) return;
  const mine = new Set(await caller.subtree());
  const beyond = ids.filter((id) => !mine.has(id));
  if (beyond.length) throw new AppError('method_prohibited', { reason: 'domain_out_of_scope', domains: beyond });
}

/**
 * Taking over an account is acquiring its permissions: the password, login or e-mail of another user may be
 * set only when his role holds nothing beyond the caller's — unless the caller may grant more than own.
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
  if (caller.has('roles.grant_more_than_own')) return;
  const row = await q.selectFrom('users').innerJoin('roles', 'roles.id', 'users.role_id').select('roles.permissions').where('users.id', '=', userId).executeTakeFirst();
  const beyond = (row?.permissions ?? []).filter((p) => !caller.has(p));
  if (beyond.length) throw new AppError('method_prohibited', { reason: 'grant_more_than_own', permissions: beyond });
}
