/**
 * The permission matrix of a plain family, derived from its declaration alone: for each of its seven commands
 * the permission that reaches the whole project, one that reaches only the caller's subtree (when the
 * family declares one), and the arguments that aim at a row. The tests make the rows; this says what to try.
 */
import type { AnyResource, ScopeKind } from '@lintel/commands';

export interface MatrixCase {
  id: string;
  /** (a) a permission that lets the caller act on any row */
  all: string;
  /** (c) a permission that reaches only the caller's subtree, if the family has one for this action */
  descendants?: string;
  /** the arguments, aimed at `target` (a row the test made) */
  args(target: number, fresh: Record<string, unknown>): Record<string, unknown>;
}

const scopeOf = (
  resource: AnyResource,
  action: 'view' | 'create' | 'edit' | 'delete',
  kind: ScopeKind,
): string | undefined => {
  const declared = resource.scopes?.[action];
  if (declared) return Object.entries(declared).find(([, k]) => k === kind)?.[0];
  return kind === 'all' ? resource.gates[action][0] : undefined;
};

export function familyMatrix(resource: AnyResource, update: Record<string, unknown>): MatrixCase[] {
  const n = resource.noun;
  const c = (
    id: string,
    action: 'view' | 'create' | 'edit' | 'delete',
    args: MatrixCase['args'],
  ): MatrixCase => ({
    id: `${n}.${id}`,
    all: scopeOf(resource, action, 'all')!,
    descendants: scopeOf(resource, action, 'descendants'),
    args,
  });
  const byId = (target: number) => ({ filters: [{ field: 'id', rule: 'equals', value: target }] });
  return [
    c('list', 'view', byId),
    c('export', 'view', byId),
    c('get', 'view', (id) => ({ id })),
    c('create', 'create', (_id, fresh) => fresh),
    c('update', 'edit', (id) => ({ id, ...update })),
    c('delete', 'delete', (id) => ({ id })),
    c('delete_all', 'delete', (id) => ({ items: [id] })),
  ];
}
