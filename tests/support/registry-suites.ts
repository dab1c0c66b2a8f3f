/**
 * The registry-wide suites that run over a list of families (the registry's `resources`, or a fixture
 * registry of a test): each derives what it does from the declarations and makes rows with the families'
 * example makers (./family-examples.ts), so a family added to the registry is covered with no line here.
 */
import { describe, expect, it } from 'vitest';
import { AllPermissions, ErrorCatalogue, type ApiClient } from '@lintel/core';
import {
  getCommand,
  MAX_RELATION_IDS,
  resources,
  type AnyResource,
  type AuditEvent,
  type Command,
} from '@lintel/commands';
import type { TestServer } from './server';
import { failure, uid, userWith } from './fixtures';
import { authorityOver, exampleMaker } from './family-examples';
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
 * commands and each relation's add and remove (a) runs with the permission that reaches everything, (b) is
 * refused without the gate's permissions, (c) does not reach a row of another subtree with the subtree
 * permission, where there is one. `only: 'relations'` runs the relations' cases alone (for families whose
 * other commands have hand-written cases).
 */
export function familyMatrixSuite(
  families: readonly AnyResource[],
  w: () => RegistryWorld,
  opts: { only?: 'relations' } = {},
): void {
  for (const resource of families) {
    const maker = exampleMaker(resource, { api: () => w().api }, families);
    const viewAll = familyMatrix(resource, {})[0]!.all;
    const viewNarrow = familyMatrix(resource, {})[0]!.descendants;
    const owner = resource.scopes?.owner;
    /** a row in `group`, made by the administrator */
    const rowIn = async (group: number) =>
      (
        (await run(resource.commands.create as unknown as Command, w().api, await maker.createArgs(group)))
          .data as Row
      ).id;
    const cases = familyMatrix(resource, {}).filter((c) => opts.only !== 'relations' || c.relation);
    if (!cases.length) continue;
    describe.each(cases.map((c) => [c.id, c] as const))('%s', (id, c) => {
      const verb = id.slice(id.indexOf('.') + 1);
      const command = (c.relation
        ? resource.relationCommands[verb]
        : resource.commands[verb as 'list']) as unknown as Command;
      // a relation of the groups that place the row: a change of it is a placement, as on create
      const placing = c.relation && (c.relation.key === owner?.groups || c.relation.key === owner?.group);
      const creating = familyMatrix(resource, {}).find((m) => m.id.endsWith('.create'))!;
      const createAll = creating.all ?? creating.descendants!;
      const tester = async (perms: string[]) =>
        (await userWith(w().ts, w().api, { permissions: [...new Set(perms)], domains: [w().A] })).client();
      const args = async (target: number, group: number) =>
        c.relation
          ? {
              id: target,
              [c.relation.key]: [await freshRelated(c.relation.family, group, w, families)],
            }
          : id.endsWith('.update')
            ? { id: target, ...maker.change() }
            : c.args(target, await maker.createArgs(group));

      it('(a) runs with the permission that reaches the whole project', async () => {
        // a family whose edit reaches no further than a subtree (virtual numbers): that, on a row within it;
        // a relation's case sees the row with every view permission (a store's own view scopes: users')
        const reach = c.all ? w().B : w().A;
        const target = await rowIn(reach);
        const perms = c.relation
          ? [c.all ?? c.descendants!, ...resource.gates.view, ...(placing ? [createAll] : [])]
          : [c.all, viewAll];
        const row = (await run(resource.commands.get as unknown as Command, w().api, { id: target })) as Row;
        const client = await (
          await userWith(w().ts, w().api, {
            permissions: [...new Set(perms)],
            domains: [w().A],
            ...(c.relation ? authorityOver(resource, row) : {}),
          })
        ).client();
        const r = await run(command, client, await args(target, reach));
        if (id.endsWith('.list')) expect((r.data as unknown[]).length).toBe(1);
        if (id.endsWith('.export')) expect(r as unknown as unknown[]).toHaveLength(1);
        if (id.endsWith('.delete_all')) expect(r.deleted).toEqual([target]);
        if (c.relation) expect((r.data as Row).id).toBe(target);
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

/** The ids a record shows for a relation: its objects' ids, or the ids themselves. */
export const idsIn = (value: unknown): number[] =>
  (Array.isArray(value) ? value : [])
    .map((v) => (typeof v === 'object' && v !== null ? Number((v as { id: unknown }).id) : Number(v)))
    .sort((a, b) => a - b);

/**
 * A new row of the family a relation names, in `group` (a group: a new group below it), made by the
 * administrator from the family's example: what an add or a remove of the relation can name.
 */
export async function freshRelated(
  family: string,
  group: number,
  w: () => RegistryWorld,
  families: readonly AnyResource[],
): Promise<number> {
  if (family === 'group')
    return (
      await getCommand('group.create').run({ api: w().api }, { name: `Rel ${uid()}`, parent_id: group })
    ).data.id;
  const other = [...families, ...resources].find((f) => f.noun === family)!;
  const args = await exampleMaker(other, { api: () => w().api }, families).createArgs(group);
  return ((await run(other.commands.create as unknown as Command, w().api, args)).data as Row).id;
}

/**
 * The add and remove verbs of every many-to-many relation of the families (`Resource.relationVerbs`), on a
 * row made by the administrator: an add puts the ids in and keeps the others, a remove takes them out and
 * keeps the others, each audited once as an update; adding what is there or removing what is not answers
 * the record unchanged and writes nothing; an id of no row of the project is `invalid_related_entity`
 * naming it, more than MAX_RELATION_IDS ids `check_fields_data` on the field, and neither changes the row;
 * the list's `equals` filter finds the row by exactly its set.
 */
export function relationVerbsSuite(families: readonly AnyResource[], w: () => RegistryWorld): void {
  for (const resource of families)
    for (const verbs of resource.relationVerbs) {
      const recordKey = verbs.ref.record ?? verbs.key;
      const cmd = (c: Command, args: Record<string, unknown>) => run(c, w().api, args);
      const get = async (id: number) =>
        (await cmd(resource.commands.get as unknown as Command, { id })) as Record<string, unknown>;
      const updates = async (id: number) =>
        (await eventsOf(w().api, resource.noun, id)).filter((e) => e.action === 'update').length;

      it(`${verbs.add.id} and ${verbs.remove.id}: change only what they name, once, audited`, async () => {
        const maker = exampleMaker(resource, { api: () => w().api }, families);
        const row = (await cmd(resource.commands.create as unknown as Command, await maker.createArgs(w().A)))
          .data as Row;
        const first = idsIn((await get(row.id))[recordKey]);
        const x = await freshRelated(verbs.ref.family, w().A, w, families);
        const y = await freshRelated(verbs.ref.family, w().A, w, families);
        const both = [...first, x, y].sort((a, b) => a - b);

        const added = (await cmd(verbs.add, { id: row.id, [verbs.key]: [x, y, x] })).data as Row &
          Record<string, unknown>;
        expect(idsIn(added[recordKey])).toEqual(both);
        expect(await get(row.id)).toEqual(added);
        expect(await updates(row.id)).toBe(1);
        // what is there already: the same record, no write, no audit entry
        expect((await cmd(verbs.add, { id: row.id, [verbs.key]: [y] })).data).toEqual(added);
        expect(await updates(row.id)).toBe(1);

        const list = resource.commands.list as unknown as Command;
        const exactly = async (ids: number[]) =>
          (
            (await cmd(list, { filters: [{ field: recordKey, rule: 'equals', value: ids.join(',') }] }))
              .data as Row[]
          ).map((r) => r.id);
        if (resource.filterable[recordKey]) {
          expect(await exactly(both)).toContain(row.id);
          if (first.length) expect(await exactly([x, y])).not.toContain(row.id);
          else expect(await exactly([x, y])).toContain(row.id);
          expect(await exactly([x])).not.toContain(row.id);
        }

        const removed = (await cmd(verbs.remove, { id: row.id, [verbs.key]: [x] })).data as Record<
          string,
          unknown
        >;
        expect(idsIn(removed[recordKey])).toEqual([...first, y].sort((a, b) => a - b));
        expect(await updates(row.id)).toBe(2);
        // what is not there: nothing changes
        expect((await cmd(verbs.remove, { id: row.id, [verbs.key]: [x] })).data).toEqual(removed);
        expect(await updates(row.id)).toBe(2);

        const nowhere = await failure(cmd(verbs.add, { id: row.id, [verbs.key]: [y, 2_000_000_000] }));
        expect([nowhere.status, nowhere.message, nowhere.data]).toEqual([
          ErrorCatalogue.invalid_related_entity,
          'invalid_related_entity',
          expect.objectContaining({ ids: [2_000_000_000] }),
        ]);
        const many = Array.from({ length: MAX_RELATION_IDS + 1 }, (_, i) => i + 1);
        const tooMany = await failure(
          w().api.request('POST', verbs.add.http.path.replace(':id', String(row.id)), {
            body: { [verbs.key]: many },
          }),
        );
        expect([tooMany.status, tooMany.message]).toEqual([422, 'check_fields_data']);
        expect(await get(row.id)).toEqual(removed);
        expect(await updates(row.id)).toBe(2);
      });
    }
}
