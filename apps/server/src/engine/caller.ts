import { sql, type Kysely } from 'kysely';
import type { AuthInfo } from '../context';
import type { DB } from '../db/schema';
import type { RequestCache } from './request-cache';

/**
 * Everything authorisation needs to know about who is calling, read lazily once per request: the role's
 * permissions, the caller's own groups, their subtree, and the roles the caller may assign.
 */
export class Caller {
  private ownDomains?: Promise<number[]>;
  private subtreeIds?: Promise<number[]>;
  private available?: Promise<number[]>;

  constructor(
    readonly db: Kysely<DB>,
    readonly auth: AuthInfo,
    /** what other requests of this user already read (engine/request-cache.ts); none: read afresh */
    private readonly cache?: RequestCache,
  ) {}

  /** `read`, through the cache when there is one; what it holds is shared, so it is frozen */
  private cached(key: string, read: () => Promise<number[]>): Promise<number[]> {
    const frozen = () => read().then((ids) => Object.freeze(ids) as number[]);
    return this.cache ? this.cache.get(key, frozen) : frozen();
  }

  get userId() {
    return this.auth.userId;
  }
  get projectId() {
    return this.auth.projectId;
  }
  get roleId() {
    return this.auth.roleId;
  }

  has(permission: string): boolean {
    return this.auth.permissions.has(permission);
  }

  hasAny(permissions: readonly string[]): boolean {
    return permissions.some((p) => this.auth.permissions.has(p));
  }

  /** the groups the caller belongs to */
  domains(): Promise<number[]> {
    this.ownDomains ??= this.cached(`domains:${this.userId}`, () =>
      this.db
        .selectFrom('user_domains')
        .select('domain_id')
        .where('user_id', '=', this.userId)
        .execute()
        .then((rows) => rows.map((r) => r.domain_id)),
    );
    return this.ownDomains;
  }

  /** the caller's groups and every group below them */
  subtree(): Promise<number[]> {
    this.subtreeIds ??= this.cached(`subtree:${this.userId}`, () =>
      this.domains().then((own) => descendantsOf(this.db, this.projectId, own, true)),
    );
    return this.subtreeIds;
  }

  /**
   * Reads everything lazily read above now. Call it before opening a transaction: on the embedded
   * database a transaction holds the only connection, so nothing may reach for another one inside it.
   */
  async prefetch(): Promise<this> {
    await Promise.all([this.domains(), this.subtree(), this.availableRoles()]);
    return this;
  }

  /** the roles the caller's role may assign or edit (its `available_roles`) */
  availableRoles(): Promise<number[]> {
    this.available ??= this.cached(`available-roles:${this.roleId}`, () =>
      this.db
        .selectFrom('roles')
        .select('available_roles')
        .where('id', '=', this.roleId)
        .executeTakeFirst()
        .then((r) => (r?.available_roles ?? []).map(Number)),
    );
    return this.available;
  }
}

/** Groups below the given ones (and, with `inclusive`, the given ones), in one recursive query. */
export async function descendantsOf(
  db: Kysely<DB>,
  projectId: number,
  roots: readonly number[],
  inclusive: boolean,
): Promise<number[]> {
  if (roots.length === 0) return [];
  const rows = await sql<{ id: number }>`
    with recursive tree(id) as (
      select id from domains where project_id = ${projectId} and id in (${sql.join(roots)})
      union
      select d.id from domains d join tree on d.parent_id = tree.id where d.project_id = ${projectId}
    )
    select id from tree`.execute(db);
  const all = rows.rows.map((r) => r.id);
  if (inclusive) return all;
  const own = new Set(roots);
  return all.filter((id) => !own.has(id));
}

/** `expr in (ids)`, false for an empty list. */
export const inIds = (expr: ReturnType<typeof sql>, ids: readonly number[]) =>
  ids.length === 0 ? sql<boolean>`false` : sql<boolean>`${expr} in (${sql.join(ids)})`;
