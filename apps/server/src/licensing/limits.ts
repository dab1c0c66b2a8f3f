import { sql, type Kysely } from 'kysely';
import { AppError } from '../errors';

/** Any database handle or transaction: the limits read and lock only through raw SQL. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Q = Kysely<any>;

/**
 * Every counted limit (users per group, a family's rows per group, later numbers, keys and mobile apps) is
 * checked in the transaction that inserts, under locks on the thing counted (spec part 2 §8 "Limit exceeded
 * - used {used}, max {max}"):
 *
 * - an add takes a **shared** lock `limit:<feature>:<group>` on every group of its chain (the group and all
 *   above it, in id order), then reads the groups' maximums, then for each capped one takes the
 *   **exclusive** lock `count:<feature>:<group>`, counts and compares. Two adds under one capped group wait
 *   for each other at the count lock; adds under uncapped groups never wait for each other.
 * - setting or lowering a group's maximum (licensing/group-licences.ts) takes the **exclusive**
 *   `limit:<feature>:<group>`: it waits for the adds in flight under that group and holds back new ones
 *   until it commits, so its count of what is used is exact, and an add after it reads the new maximum.
 */
export async function withCountedLimit(
  q: Q,
  opts: {
    lockKey: string;
    max: number;
    adding?: number;
    count: (q: Q) => Promise<number>;
    data?: Record<string, unknown>;
  },
): Promise<void> {
  await lockCount(q, opts.lockKey);
  const used = await opts.count(q);
  if (used + (opts.adding ?? 1) > opts.max)
    throw new AppError('limit_exceeded', { used, max: opts.max, ...opts.data });
}

