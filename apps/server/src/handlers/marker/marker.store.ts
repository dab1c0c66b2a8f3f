import { sql, type Kysely } from 'kysely';
import { markerResource, type Marker } from '@lintel/commands';
import type { DB } from '../../db/schema';
import { AppError } from '../../errors';
import { inIds } from '../../engine/caller';
import type { FamilyStore } from '../../engine/family';

export async function loadMarkers(q: Kysely<DB>, ids: readonly number[]): Promise<Marker[]> {
  if (ids.length === 0) return [];
  const rows = await sql<{ id: number; name: string; color: string; users_count: number; created_at: Date; created_by_id: number | null; created_by_name: string | null }>`
    select t.id, t.name, t.color, (select count(*)::int from user_markers um where um.marker_id = t.id) as users_count,
      t.created_at, cu.id as created_by_id, cu.name as created_by_name
    from markers t left join users cu on cu.id = t.created_by where t.id in (${sql.join(ids)})`.execute(q);
  const byId = new Map(rows.rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => {
    const r = byId.get(id);
    return r
      ? [{ id: r.id, name: r.name, color: r.color, users_count: r.users_count, created_at: r.created_at.toISOString(), created_by_user: r.created_by_id !== null ? { id: r.created_by_id, name: r.created_by_name ?? '' } : null }]
      : [];
  });
}

function mapUnique(err: unknown): never {
  if ((err as { code?: string }).code === '23505') throw new AppError('value_not_unique', { field: 'name' });
  throw err;
}

export const markerStore: FamilyStore<typeof markerResource> = {
  resource: markerResource,
  entity: 'marker',
  from: sql`markers t`,
  filterable: markerResource.filterable,
  sortable: markerResource.sortable,
  columns: {
    id: { expr: sql`t.id` },
    name: { expr: sql`t.name` },
    color: { expr: sql`t.color` },
    users_count: { expr: sql`(select count(*) from user_markers um where um.marker_id = t.id)` },
    created_at: { expr: sql`t.created_at` },
  },
  search: [sql`t.name`],
  createdBy: sql`t.created_by`,
  scopes: {
    view: [
      { permission: 'markers.view_all', scope: 'all' },
      { permission: 'markers.view', scope: 'descendants' },
    ],
    edit: [{ permission: 'markers.edit', scope: 'all' }],
    delete: [{ permission: 'markers.delete', scope: 'all' }],
    ownAlwaysVisible: true,
  },
  /** markers made by people of the caller's groups */
  async scopeSql(scope, caller) {
    if (scope === 'descendants') {
      const ids = await caller.subtree();
      return ids.length ? sql<boolean>`exists (select 1 from user_domains s where s.user_id = t.created_by and ${inIds(sql`s.domain_id`, ids)})` : sql<boolean>`false`;
    }
    if (scope === 'own') return sql<boolean>`t.created_by = ${caller.userId}`;
    return sql<boolean>`false`;
  },
  load: loadMarkers,
  async create(trx, args, ctx) {
    const row = await trx
      .insertInto('markers')
      .values({ project_id: ctx.caller.projectId, name: args.name, color: args.color.toLowerCase(), created_by: ctx.caller.userId })
      .returning('id')
      .executeTakeFirstOrThrow()
      .catch(mapUnique);
    return row.id;
  },
  async update(trx, id, args) {
    await trx
      .updateTable('markers')
      .set({ ...(args.name !== undefined ? { name: args.name } : {}), ...(args.color !== undefined ? { color: args.color.toLowerCase() } : {}) })
      .where('id', '=', id)
      .execute()
      .catch(mapUnique);
  },
  async remove(trx, id) {
    await trx.deleteFrom('markers').where('id', '=', id).execute();
    return null;
  },
};
