import { sql, type Kysely } from 'kysely';
import { roleResource, type Role } from '@lintel/commands';
import { AllPermissions, PermissionCategories, maySetSystemRolePermissions } from '@lintel/core';
import type { DB } from '../../db/schema';
import { AppError } from '../../errors';
import { inIds } from '../../engine/caller';
import type { FamilyStore } from '../../engine/family';
import { uniqueError } from '../../engine/table-store';
import {
  assertAdministratorRoleKept,
  assertMayGrantPermissions,
  assertMayListRoles,
  enforce,
} from '../../engine/grants';
import { RoleChangedEvent } from '../../events/define';
import { BuiltInRoles } from '../../bootstrap';

const known: ReadonlySet<string> = new Set(AllPermissions);
const sameSet = (a: readonly string[], b: readonly string[]) =>
  new Set(a).size === new Set(b).size && a.every((x) => b.includes(x));

function groupPermissions(permissions: readonly string[]): Role['permission_groups'] {
  const held = new Set(permissions);
  return Object.entries(PermissionCategories)
    .map(([category, codes]) => ({
      category,
      items: (codes as readonly string[]).filter((c) => held.has(c)),
    }))
    .filter((g) => g.items.length > 0);
}

export async function loadRoles(q: Kysely<DB>, ids: readonly number[]): Promise<Role[]> {
  if (ids.length === 0) return [];
  const rows = await sql<{
    id: number;
    name: string;
    description: string;
    permissions: string[];
    available_roles: number[];
    is_system: boolean;
    users_count: number;
    created_at: Date;
    created_by_id: number | null;
    created_by_name: string | null;
  }>`
    select t.id, t.name, t.description, t.permissions, t.available_roles, t.is_system,
      (select count(*)::int from users u where u.role_id = t.id) as users_count,
      t.created_at, cu.id as created_by_id, cu.name as created_by_name
    from roles t left join users cu on cu.id = t.created_by
    where t.id in (${sql.join(ids)})`.execute(q);
  const refIds = [...new Set(rows.rows.flatMap((r) => r.available_roles.map(Number)))];
  const names = refIds.length
    ? await q.selectFrom('roles').select(['id', 'name']).where('id', 'in', refIds).execute()
    : [];
  const nameOf = new Map(names.map((n) => [n.id, n.name]));
  const byId = new Map(rows.rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => {
    const r = byId.get(id);
    if (!r) return [];
    return [
      {
        id: r.id,
        name: r.name,
        description: r.description,
        permissions: r.permissions,
        permission_groups: groupPermissions(r.permissions),
        available_roles: r.available_roles
          .map(Number)
          .filter((rid) => nameOf.has(rid))
          .map((rid) => ({ id: rid, name: nameOf.get(rid)! })),
        is_system: r.is_system,
        users_count: r.users_count,
        created_at: r.created_at.toISOString(),
        created_by_user:
          r.created_by_id !== null ? { id: r.created_by_id, name: r.created_by_name ?? '' } : null,
      },
    ];
  });
}

function assertKnown(permissions: readonly string[]) {
  const unknown = permissions.filter((p) => !known.has(p));
  if (unknown.length)
    throw new AppError('check_fields_data', {
      fields: [{ field: 'permissions', rule: 'unknown_permission', params: { codes: unknown } }],
    });
}

/** a duplicate name: the declaration's unique field, mapped by the generic store's rule */
const mapUnique = (err: unknown): never => uniqueError(roleResource, err);

