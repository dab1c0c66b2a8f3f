/**
 * Grant rules (spec part 2 §6) as pure predicates: given what is known of the caller and of the target, may
 * the caller act? No database, no clock: the server loads the facts (apps/server/src/engine/grants.ts) and
 * every path that assigns roles or groups — user create, update, delete, password, avatar, and the import —
 * asks the same questions here. The web or CLI may ask them too, to grey out what would be refused.
 */

/** What authorisation knows about the caller. */
export interface CallerFacts {
  userId: number;
  permissions: ReadonlySet<string>;
  /** the roles his role lists in `available_roles` */
  availableRoles: readonly number[];
  /** his groups and every group below them */
  subtree: readonly number[];
}

export interface RoleFacts {
  id: number;
  permissions: readonly string[];
}

/** A user as he is now: whoever acts on him needs authority over this, not only over what he becomes. */
export interface UserFacts {
  id: number;
  role: RoleFacts;
  domains: readonly number[];
}

/** `ok`, or why not: `reason` and its details go out as the data of `method_prohibited`. */
export type Verdict = { ok: true } | { ok: false; reason: string; data: Record<string, unknown> };

const OK: Verdict = { ok: true };
const no = (reason: string, data: Record<string, unknown> = {}): Verdict => ({
  ok: false,
  reason,
  data: { reason, ...data },
});

export const mayGrantMoreThanOwn = (c: CallerFacts) => c.permissions.has('roles.grant_more_than_own');

/** Permissions the caller would hand out without holding them. */
export function beyondOwn(c: CallerFacts, permissions: readonly string[]): string[] {
  return mayGrantMoreThanOwn(c) ? [] : permissions.filter((p) => !c.permissions.has(p));
}

/** Handing out permissions (a role's list): only those held, unless "grant more than own". */
export function mayGrantPermissions(c: CallerFacts, permissions: readonly string[]): Verdict {
  const beyond = beyondOwn(c, permissions);
  return beyond.length ? no('grant_more_than_own', { permissions: beyond }) : OK;
}

/** Giving a user this role: one his role lists, holding nothing beyond his, unless "grant more than own". */
export function mayGrantRole(c: CallerFacts, role: RoleFacts): Verdict {
  if (mayGrantMoreThanOwn(c)) return OK;
  if (!c.availableRoles.includes(role.id)) return no('role_not_available', { role: role.id });
  return mayGrantPermissions(c, role.permissions);
}

/** Listing roles in a role's `available_roles`: only roles the caller may assign himself. */
export function mayListRoles(c: CallerFacts, roleIds: readonly number[]): Verdict {
  if (mayGrantMoreThanOwn(c)) return OK;
  const beyond = roleIds.filter((id) => !c.availableRoles.includes(id));
  return beyond.length ? no('role_not_available', { roles: beyond }) : OK;
}

/** Groups are anyone's with project-wide view of groups or users, else the caller's subtree. */
export const reachesAllGroups = (c: CallerFacts) =>
  c.permissions.has('domains.view_all') || c.permissions.has('users.view_all');

/** Putting a user into (or taking him out of) these groups. */
export function mayAssignGroups(c: CallerFacts, ids: readonly number[]): Verdict {
  if (reachesAllGroups(c)) return OK;
  const mine = new Set(c.subtree);
  const beyond = [...new Set(ids)].filter((id) => !mine.has(id));
  return beyond.length ? no('domain_out_of_scope', { domains: beyond }) : OK;
}

/**
 * Authority over a user as he is: his current role must be one the caller could give him, and his current
 * groups within the caller's reach — else editing, moving or deleting him would act on someone richer or
 * elsewhere. One's own record is one's own (what one may change on it is the family's field rule). Refusals
 * say `target` so a client can tell them from refusals of the new values.
 */
export function mayActOnUser(c: CallerFacts, target: UserFacts): Verdict {
  if (target.id === c.userId) return OK;
  for (const v of [mayGrantRole(c, target.role), mayAssignGroups(c, target.domains)]) {
    if (!v.ok) return { ...v, data: { ...v.data, target: target.id } };
  }
  return OK;
}

/** Changing a user's role is "edit users' roles" (roles.edit_users), then a grant of the new role. */
export function mayChangeUserRole(c: CallerFacts, role: RoleFacts): Verdict {
  if (!c.permissions.has('roles.edit_users')) return no('edit_users');
  return mayGrantRole(c, role);
}

/**
 * The project's Administrator role is the way back from any mistake: it keeps every permission it holds.
 * Changing its permissions so that one is missing is refused, whoever asks.
 */
export function mayEditAdministratorRole(held: readonly string[], next: readonly string[]): Verdict {
  const kept = new Set(next);
  const missing = held.filter((p) => !kept.has(p));
  return missing.length ? no('administrator_role', { permissions: missing }) : OK;
}

/**
 * A system role (Private client, Installer: what self-registration and every group hand out) changes its
 * permissions only for whoever edits all roles, and never loses all of them (issue 20, item 10: a scoped
 * administrator emptied Private client).
 */
export function maySetSystemRolePermissions(next: readonly string[], editsAllRoles: boolean): Verdict {
  if (!editsAllRoles) return no('system_role');
  return next.length === 0 ? no('system_role_emptied') : OK;
}

/** The last holder of the Administrator role may not lose it, nor be deleted: someone must be able to fix things. */
export function mayRemoveAdministrator(holders: number, leaving: number): Verdict {
  return holders - leaving < 1 ? no('last_administrator') : OK;
}
