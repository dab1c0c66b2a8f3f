import { sql, type Kysely, type Transaction } from 'kysely';
import type { z } from 'zod';
import { groupResource, type Group } from '@lintel/commands';
import { GroupLicenseSettings, GroupLimitKeys, shapeGroupLicenseSettings } from '@lintel/core';
import type { DB } from '../../db/schema';
import { AppError } from '../../errors';
import { inIds, type Caller } from '../../engine/caller';
import type { FamilyCtx, FamilyStore } from '../../engine/family';
import { assertMayEditLicences, checkGroupLicences, lockGroupLicences } from '../../licensing/group-licences';

type GroupInput = z.output<typeof groupResource.commands.create.args>;

export const DefaultWhiteLabel = {
  is_enabled: false,
  logo: null,
  name: '',
  address: '',
  email: '',
  phone: '',
};
export const DefaultGuestLimits = { max_passes_count: null, max_period_days: null };
export const DefaultLicenseSettings: z.output<typeof GroupLicenseSettings> = {
  is_enabled: false,
  notifications: { period: 'never', notify_before: 0 },
  licenses: [],
};

const iso = (d: Date) => d.toISOString();
const NoLimits = Object.fromEntries(GroupLimitKeys.map((k) => [k, null]));

/**
 * The stored settings as the record gives them: every flag of each licence's feature set spelled out; a
 * licence the schema no longer reads (an older shape) is left out rather than failing the whole group.
 */
function storedSettings(raw: Record<string, unknown>): Group['license_settings'] {
  const whole = GroupLicenseSettings.safeParse({ ...DefaultLicenseSettings, ...raw });
  if (whole.success) return whole.data;
  const base = GroupLicenseSettings.omit({ licenses: true }).safeParse({ ...DefaultLicenseSettings, ...raw });
  const licenses = Array.isArray(raw.licenses) ? raw.licenses : [];
  return {
    ...(base.success ? base.data : DefaultLicenseSettings),
    licenses: licenses.flatMap((l) => {
      const one = GroupLicenseSettings.shape.licenses.element.safeParse(l);
      return one.success ? [one.data] : [];
    }),
  };
}

/** The maximums given a value that differs from what is stored (null clears one). */
function changedLimits(
  before: Record<string, number | null | undefined>,
  given: Record<string, number | null | undefined> | undefined,
): string[] {
  return Object.entries(given ?? {})
    .filter(([k, v]) => v !== undefined && (before[k] ?? null) !== v)
    .map(([k]) => k);
}