export const roleStore: FamilyStore<typeof roleResource> = {
  resource: roleResource,
  entity: 'role',
  from: sql`roles t`,
  filterable: roleResource.filterable,
  sortable: roleResource.sortable,
  columns: {
    id: { expr: sql`t.id` },
    name: { expr: sql`t.name` },
    description: { expr: sql`t.description` },
    users_count: { expr: sql`(select count(*) from users u where u.role_id = t.id)` },
    is_system: { expr: sql`t.is_system` },
    created_at: { expr: sql`t.created_at` },
  },
  search: [sql`t.name`, sql`t.description`],
  createdBy: sql`t.created_by`,
  scopes: {
    view: [
      { permission: 'roles.view_all', scope: 'all' },
      { permission: 'roles.view', scope: 'available' },
      { permission: 'roles.view_users', scope: 'held' },
    ],
    edit: [
      { permission: 'roles.edit_all', scope: 'all' },
      { permission: 'roles.edit_available', scope: 'available' },
      { permission: 'roles.edit', scope: 'own' },
    ],
    delete: [
      { permission: 'roles.delete_all', scope: 'all' },
      { permission: 'roles.delete_available', scope: 'available' },
      { permission: 'roles.delete', scope: 'own' },
    ],
    ownAlwaysVisible: true,
  },
  async scopeSql(scope, caller) {
    if (scope === 'available') return inIds(sql`t.id`, [...(await caller.availableRoles()), caller.roleId]);
    if (scope === 'held') {
      const ids = await caller.subtree();
      return ids.length
        ? sql<boolean>`exists (select 1 from users u join user_domains s on s.user_id = u.id where u.role_id = t.id and ${inIds(sql`s.domain_id`, ids)})`
        : sql<boolean>`false`;
    }
    if (scope === 'own') return sql<boolean>`t.created_by = ${caller.userId}`;
    return sql<boolean>`false`;
  },
  load: loadRoles,

  async create(trx, args, ctx) {
    const { caller } = ctx;
    const permissions = [...new Set(args.permissions)];
    assertKnown(permissions);
    await assertMayGrantPermissions(caller, permissions);
    const available = [...new Set(args.available_roles ?? [])];
    await assertMayListRoles(trx, caller, available);
    const row = await trx
      .insertInto('roles')
      .values({
        project_id: caller.projectId,
        name: args.name,
        description: args.description ?? '',
        permissions: JSON.stringify(permissions),
        available_roles: JSON.stringify(available),
        created_by: caller.userId,
      })
      .returning('id')
      .executeTakeFirstOrThrow()
      .catch(mapUnique);
    // whoever creates a role may assign it
    const mine = await trx
      .selectFrom('roles')
      .select('available_roles')
      .where('id', '=', caller.roleId)
      .executeTakeFirstOrThrow();
    await trx
      .updateTable('roles')
      .set({ available_roles: JSON.stringify([...mine.available_roles, row.id]) })
      .where('id', '=', caller.roleId)
      .execute();
    return row.id;
  },

  async update(trx, id, args, ctx, before) {
    const { caller } = ctx;
    if (args.permissions) {
      const permissions = [...new Set(args.permissions)];
      assertKnown(permissions);
      // only what is added must be held: removing what one lacks is fine
      await assertMayGrantPermissions(
        caller,
        permissions.filter((p) => !before.permissions.includes(p)),
      );
      // but nobody empties the Administrator role: it is the way back from every mistake
      await assertAdministratorRoleKept(trx, caller.projectId, id, before.permissions, permissions);
      // nor a system role (Private client is every group's), and only whoever edits all roles changes one
      if (before.is_system && !sameSet(permissions, before.permissions))
        enforce(maySetSystemRolePermissions(permissions, caller.has('roles.edit_all')));
    }
    if (args.available_roles) {
      const had = new Set(before.available_roles.map((r) => r.id));
      await assertMayListRoles(
        trx,
        caller,
        [...new Set(args.available_roles)].filter((r) => !had.has(r)),
      );
    }
    await trx
      .updateTable('roles')
      .set({
        ...(args.name !== undefined ? { name: args.name } : {}),
        ...(args.description !== undefined ? { description: args.description } : {}),
        ...(args.permissions ? { permissions: JSON.stringify([...new Set(args.permissions)]) } : {}),
        ...(args.available_roles
          ? { available_roles: JSON.stringify([...new Set(args.available_roles)]) }
          : {}),
        updated_at: ctx.app.clock.now(),
      })
      .where('id', '=', id)
      .execute()
      .catch(mapUnique);
    // a role change reaches its holders at once: their consoles refresh the profile (spec part 1 §4);
    // written with the change, so it is sent if and only if the change commits
    const same = (a: readonly unknown[], b: readonly unknown[]) =>
      new Set(a).size === new Set(b).size && a.every((x) => new Set(b).has(x));
    const changed =
      (args.permissions !== undefined && !same(args.permissions, before.permissions)) ||
      (args.available_roles !== undefined &&
        !same(
          args.available_roles,
          before.available_roles.map((r) => r.id),
        ));
    if (changed)
      await ctx.app.outbox.emit(trx, RoleChangedEvent, { roleId: id, projectId: caller.projectId });
  },

  /**
   * Gently (the default) keeps a role that users hold and reports how many. Not gently deletes it and moves
   * its holders to the project's built-in Private client role, the one with least rights.
   */
  async remove(trx, id, ctx, options) {
    const gently = options.gently !== false;
    const role = await trx
      .selectFrom('roles')
      .select(['is_system', 'project_id'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    if (role.is_system) return { reason: 'system_role' };
    const users = Number(
      (
        await trx
          .selectFrom('users')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('role_id', '=', id)
          .executeTakeFirstOrThrow()
      ).n,
    );
    if (users && gently) return { reason: 'has_dependencies', dependencies: { users } };
    if (users) {
      const fallback = await trx
        .selectFrom('roles')
        .select('id')
        .where('project_id', '=', role.project_id)
        .where('is_system', '=', true)
        .where('name', '=', BuiltInRoles.private.name)
        .executeTakeFirstOrThrow();
      await trx.updateTable('users').set({ role_id: fallback.id }).where('role_id', '=', id).execute();
      // its holders now hold the Private client role: their consoles reload the profile
      await ctx.app.outbox.emit(trx, RoleChangedEvent, { roleId: id, projectId: role.project_id });
    }
    await sql`update roles set available_roles = (select coalesce(jsonb_agg(x), '[]'::jsonb) from jsonb_array_elements(available_roles) x where x <> ${JSON.stringify(id)}::jsonb)
      where project_id = ${role.project_id} and available_roles @> ${JSON.stringify([id])}::jsonb`.execute(
      trx,
    );
    await trx.deleteFrom('roles').where('id', '=', id).execute();
    return null;
  },
};
