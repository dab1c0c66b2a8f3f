/**
 * The registry-wide suites that run over a list of families (the registry's `resources`, or a fixture
 * registry of a test): each derives what it does from the declarations and makes rows with the families'
 * example makers (./family-examples.ts), so a family added to the registry is covered with no line here.
 */
import { describe, expect, it } from 'vitest';
import { AllPermissions, type ApiClient } from '@lintel/core';
import { getCommand, type AnyResource, type AuditEvent, type Command } from '@lintel/commands';
import type { TestServer } from './server';
import { failure, userWith } from './fixtures';
import { exampleMaker } from './family-examples';
import { familyMatrix } from './family-matrix';

export interface RegistryWorld {
  ts: TestServer;
  /** the project's administrator */
  api: ApiClient;
  root: number;
  /** the caller's group A and another group B */
  A: number;
  B: number;
}

type Row = { id: number; name?: unknown };
const run = (c: Command, api: ApiClient, args: Record<string, unknown>) =>
  c.run({ api }, args as never) as Promise<Record<string, unknown>>;

/** The events of one entity row in the audit log, newest first. */
export async function eventsOf(api: ApiClient, entity: string, id: number): Promise<AuditEvent[]> {
  return (
    await getCommand('audit_event.list').run(
      { api },
      {
        limit: 50,
        filters: [
          { field: 'entity', rule: 'equals', value: entity },
          { field: 'entity_id', rule: 'equals', value: String(id) },
        ],
      },
    )
  ).data;
}

/**
 * Makes a row of every family (its example, in the root group) and checks the audit log names each by its
 * name: the rows made, by noun, for the cases a caller adds.
 */
export async function namesEveryFamily(
  families: readonly AnyResource[],
  w: () => RegistryWorld,
  all: readonly AnyResource[] = families,
): Promise<Record<string, Row>> {
  const made: Record<string, Row> = {};
  for (const r of families) {
    const args = await exampleMaker(r, { api: () => w().api }, all).createArgs(w().root);
    made[r.noun] = (await run(r.commands.create as unknown as Command, w().api, args)).data as Row;
  }
  for (const [noun, row] of Object.entries(made)) {
    const [created] = await eventsOf(w().api, noun, row.id);
    expect(created, noun).toMatchObject({ action: 'create', entity_name: row.name ?? String(row.id) });
  }
  return made;
}

/**
 * The permission matrix of families from their declarations (./family-matrix.ts): each of the seven
 * commands (a) runs with the permission that reaches everything, (b) is refused without the gate's
 * permissions, (c) does not reach a row of another subtree with the subtree permission, where there is one.
 */
export function familyMatrixSuite(families: readonly AnyResource[], w: () => RegistryWorld): void {
  for (const resource of families) {
    const maker = exampleMaker(resource, { api: () => w().api }, families);
    const viewAll = familyMatrix(resource, {})[0]!.all;
    const viewNarrow = familyMatrix(resource, {})[0]!.descendants;
    /** a row in `group`, made by the administrator */
    const rowIn = async (group: number) =>
      (
        (await run(resource.commands.create as unknown as Command, w().api, await maker.createArgs(group)))
          .data as Row
      ).id;
    describe.each(familyMatrix(resource, {}).map((c) => [c.id, c] as const))('%s', (id, c) => {
      const command = resource.commands[id.slice(id.indexOf('.') + 1) as 'list'] as unknown as Command;
      const tester = async (perms: string[]) =>
        (await userWith(w().ts, w().api, { permissions: [...new Set(perms)], domains: [w().A] })).client();
      const args = async (target: number, group: number) =>
        id.endsWith('.update')
          ? { id: target, ...maker.change() }
          : c.args(target, await maker.createArgs(group));

      it('(a) runs with the permission that reaches the whole project', async () => {
        const target = await rowIn(w().B);
        const r = await run(command, await tester([c.all, viewAll]), await args(target, w().B));
        if (id.endsWith('.list')) expect((r.data as unknown[]).length).toBe(1);
        if (id.endsWith('.export')) expect(r as unknown as unknown[]).toHaveLength(1);
        if (id.endsWith('.delete_all')) expect(r.deleted).toEqual([target]);
      });

      it('(b) is refused without it', async () => {
        const other = AllPermissions.find((p) => !command.gates.anyPermission!.includes(p))!;
        const e = await failure(run(command, await tester([other]), await args(await rowIn(w().A), w().A)));
        expect([e.status, e.message]).toEqual([403, 'method_prohibited']);
      });

      if (c.descendants)
        it('(c) does not reach another subtree with the subtree permission', async () => {
          const client = await tester([c.descendants!, viewNarrow ?? c.descendants!]);
          const target = await rowIn(w().B);
          const a = await args(target, w().B);
          if (id.endsWith('.list'))
            expect(((await run(command, client, a)).data as unknown[]).length).toBe(0);
          else if (id.endsWith('.export')) expect(await run(command, client, a)).toEqual([]);
          else if (id.endsWith('.delete_all')) expect((await run(command, client, a)).deleted).toEqual([]);
          else expect([403, 404]).toContain((await failure(run(command, client, a))).status);
        });
    });
  }
}
