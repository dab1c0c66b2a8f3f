import { sql, type Kysely } from 'kysely';
import type { RouteInterception } from '@lintel/core';
import type { InterceptionSettings } from '@lintel/commands';
import type { ServerContext } from '../context';
import type { DB } from '../db/schema';
import type { Caller } from '../engine/caller';
import { AppError } from '../errors';

/**
 * Call interception (issue 22 item 7; spec part 1 §3 "Interception settings", §4 "Interception"; part 2 §7
 * `GET`/`POST /calls/interception`): a concierge who may intercept (`calls.can_intercept_call_like_concierge`)
 * names groups and starts; from then on the calls of those groups' panels ring his numbers instead of the
 * flat they dialled (the routing's `interceptions`, packages/core/src/telephony/route.ts), and a call none of
 * the concierges answers waits for any of them (docs/decisions.md "Telephony: waiting calls and interception").
 */

export const INTERCEPT = 'calls.can_intercept_call_like_concierge';

/** The groups a concierge may intercept: the project's with `calls.call_all`, else his groups and those below. */
async function choosable(app: ServerContext, caller: Caller): Promise<{ id: number; name: string }[]> {
  const all = caller.has('calls.call_all') || caller.has('domains.view_all');
  const ids = all ? null : await caller.subtree();
  if (ids && !ids.length) return [];
  const rows = await sql<{ id: number; name: string }>`
    select id, name from domains where project_id = ${caller.projectId}
      and (${ids === null} or id = any(${sql.val(ids ?? [])}::int[]))
    order by lower(name), id limit 2000`.execute(app.db);
  return rows.rows;
}

/** The caller's settings, as the spec names them: `{isActive, groups, userGroups}`. */
export async function interceptionOf(app: ServerContext, caller: Caller): Promise<InterceptionSettings> {
  const [state, groups, userGroups] = await Promise.all([
    sql<{
      is_active: boolean;
    }>`select is_active from call_interceptions where user_id = ${caller.userId}`.execute(app.db),
    sql<{
      domain_id: number;
    }>`select domain_id from call_interception_domains where user_id = ${caller.userId}
      order by domain_id`.execute(app.db),
    choosable(app, caller),
  ]);
  return {
    isActive: state.rows[0]?.is_active ?? false,
    groups: groups.rows.map((r) => r.domain_id),
    userGroups,
  };
}

/**
 * Starts or stops intercepting. Starting needs a group (`interception_group_required`); every group must be
 * one he may choose (`invalid_related_entity`, naming the groups). The groups given replace his list, also
 * when he stops (an empty list when stopping keeps the one he had: the panel sends its list locked).
 */
export async function setInterception(
  app: ServerContext,
  caller: Caller,
  args: { is_active: boolean; domains: number[] },
): Promise<InterceptionSettings> {
  const wanted = [...new Set(args.domains)];
  if (args.is_active && !wanted.length) throw new AppError('interception_group_required');
  if (wanted.length) {
    const allowed = new Set((await choosable(app, caller)).map((g) => g.id));
    const refused = wanted.filter((id) => !allowed.has(id));
    if (refused.length) throw new AppError('invalid_related_entity', { entity: 'domains', values: refused });
  }
  await app.db.transaction().execute(async (trx) => {
    await sql`insert into call_interceptions (user_id, project_id, is_active, updated_at)
      values (${caller.userId}, ${caller.projectId}, ${args.is_active}, ${app.clock.now()})
      on conflict (user_id) do update set is_active = excluded.is_active, updated_at = excluded.updated_at,
        project_id = excluded.project_id`.execute(trx);
    if (wanted.length || args.is_active) {
      await sql`delete from call_interception_domains where user_id = ${caller.userId}`.execute(trx);
      await sql`insert into call_interception_domains (user_id, domain_id)
        select ${caller.userId}, d from unnest(${sql.val(wanted)}::int[]) as d`.execute(trx);
    }
  });
  return interceptionOf(app, caller);
}

/** Whether the role of a user (a row of `users` as `u`, its role `r`) holds the intercept permission. */
const mayIntercept = sql<boolean>`r.permissions @> ${JSON.stringify([INTERCEPT])}::jsonb`;

/**
 * The interceptions in force in a project, for the routing: each intercepting concierge's active numbers with
 * his groups and every group below them (a panel of a building inside an intercepted estate is intercepted
 * too). A concierge who lost the permission intercepts no more.
 */
export async function interceptionsIn(db: Kysely<DB>, projectId: number): Promise<RouteInterception[]> {
  const rows = await sql<{ number: string; groups: number[] }>`
    with recursive chosen(user_id, domain_id) as (
      select i.user_id, d.domain_id from call_interceptions i
        join call_interception_domains d on d.user_id = i.user_id
        join users u on u.id = i.user_id join roles r on r.id = u.role_id
      where i.project_id = ${projectId} and i.is_active and ${mayIntercept}
      union
      select c.user_id, x.id from domains x join chosen c on x.parent_id = c.domain_id
    )
    select n.number, array_agg(distinct c.domain_id order by c.domain_id) as groups
    from chosen c join users u on u.id = c.user_id
    join sip_numbers n on n.project_id = u.project_id and n.is_active and (n.user_id = u.id or (
      jsonb_typeof(u.profile->'sip_number_id') = 'number' and (u.profile->>'sip_number_id')::numeric = n.id))
    group by n.number order by n.number`.execute(db);
  return rows.rows.map((r) => ({ conciergeNumber: r.number, groupIds: r.groups.map(Number) }));
}