/** The transaction-scoped exclusive lock of one key (released at commit or rollback). */
export async function lockCount(q: Q, key: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext(${key}))`.execute(q);
}

/** The transaction-scoped shared lock of one key: shared holders do not wait for each other. */
export async function lockShared(q: Q, key: string): Promise<void> {
  await sql`select pg_advisory_xact_lock_shared(hashtext(${key}))`.execute(q);
}

/** The lock that guards a group's maximum of a feature (shared by adds, exclusive when the maximum is set). */
export const limitLockKey = (feature: string, groupId: number) => `limit:${feature}:${groupId}`;
const countLockKey = (feature: string, groupId: number) => `count:${feature}:${groupId}`;

export interface CappedGroup {
  id: number;
  name: string;
  max: number;
}

/** The groups at or above these groups (each chain up to its root), in id order. */
export async function chainOf(q: Q, domainIds: readonly number[]): Promise<number[]> {
  if (!domainIds.length) return [];
  const rows = await sql<{ id: number }>`
    with recursive up(id) as (
      select id from domains where id in (${sql.join(domainIds)})
      union
      select d.parent_id from domains d join up on d.id = up.id where d.parent_id is not null
    )
    select id from up order by id`.execute(q);
  return rows.rows.map((r) => r.id);
}

/** Of these groups, those with a maximum for `feature` (`license_limits.<feature>`), in id order. */
export async function cappedAmong(q: Q, ids: readonly number[], feature: string): Promise<CappedGroup[]> {
  if (!ids.length) return [];
  const rows = await sql<{ id: number; name: string; max: number }>`
    select id, name, (license_limits->>${feature})::int as max from domains
    where id in (${sql.join(ids)}) and jsonb_typeof(license_limits->${feature}) = 'number'
    order by id`.execute(q);
  return rows.rows;
}

/**
 * Every group at or above these groups that caps `feature`, read under the shared locks of the whole chain
 * (so a maximum being set waits for this add, or this add sees it).
 */
export async function cappedGroupsAbove(
  q: Q,
  domainIds: readonly number[],
  feature = 'users',
): Promise<CappedGroup[]> {
  const chain = await chainOf(q, domainIds);
  for (const id of chain) await lockShared(q, limitLockKey(feature, id));
  return cappedAmong(q, chain, feature);
}

export const subtreeOf = (groupId: number) =>
  sql`with recursive down(id) as (select ${groupId}::int union select d.id from domains d join down on d.parent_id = down.id)`;

/** Users in a group's subtree, leaving one out (the user being moved). */
async function usersIn(q: Q, groupId: number, exceptUser: number | null): Promise<number> {
  const used = await sql<{ n: number }>`
    ${subtreeOf(groupId)}
    select count(distinct ud.user_id)::int as n from user_domains ud join down on down.id = ud.domain_id
    where ${exceptUser === null ? sql`true` : sql`ud.user_id <> ${exceptUser}`}`.execute(q);
  return used.rows[0]!.n;
}

/**
 * How much of each counted feature a group's subtree uses, for the check of a new maximum ("used counts
 * greater than the group's"): users, and each family declaring a limit registers its count (tableStore does
 * for plain families). A feature with no counter (numbers, mobile apps and keys before their families) uses 0.
 */
const groupCounters = new Map<string, (q: Q, groupId: number) => Promise<number>>([
  ['users', (q, g) => usersIn(q, g, null)],
]);

export function registerGroupCounter(
  feature: string,
  count: (q: Q, groupId: number) => Promise<number>,
): void {
  groupCounters.set(feature, count);
}

export async function usedInGroup(q: Q, feature: string, groupId: number): Promise<number> {
  const count = groupCounters.get(feature);
  return count ? count(q, groupId) : 0;
}

/** The same for many groups at once (a report's page): one statement where the family gave a batch counter. */
type BatchCounter = (q: Q, groupIds: readonly number[]) => Promise<Map<number, number>>;
const batchCounters = new Map<string, BatchCounter>();

export function registerGroupBatchCounter(feature: string, count: BatchCounter): void {
  batchCounters.set(feature, count);
}

export async function usedInGroups(
  q: Q,
  feature: string,
  groupIds: readonly number[],
): Promise<Map<number, number>> {
  const batch = batchCounters.get(feature);
  if (batch) return batch(q, groupIds);
  const out = new Map<number, number>();
  for (const id of groupIds) out.set(id, await usedInGroup(q, feature, id));
  return out;
}

/**
 * Users per group: a group's maximum `users` caps how many users its subtree holds. Adding a user to
 * groups checks every capped group above them.
 */
export async function assertUserLimit(
  q: Q,
  domainIds: readonly number[],
  userId: number | null,
): Promise<void> {
  for (const g of await cappedGroupsAbove(q, domainIds, 'users')) {
    await withCountedLimit(q, {
      lockKey: countLockKey('users', g.id),
      max: g.max,
      count: (t) => usersIn(t, g.id, userId),
      data: { group: g.name, feature: 'users' },
    });
  }
}

/**
 * The same limits for an import's valid rows: for each capped group above their groups (locked, in id
 * order), the rows beyond what the group still takes — the later lines — are the excess. With `flag` they
 * get the problem `limit_exceeded` and stay out; without it the whole import is refused with that error.
 * `inserted`: the valid rows are in the tables already (the one-request import, in this transaction), so
 * they are not counted as used, and an excess row is taken out again (its account, and with it its user).
 * `groups`: the groups the valid rows name, when the caller knows them (else read from the staging table).
 * Answers how many rows were found in excess.
 */
export async function importUserLimits(
  q: Q,
  importId: string,
  flag: boolean,
  inserted = false,
  groups?: ReadonlySet<number>,
): Promise<number> {
  let out = 0;
  const targets =
    groups ??
    (
      await sql<{ id: number }>`
        select distinct x.v::int as id from user_import_rows r cross join lateral jsonb_array_elements_text(r.domain_ids) x(v)
        where r.import_id = ${importId} and r.errors is null`.execute(q)
    ).rows.map((t) => t.id);
  for (const g of await cappedGroupsAbove(q, [...targets], 'users')) {
    await lockCount(q, countLockKey('users', g.id));
    const rows = await sql<{ line: number }>`
      ${subtreeOf(g.id)}
      select r.line from user_import_rows r where r.import_id = ${importId} and r.errors is null
        and exists (select 1 from jsonb_array_elements_text(r.domain_ids) x(v) join down on down.id = x.v::int)
      order by r.line`.execute(q);
    const used = (await usersIn(q, g.id, null)) - (inserted ? rows.rows.length : 0);
    const room = Math.max(0, g.max - used);
    if (rows.rows.length <= room) continue;
    const data = { used, max: g.max, group: g.name, feature: 'users' };
    if (!flag) throw new AppError('limit_exceeded', { ...data, adding: rows.rows.length });
    const excess = JSON.stringify(rows.rows.slice(room).map((r) => r.line));
    out += rows.rows.length - room;
    if (inserted)
      await sql`delete from accounts a using user_import_rows r where r.import_id = ${importId}
        and r.line = any(array(select jsonb_array_elements_text(${excess}::jsonb)::int)) and lower(a.login) = lower(r.login)`.execute(
        q,
      );
    await sql`update user_import_rows set errors = ${JSON.stringify([{ field: 'domains', key: 'limit_exceeded', params: data }])}::jsonb
      where import_id = ${importId} and line = any(array(select jsonb_array_elements_text(${excess}::jsonb)::int))`.execute(
      q,
    );
  }
  return out;
}

/** A family's rows in each group's subtree, for many groups in one statement. */
export async function rowsInGroups(
  q: Q,
  opts: { table: string; column: string; groupIds: readonly number[] },
): Promise<Map<number, number>> {
  const out = new Map<number, number>(opts.groupIds.map((id) => [id, 0]));
  if (!opts.groupIds.length) return out;
  const r = await sql<{ root: number; n: number }>`
    with recursive down(root, id) as (
      select id, id from domains where id in (${sql.join(opts.groupIds)})
      union all
      select down.root, c.id from domains c join down on c.parent_id = down.id)
    select down.root, count(r.id)::int as n
    from down join ${sql.table(opts.table)} r on ${sql.ref(`r.${opts.column}`)} = down.id
    group by down.root`.execute(q);
  for (const row of r.rows) out.set(row.root, row.n);
  return out;
}

/** A family's rows in a group's subtree (optionally leaving one row out). */
export async function rowsInGroup(
  q: Q,
  opts: { table: string; column: string; groupId: number; rowId?: number | null },
): Promise<number> {
  return (
    await sql<{ n: number }>`
      ${subtreeOf(opts.groupId)}
      select count(*)::int as n from ${sql.table(opts.table)} r join down on down.id = ${sql.ref(`r.${opts.column}`)}
      where ${opts.rowId == null ? sql`true` : sql`r.id <> ${opts.rowId}`}`.execute(q)
  ).rows[0]!.n;
}

/**
 * A family's declared counted limit (`limits: [{per: 'group', feature}]` in its declaration): a row placed in
 * `groupId` (or moved there, `rowId` being the row) is counted against every group above it that caps the
 * feature, counting the family's rows in that group's subtree.
 */
export async function assertRowLimit(
  q: Q,
  opts: { feature: string; table: string; column: string; groupId: number; rowId: number | null },
): Promise<void> {
  for (const g of await cappedGroupsAbove(q, [opts.groupId], opts.feature)) {
    await withCountedLimit(q, {
      lockKey: countLockKey(opts.feature, g.id),
      max: g.max,
      count: (t) => rowsInGroup(t, { ...opts, groupId: g.id }),
      data: { group: g.name, feature: opts.feature },
    });
  }
}
