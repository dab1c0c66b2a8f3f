/**
 * The permission matrix of a plain family, derived from its declaration alone: for each of its seven commands
 * and its relations' add and remove
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
  /** a relation's add or remove (`Resource.relationVerbs`): the relation it names, and its family */
  relation?: { key: string; family: string };
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
    ...relationMatrix(resource),
  ];
}

/**
 * The cases of a family's relation verbs (`<noun>.add_<key>`, `<noun>.remove_<key>`): gated and scoped as
 * the update. Their arguments name a row of the related family the suite makes (`relation`).
 */
export function relationMatrix(resource: AnyResource): MatrixCase[] {
  return resource.relationVerbs.flatMap((v) =>
    [v.add, v.remove].map((command) => ({
      id: command.id,
      all: scopeOf(resource, 'edit', 'all')!,
      descendants: scopeOf(resource, 'edit', 'descendants'),
      args: (id: number) => ({ id }),
      relation: { key: v.key, family: v.ref.family },
    })),
  );
}