export async function loadGroups(q: Kysely<DB>, ids: readonly number[]): Promise<Group[]> {
  if (ids.length === 0) return [];
  const rows = await sql<{
    id: number;
    name: string;
    description: string;
    parent_id: number | null;
    parent_name: string | null;
    logic_address: string | null;
    domain_type_id: number | null;
    type_name: string | null;
    whitelabel_settings: Record<string, unknown>;
    guest_identifier_limits: Record<string, unknown>;
    device_status_notify: Group['device_status_notify'];
    license_settings: Record<string, unknown>;
    license_limits: Record<string, number | null>;
    users_count: number;
    children_count: number;
    created_at: Date;
    created_by_id: number | null;
    created_by_name: string | null;
  }>`
    select t.id, t.name, t.description, t.parent_id, p.name as parent_name, t.logic_address, t.domain_type_id,
      dt.name as type_name, t.whitelabel_settings, t.guest_identifier_limits, t.device_status_notify, t.license_settings, t.license_limits,
      (select count(*)::int from user_domains ud where ud.domain_id = t.id) as users_count,
      (select count(*)::int from domains c where c.parent_id = t.id) as children_count,
      t.created_at, cu.id as created_by_id, cu.name as created_by_name
    from domains t
    left join domains p on p.id = t.parent_id
    left join domain_types dt on dt.id = t.domain_type_id
    left join users cu on cu.id = t.created_by
    where t.id in (${sql.join(ids)})`.execute(q);
  // each group's ancestors, nearest first, in one recursive query
  const ancestors = await sql<{ start: number; id: number; name: string; depth: number }>`
    with recursive anc(start, id, name, depth) as (
      select t.id, p.id, p.name, 1 from domains t join domains p on p.id = t.parent_id
        where t.id in (${sql.join(ids)})
      union all
      select a.start, g.id, g.name, a.depth + 1 from anc a
        join domains d on d.id = a.id join domains g on g.id = d.parent_id
        where a.depth < 64
    )
    select start, id, name, depth from anc order by start, depth desc`.execute(q);
  const paths = new Map<number, { id: number; name: string }[]>();
  for (const a of ancestors.rows) {
    const list = paths.get(a.start) ?? [];
    list.push({ id: a.id, name: a.name });
    paths.set(a.start, list);
  }
  const byId = new Map(rows.rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => {
    const r = byId.get(id);
    if (!r) return [];
    return [
      {
        id: r.id,
        name: r.name,
        description: r.description,
        parent_id: r.parent_id,
        parent: r.parent_id !== null ? { id: r.parent_id, name: r.parent_name ?? '' } : null,
        path: paths.get(r.id) ?? [],
        logic_address: r.logic_address,
        domain_type_id: r.domain_type_id,
        type: r.type_name,
        whitelabel_settings: {
          ...DefaultWhiteLabel,
          ...r.whitelabel_settings,
        } as Group['whitelabel_settings'],
        guest_identifier_limits: {
          ...DefaultGuestLimits,
          ...r.guest_identifier_limits,
        } as Group['guest_identifier_limits'],
        device_status_notify: r.device_status_notify ?? [],
        license_settings: storedSettings(r.license_settings),
        // the spec's maximums always spelled out (null: none), then any a family declared
        license_limits: { ...NoLimits, ...r.license_limits },
        users_count: r.users_count,
        children_count: r.children_count,
        created_at: iso(r.created_at),
        created_by_user:
          r.created_by_id !== null ? { id: r.created_by_id, name: r.created_by_name ?? '' } : null,
      },
    ];
  });
}

/** May the caller put a group under `parentId` (null: a root group)? */
export async function assertMayPlaceUnder(
  q: Kysely<DB>,
  caller: Caller,
  parentId: number | null,
): Promise<void> {
  if (parentId === null) {
    if (!caller.has('domains.create_root'))
      throw new AppError('method_prohibited', { reason: 'create_root' });
    return;
  }
  const parent = await q
    .selectFrom('domains')
    .select('id')
    .where('id', '=', parentId)
    .where('project_id', '=', caller.projectId)
    .executeTakeFirst();
  if (!parent) throw new AppError('invalid_related_entity', { entity: 'domains', ids: [parentId] });
  const inSubtree = (await caller.subtree()).includes(parentId);
  const anywhere =
    caller.has('domains.view_all') && (caller.has('domains.edit_all') || caller.has('domains.create_root'));
  if (!(
    anywhere ||
    (inSubtree && caller.hasAny(['domains.create_descendant', 'domains.edit_all', 'domains.edit_descendant']))
  ))
    throw new AppError('method_prohibited', { reason: 'create_descendant' });
}

async function assertRelated(q: Kysely<DB>, projectId: number, input: Partial<GroupInput>): Promise<void> {
  if (input.domain_type_id) {
    const t = await q
      .selectFrom('domain_types')
      .select('id')
      .where('id', '=', input.domain_type_id)
      .where('project_id', '=', projectId)
      .executeTakeFirst();
    if (!t)
      throw new AppError('invalid_related_entity', { entity: 'domain_types', ids: [input.domain_type_id] });
  }
  const userIds = [...new Set((input.device_status_notify ?? []).map((n) => n.user_id))];
  if (userIds.length) {
    const found = await q
      .selectFrom('users')
      .select('id')
      .where('project_id', '=', projectId)
      .where('id', 'in', userIds)
      .execute();
    const missing = userIds.filter((id) => !found.some((f) => f.id === id));
    if (missing.length) throw new AppError('invalid_related_entity', { entity: 'users', ids: missing });
  }
}

