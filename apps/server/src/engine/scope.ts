import { sql, type RawBuilder } from 'kysely';
import type { Caller } from './caller';

/**
 * How far a permission reaches (spec part 2 §6): the whole project, the caller's group subtree, the caller's
 * own groups, or what the caller created. Families add their own: a user's own record (`self`), the groups
 * strictly below the caller's (`children`), the roles the caller's role lists (`available`), the rows of any
 * group (`grouped`) and the project's own rows, in no group (`ungrouped`: integrations).
 */
export type Scope =
  | 'all'
  | 'descendants'
  | 'children'
  | 'domain'
  | 'own'
  | 'self'
  | 'available'
  | 'held'
  | 'grouped'
  | 'ungrouped';

export interface ScopeRule {
  permission: string;
  scope: Scope;
}

export interface ScopeRules {
  view: readonly ScopeRule[];
  edit: readonly ScopeRule[];
  delete: readonly ScopeRule[];
  /** users may always view what they created, except groups (spec part 2 §6) */
  ownAlwaysVisible: boolean;
  /** scopes that hold whatever the caller's permissions: a user's own record is his to view and edit */
  always?: Partial<Record<'view' | 'edit' | 'delete', readonly Scope[]>>;
}

export function scopesFor(caller: Caller, rules: readonly ScopeRule[]): Set<Scope> {
  return new Set(rules.filter((r) => caller.has(r.permission)).map((r) => r.scope));
}

/** The SQL that keeps a row of one family inside a scope, for this caller. */
export type ScopeSql = (scope: Exclude<Scope, 'all'>, caller: Caller) => Promise<RawBuilder<boolean>>;

export async function scopePredicate(
  caller: Caller,
  scopes: Set<Scope>,
  scopeSql: ScopeSql,
  createdBy: RawBuilder<unknown> | null,
  ownAlways: boolean,
): Promise<RawBuilder<boolean>> {
  if (scopes.has('all')) return sql<boolean>`true`;
  const parts: RawBuilder<boolean>[] = [];
  for (const s of scopes) if (s !== 'all') parts.push(await scopeSql(s, caller));
  if (ownAlways && createdBy) parts.push(sql<boolean>`${createdBy} = ${caller.userId}`);
  if (parts.length === 0) return sql<boolean>`false`;
  return sql<boolean>`(${sql.join(parts, sql` or `)})`;
}
