import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema';
import { AppError } from '../errors';

interface Entry {
  feature: string;
  is_active: boolean;
  max: number | null;
}

/**
 * A group's licence settings may cap how many users its subtree holds (an entry for the feature `users`
 * with a maximum). Adding users to groups checks every capped group above them:
 * "Limit exceeded - used {used}, max {max}".
 */
export async function assertUserLimit(q: Kysely<DB>, domainIds: readonly number[], userId: number | null): Promise<void> {
  if (!domainIds.length) return;
  // every group at or above the target groups that caps users
  const capped = await sql<{ id: number; name: string; license_settings: { is_enabled?: boolean; licenses?: Entry[] } }>`
    with recursive up(id) as (
      select id from domains where id in (${sql.join(domainIds)})
      union
      select d.parent_id from domains d join up on d.id = up.id where d.parent_id is not null
    )
    select d.id, d.name, d.license_settings from domains d join up on up.id = d.id`.execute(q);
  for (const g of capped.rows) {
    const entry = g.license_settings.is_enabled ? g.license_settings.licenses?.find((l) => l.feature === 'users' && l.is_active && l.max !== null) : undefined;
    if (!entry) continue;
    const used = await sql<{ n: number }>`
      with recursive down(id) as (select ${g.id}::int union select d.id from domains d join down on d.parent_id = down.id)
      select count(distinct ud.user_id)::int as n from user_domains ud join down on down.id = ud.domain_id
      where ${userId === null ? sql`true` : sql`ud.user_id <> ${userId}`}`.execute(q);
    const total = used.rows[0]!.n + 1;
    if (total > entry.max!) throw new AppError('limit_exceeded', { used: used.rows[0]!.n, max: entry.max, group: g.name, feature: 'users' });
  }
}