const json = (v: unknown) => JSON.stringify(v);

/** The keys of the shaped settings that the call gave (a partial update keeps the others as stored). */
const partialOf = (shaped: Record<string, unknown>, given: Record<string, unknown>) =>
  Object.fromEntries(Object.keys(given).map((k) => [k, shaped[k]]));

function mapUnique(err: unknown): never {
  if ((err as { code?: string }).code === '23505') throw new AppError('domain_exists');
  throw err;
}

export const groupStore: FamilyStore<typeof groupResource> = {
  resource: groupResource,
  entity: 'group',
  from: sql`domains t left join domain_types dt on dt.id = t.domain_type_id`,
  filterable: groupResource.filterable,
  sortable: groupResource.sortable,
  columns: {
    id: { expr: sql`t.id` },
    name: { expr: sql`t.name` },
    description: { expr: sql`t.description` },
    parent_id: { expr: sql`t.parent_id` },
    logic_address: { expr: sql`t.logic_address` },
    domain_type_id: { expr: sql`t.domain_type_id` },
    type: { expr: sql`dt.name` },
    users_count: { expr: sql`(select count(*) from user_domains ud where ud.domain_id = t.id)` },
    children_count: { expr: sql`(select count(*) from domains c where c.parent_id = t.id)` },
    created_at: { expr: sql`t.created_at` },
  },
  search: [sql`t.name`, sql`t.logic_address`, sql`t.description`],
  createdBy: null,
  scopes: {
    view: [
      { permission: 'domains.view_all', scope: 'all' },
      ...[
        'domains.create_root',
        'domains.create_descendant',
        'domains.edit_all',
        'domains.edit_descendant',
        'domains.own_general',
      ].map((permission) => ({ permission, scope: 'descendants' as const })),
    ],
    edit: [
      { permission: 'domains.edit_all', scope: 'all' },
      { permission: 'domains.edit_descendant', scope: 'children' },
      { permission: 'domains.own_general', scope: 'domain' },
    ],
    delete: [
      { permission: 'domains.delete_all', scope: 'all' },
      { permission: 'domains.delete_self', scope: 'domain' },
    ],
    ownAlwaysVisible: false,
  },
  async scopeSql(scope, caller) {
    if (scope === 'descendants') return inIds(sql`t.id`, await caller.subtree());
    if (scope === 'domain') return inIds(sql`t.id`, await caller.domains());
    if (scope === 'children') {
      const own = new Set(await caller.domains());
      return inIds(
        sql`t.id`,
        (await caller.subtree()).filter((id) => !own.has(id)),
      );
    }
    return sql<boolean>`false`;
  },
  load: loadGroups,

  async create(trx, args, ctx) {
    await assertMayPlaceUnder(trx, ctx.caller, args.parent_id);
    await assertRelated(trx, ctx.caller.projectId, args);
    const settings = shapeGroupLicenseSettings({ ...DefaultLicenseSettings, ...args.license_settings });
    const limits = args.license_limits ?? {};
    const licensed = JSON.stringify(settings) !== JSON.stringify(DefaultLicenseSettings);
    const limited = changedLimits({}, limits);
    if (licensed || limited.length) {
      await assertMayEditLicences(ctx.caller, { parentId: args.parent_id });
      await lockGroupLicences(trx, ctx.caller.projectId);
    }
    const row = await trx
      .insertInto('domains')
      .values({
        project_id: ctx.caller.projectId,
        parent_id: args.parent_id,
        name: args.name,
        description: args.description ?? '',
        logic_address: args.logic_address || null,
        domain_type_id: args.domain_type_id ?? null,
        whitelabel_settings: json(DefaultWhiteLabel),
        guest_identifier_limits: json({ ...DefaultGuestLimits, ...args.guest_identifier_limits }),
        device_status_notify: json(args.device_status_notify ?? []),
        license_settings: json(settings),
        license_limits: json(limits),
        created_by: ctx.caller.userId,
      })
      .returning('id')
      .executeTakeFirstOrThrow()
      .catch(mapUnique);
    if (licensed || limited.length)
      await checkGroupLicences(trx, row.id, { limits: limited, settings: licensed, moved: true });
    return row.id;
  },

  async update(trx, id, args, ctx, before) {
    if (args.parent_id !== undefined && args.parent_id !== before.parent_id) {
      if (args.parent_id !== null) {
        const below = await sql<{ id: number }>`
          with recursive tree(id) as (select ${id}::int union select d.id from domains d join tree on d.parent_id = tree.id)
          select id from tree where id = ${args.parent_id}`.execute(trx);
        if (below.rows.length)
          throw new AppError('wrong_parameters', { field: 'parent_id', reason: 'cycle' });
      }
      await assertMayPlaceUnder(trx, ctx.caller, args.parent_id);
    }
    await assertRelated(trx, ctx.caller.projectId, args);
    // the licence part: who may change it, then every change of groups' licences in the project one at a time
    const given = args.license_settings
      ? shapeGroupLicenseSettings({ ...before.license_settings, ...args.license_settings })
      : null;
    const settingsChanged = !!given && JSON.stringify(given) !== JSON.stringify(before.license_settings);
    const limits = changedLimits(before.license_limits, args.license_limits);
    const moved = args.parent_id !== undefined && args.parent_id !== before.parent_id;
    if (settingsChanged || limits.length) await assertMayEditLicences(ctx.caller, { id });
    if (settingsChanged || limits.length || moved) await lockGroupLicences(trx, ctx.caller.projectId);
    await trx
      .updateTable('domains')
      .set({
        ...(args.name !== undefined ? { name: args.name } : {}),
        ...(args.description !== undefined ? { description: args.description } : {}),
        ...(args.parent_id !== undefined ? { parent_id: args.parent_id } : {}),
        ...(args.logic_address !== undefined ? { logic_address: args.logic_address || null } : {}),
        ...(args.domain_type_id !== undefined ? { domain_type_id: args.domain_type_id } : {}),
        ...(args.guest_identifier_limits
          ? {
              guest_identifier_limits: json({
                ...before.guest_identifier_limits,
                ...args.guest_identifier_limits,
              }),
            }
          : {}),
        ...(args.device_status_notify ? { device_status_notify: json(args.device_status_notify) } : {}),
        // merged in SQL, key by key, over what is stored when the lock is held (not over `before`)
        ...(given && settingsChanged
          ? {
              license_settings: sql`license_settings || ${json(partialOf(given, args.license_settings!))}::jsonb`,
            }
          : {}),
        ...(limits.length
          ? {
              license_limits: sql`license_limits || ${json(
                Object.fromEntries(limits.map((k) => [k, args.license_limits![k] ?? null])),
              )}::jsonb`,
            }
          : {}),
        updated_at: ctx.app.clock.now(),
      })
      .where('id', '=', id)
      .execute()
      .catch(mapUnique);
    if (settingsChanged || limits.length || moved)
      await checkGroupLicences(trx, id, { limits, settings: settingsChanged, moved });
  },

  async remove(trx, id) {
    const [children, users] = await Promise.all([
      trx
        .selectFrom('domains')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('parent_id', '=', id)
        .executeTakeFirstOrThrow(),
      trx
        .selectFrom('user_domains')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('domain_id', '=', id)
        .executeTakeFirstOrThrow(),
    ]);
    // the group's devices keep it too (their table is raw SQL: not in the typed schema)
    const devices = await sql<{
      n: number;
    }>`select count(*)::int as n from devices where domain_id = ${id}`.execute(trx);
    const deviceCount = Number(devices.rows[0]?.n ?? 0);
    if (Number(children.n) || Number(users.n) || deviceCount)
      return {
        reason: 'has_dependencies',
        dependencies: {
          children: Number(children.n),
          users: Number(users.n),
          ...(deviceCount ? { devices: deviceCount } : {}),
        },
      };
    await trx.deleteFrom('domains').where('id', '=', id).execute();
    return null;
  },
};

export type { Transaction, FamilyCtx };
