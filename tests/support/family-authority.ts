/**
 * The cases of issue 12 that every family inherits from its declaration (tests/api/family-authority.test.ts
 * runs them over every family of the registry that declares scopes or limits; the fixture family's test
 * over the fixture):
 * - authority over the target: a caller whose permissions reach only his subtree cannot update or delete a
 *   row outside it, while the same caller can update one inside it;
 * - authority over what the row becomes: when the family's update may move a row to another group, he
 *   cannot move a row of his subtree to a group outside his create scope (`method_prohibited`, placement);
 * - every counted limit (`limits`): ten parallel creates into a group capped at two, exactly two pass, and a
 *   move into the full group is refused.
 * A test gives only how to make a valid row of the family in a group (`FamilyMaker`).
 */
import { describe, expect, it } from 'vitest';
import type { AnyResource, Command, ScopeKind } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import type { TestServer } from './server';
import { failure, group, uid, userWith } from './fixtures';

/** How a test makes a row of one family: a valid create placed in `groupId`, and an update moving it there. */
export interface FamilyMaker {
  create(groupId: number): Record<string, unknown> | Promise<Record<string, unknown>>;
  /** an update of a row that changes nothing its scope depends on */
  change(): Record<string, unknown>;
  /** an update that moves the row to `groupId`, when the family's update can */
  move?(groupId: number): Record<string, unknown>;
}

export interface SuiteWorld {
  ts: TestServer;
  /** the project's administrator */
  api: ApiClient;
  /** caller's group A (with a child A1) and another group B, all under the root */
  root: number;
  A: number;
  A1: number;
  B: number;
}

const NARROW: ScopeKind[] = ['descendants', 'domain', 'own'];
type Action = 'view' | 'create' | 'edit' | 'delete';

/** The narrowest permission the family declares for an action (or its first gate, reaching everything). */
export function narrowest(resource: AnyResource, action: Action): { permission: string; scope: ScopeKind } {
  const declared = Object.entries(resource.scopes?.[action] ?? {});
  for (const kind of NARROW) {
    const found = declared.find(([, k]) => k === kind);
    if (found) return { permission: found[0], scope: kind };
  }
  return { permission: declared[0]?.[0] ?? resource.gates[action][0]!, scope: 'all' };
}

/** Whether the declaration limits some action to a subtree (then the authority cases apply). */
export const isScoped = (resource: AnyResource) =>
  (['view', 'edit', 'delete'] as const).some((a) => narrowest(resource, a).scope !== 'all');

/** Whether an update of the family may move a row to other groups (its group column, or its groups). */
export const canMove = (resource: AnyResource) => {
  const column = resource.scopes?.owner?.group ?? resource.scopes?.owner?.groups;
  return !!column && column in resource.updateArgs.shape && narrowest(resource, 'create').scope !== 'all';
};

const cap = (feature: string, max: number) => ({ license_limits: { [feature]: max } });

export function familySuite(resource: AnyResource, maker: FamilyMaker, world: () => SuiteWorld): void {
  const cmd = (verb: string) =>
    resource.commands[verb as keyof typeof resource.commands] as unknown as Command;
  const call = (api: ApiClient, verb: string, args: Record<string, unknown>) =>
    cmd(verb).run({ api }, args as never) as Promise<Record<string, unknown>>;
  const all = (action: Action) =>
    Object.entries(resource.scopes?.[action] ?? {}).find(([, k]) => k === 'all')?.[0] ??
    resource.gates[action][0]!;
  /** a row made by someone of `groupId` holding every permission of the family (and placed there) */
  const rowIn = async (groupId: number) => {
    const w = world();
    const maker = await userWith(w.ts, w.api, {
      permissions: [all('view'), all('create'), all('edit'), all('delete')],
      domains: [groupId],
    });
    const made = await call(await maker.client(), 'create', await makerArgs(groupId));
    return (made.data as { id: number }).id;
  };
  const makerArgs = (groupId: number) => maker.create(groupId);
  const get = (id: number) => call(world().api, 'get', { id });
  /** a caller of group A whose view, edit, delete (and create) reach only as far as the family narrows them */
  const scopedCaller = async () => {
    const w = world();
    const perms = (['view', 'create', 'edit', 'delete'] as const).map(
      (a) => narrowest(resource, a).permission,
    );
    return (await userWith(w.ts, w.api, { permissions: [...new Set(perms)], domains: [w.A] })).client();
  };

  if (isScoped(resource) || canMove(resource))
    describe(`${resource.noun}: authority over the target (issue 12 point 4)`, () => {
      // a case that does not apply is not declared at all (never skipped)
      if (isScoped(resource))
        it('a caller scoped to his subtree updates a row inside it, but cannot update or delete one outside it', async () => {
          const client = await scopedCaller();
          const inside = await rowIn(world().A1);
          await expect(call(client, 'update', { id: inside, ...maker.change() })).resolves.toBeTruthy();

          const outside = await rowIn(world().B);
          const before = await get(outside);
          const update = await failure(call(client, 'update', { id: outside, ...maker.change() }));
          expect([403, 404], `${resource.noun}.update`).toContain(update.status);
          const del = await failure(call(client, 'delete', { id: outside }));
          expect([403, 404], `${resource.noun}.delete`).toContain(del.status);
          expect((await call(client, 'delete_all', { items: [outside] })).deleted).toEqual([]);
          expect(await get(outside)).toEqual(before);
        });

      if (canMove(resource))
        it('he cannot move a row of his subtree to a group outside his create scope; within it he can', async () => {
          const client = await scopedCaller();
          const id = await rowIn(world().A1);
          const before = await get(id);
          const e = await failure(call(client, 'update', { id, ...maker.move!(world().B) }));
          expect(e.status).toBe(403);
          expect(e.message).toBe('method_prohibited');
          expect(e.data).toMatchObject({ reason: 'placement' });
          expect(await get(id)).toEqual(before);
          await expect(call(client, 'update', { id, ...maker.move!(world().A) })).resolves.toBeTruthy();
        });
    });

  for (const { feature } of resource.limits)
    describe(`${resource.noun}: the counted limit of ${feature} holds under concurrency (issue 12 point 5)`, () => {
      it('ten parallel creates into a group capped at two: exactly two pass, the rest say used 2, max 2; a move in is counted', async () => {
        const w = world();
        const capped = await group(w.api, `Cap ${uid()}`, w.root, cap(feature, 2));
        const results = await Promise.allSettled(
          Array.from({ length: 10 }, async () => call(w.api, 'create', await makerArgs(capped))),
        );
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
        for (const r of results)
          if (r.status === 'rejected')
            expect([r.reason.message, r.reason.data]).toEqual([
              'limit_exceeded',
              expect.objectContaining({ used: 2, max: 2 }),
            ]);
        if (maker.move) {
          const elsewhere = ((await call(w.api, 'create', await makerArgs(w.B))).data as { id: number }).id;
          const e = await failure(call(w.api, 'update', { id: elsewhere, ...maker.move(capped) }));
          expect(e.message).toBe('limit_exceeded');
        }
      });
    });
}
