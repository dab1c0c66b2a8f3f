import { sql, type Kysely } from 'kysely';
import { domainTypeResource, type DomainType } from '@lintel/commands';
import type { DB } from '../../db/schema';
import { AppError } from '../../errors';
import type { FamilyStore } from '../../engine/family';

export async function loadDomainTypes(q: Kysely<DB>, ids: readonly number[]): Promise<DomainType[]> {
  if (ids.length === 0) return [];
  const rows = await sql<{ id: number; type: string; name: string; domains_count: number; created_at: Date }>`
    select t.id, t.type, t.name, (select count(*)::int from domains d where d.domain_type_id = t.id) as domains_count, t.created_at
    from domain_types t where t.id in (${sql.join(ids)})`.execute(q);
  const byId = new Map(rows.rows.map((r) => [r.id, { ...r, created_at: r.created_at.toISOString() }]));
  return ids.flatMap((id) => (byId.has(id) ? [byId.get(id)!] : []));
}

function mapUnique(err: unknown): never {
  if ((err as { code?: string }).code === '23505') throw new AppError('value_not_unique', { field: 'type' });
  throw err;
}

const all = (permissions: readonly string[]) => permissions.map((permission) => ({ permission, scope: 'all' as const }));

export const domainTypeStore: FamilyStore<typeof domainTypeResource> = {
  resource: domainTypeResource,
  entity: 'domain_type',
  from: sql`domain_types t`,
  filterable: domainTypeResource.filterable,
  sortable: domainTypeResource.sortable,
  columns: {
    id: { expr: sql`t.id` },
    type: { expr: sql`t.type` },
    name: { expr: sql`t.name` },
    domains_count: { expr: sql`(select count(*) from domains d where d.domain_type_id = t.id)` },
  },
  search: [sql`t.name`, sql`t.type`],
  createdBy: null,
  scopes: {
    view: all(domainTypeResource.gates.view),
    edit: all(domainTypeResource.gates.edit),
    delete: all(domainTypeResource.gates.delete),
    ownAlwaysVisible: false,
  },
  async scopeSql() {
    return sql<boolean>`false`;
  },
  load: loadDomainTypes,
  async create(trx, args, ctx) {
    const row = await trx.insertInto('domain_types').values({ project_id: ctx.caller.projectId, type: args.type, name: args.name }).returning('id').executeTakeFirstOrThrow().catch(mapUnique);
    return row.id;
  },
  async update(trx, id, args) {
    await trx
      .updateTable('domain_types')
      .set({ ...(args.type !== undefined ? { type: args.type } : {}), ...(args.name !== undefined ? { name: args.name } : {}) })
      .where('id', '=', id)
      .execute()
      .catch(mapUnique);
  },
  /** a type that groups still use stays, and says how many */
  async remove(trx, id) {
    const n = Number((await trx.selectFrom('domains').select((eb) => eb.fn.countAll<number>().as('n')).where('domain_type_id', '=', id).executeTakeFirstOrThrow()).n);
    if (n) return { reason: 'has_dependencies', dependencies: { domains: n } };
    await trx.deleteFrom('domain_types').where('id', '=', id).execute();
    return null;
  },
};
