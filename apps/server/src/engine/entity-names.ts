import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DB } from '../db/schema';

/**
 * The names of the rows an audit event (or any journal row) names by `entity` and id: the audit log shows
 * "User · Anna Karenina", not "user 370" (issue 13 point 5). Every family store passes through
 * `familyHandlers`, which declares its entity here, so a new family is named without a line of its own;
 * entities that are not families (a sign-in's `account`) declare a reader of their own.
 */
export type NameReader = (
  q: Kysely<DB>,
  projectId: number,
  ids: readonly number[],
) => Promise<ReadonlyMap<number, string>>;

const readers = new Map<string, NameReader>();

export function declareEntityNames(entity: string, reader: NameReader): void {
  readers.set(entity, reader);
}

/** A reader over a family's rows: `from` has the main table as `t` with `id` and `project_id`. */
export function tableNames(from: RawBuilder<unknown>, name: RawBuilder<unknown>): NameReader {
  return async (q, projectId, ids) => {
    if (!ids.length) return new Map();
    const r = await sql<{ id: number; name: string | null }>`
      select t.id, ${name} as name from ${from}
      where t.project_id = ${projectId} and t.id in (${sql.join(ids)})`.execute(q);
    return new Map(r.rows.flatMap((row) => (row.name === null ? [] : [[row.id, row.name] as const])));
  };
}

export const entityKey = (entity: string, id: number) => `${entity}:${id}`;

/**
 * The current names of the rows named by `(entity, id)` in one project, keyed `entity:id`; a row that is gone
 * or an entity nobody declared has none (the caller falls back to what the event itself recorded).
 */
export async function entityNames(
  q: Kysely<DB>,
  projectId: number,
  refs: readonly { entity: string; id: number }[],
): Promise<Map<string, string>> {
  const byEntity = new Map<string, Set<number>>();
  for (const r of refs) {
    if (!readers.has(r.entity)) continue;
    let ids = byEntity.get(r.entity);
    if (!ids) byEntity.set(r.entity, (ids = new Set()));
    ids.add(r.id);
  }
  const out = new Map<string, string>();
  for (const [entity, ids] of byEntity) {
    const names = await readers.get(entity)!(q, projectId, [...ids]);
    for (const [id, name] of names) out.set(entityKey(entity, id), name);
  }
  return out;
}
