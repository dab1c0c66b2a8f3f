/**
 * Issue 19, "done when": the trial family "amenities" (name, description, groups many-to-many, a licence
 * flag), declared in tests/support/fixture-amenity.ts as a shipped family would be, is put in a fixture
 * registry (never the shipped one) and every registry-wide suite runs over it with nothing written for it:
 * its store is the declaration's (the groups loaded into the record, filtered with `has`, written on create
 * and update, checked and placed for the scopes), and the permission matrix, the authority cases, the
 * audit log's names and the fuzzing of its writes come from the registry suites and its derived example, and
 * so do its groups' add and remove verbs and their `equals` filter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { getCommand, resources, type AnyResource, type Command } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { registerFixtureFamily } from '@lintel/server';
import { amenityResource, amenityTables } from '../support/fixture-amenity';
import { familySuite } from '../support/family-authority';
import { exampleMaker } from '../support/family-examples';
import {
  familyMatrixSuite,
  namesEveryFamily,
  relationVerbsSuite,
  type RegistryWorld,
} from '../support/registry-suites';
import { fuzzFamilies, poolOf } from '../support/fuzz-families';
import { startTestServer } from '../support/server';
import { admin, everyFeatureOn, failure, group, licence, uid, userWith } from '../support/fixtures';

// the fixture registry: the shipped families and the trial one
const unregister = registerFixtureFamily(amenityResource);
const registry: readonly AnyResource[] = [...resources, amenityResource];

const w = {} as RegistryWorld & { A1: number };
let api: ApiClient;
const call = (
  client: ApiClient,
  verb: keyof typeof amenityResource.commands | keyof typeof amenityResource.relationCommands,
  args: Record<string, unknown>,
) =>
  (({ ...amenityResource.commands, ...amenityResource.relationCommands })[verb] as unknown as Command).run(
    { api: client },
    args as never,
  ) as Promise<Record<string, unknown>>;
type Amenity = { id: number; name: string; groups: Array<{ id: number; name: string }> };
const make = async (groups: number[], client = api) =>
  (await call(client, 'create', { name: `Pool ${uid()}`, groups })).data as Amenity;

beforeAll(async () => {
  w.ts = await startTestServer();
  for (const statement of amenityTables.split(';')) await sql.raw(statement).execute(w.ts.server.context.db);
  api = w.api = await admin(w.ts);
  await licence(w.ts, everyFeatureOn());
  const full = await getCommand('group.full').run({ api }, {});
  w.root = full.data.find((g) => g.parent_id === null)!.id;
  w.A = await group(api, `A${uid()}`, w.root);
  w.A1 = await group(api, `A1${uid()}`, w.A);
  w.B = await group(api, `B${uid()}`, w.root);
  poolOf('group').push(w.A, w.A1, w.B);
});
afterAll(async () => {
  await w.ts?.close();
  unregister();
});

describe('the store, from the declaration', () => {
  it('loads, filters and rewrites the groups relation', async () => {
    const made = await make([w.B, w.A1]);
    expect(made.groups.map((g) => g.id).sort()).toEqual([w.A1, w.B].sort());
    expect(made.groups.every((g) => typeof g.name === 'string')).toBe(true);
    expect(await call(api, 'get', { id: made.id })).toEqual(made);
    const inB = await call(api, 'list', { filters: [{ field: 'groups', rule: 'has', value: w.B }] });
    expect((inB.data as Amenity[]).map((r) => r.id)).toContain(made.id);

    const moved = (await call(api, 'update', { id: made.id, groups: [w.A] })).data as Amenity;
    expect(moved.groups.map((g) => g.id)).toEqual([w.A]);
    const stillB = await call(api, 'list', { filters: [{ field: 'groups', rule: 'has', value: w.B }] });
    expect((stillB.data as Amenity[]).map((r) => r.id)).not.toContain(made.id);
    // the join rows go with the row
    await call(api, 'delete', { id: made.id });
    const left = await sql<{
      n: number;
    }>`select count(*)::int as n from fixture_amenity_groups where amenity_id = ${made.id}`.execute(
      w.ts.server.context.db,
    );
    expect(left.rows[0]!.n).toBe(0);
  });

  it('places a row by all its groups: each must be in the caller’s create scope, and be a group at all', async () => {
    const inA = await userWith(w.ts, api, {
      permissions: ['amenities.create_descendants', 'amenities.view_descendants'],
      domains: [w.A],
    });
    const client = await inA.client();
    expect((await make([w.A, w.A1], client)).groups).toHaveLength(2);
    const before = (await call(api, 'list', { limit: 1 })).meta;
    const outside = await failure(make([w.A1, w.B], client));
    expect([outside.status, outside.message, outside.data]).toEqual([
      403,
      'method_prohibited',
      expect.objectContaining({ reason: 'placement', field: 'groups' }),
    ]);
    const nowhere = await failure(make([w.A, 2_000_000], client));
    expect([nowhere.message, nowhere.data]).toEqual([
      'invalid_related_entity',
      { entity: 'domains', ids: [2_000_000] },
    ]);
    expect((await call(api, 'list', { limit: 1 })).meta).toEqual(before);
  });

  it('adds and removes groups as the update places them: a group outside the caller’s create scope is refused', async () => {
    const inA = await userWith(w.ts, api, {
      permissions: [
        'amenities.create_descendants',
        'amenities.edit_descendants',
        'amenities.view_descendants',
      ],
      domains: [w.A],
    });
    const client = await inA.client();
    const row = await make([w.A], client);
    const added = (await call(client, 'add_groups', { id: row.id, groups: [w.A1] })).data as Amenity;
    expect(added.groups.map((g) => g.id).sort()).toEqual([w.A, w.A1].sort());
    const outside = await failure(call(client, 'add_groups', { id: row.id, groups: [w.B] }));
    expect([outside.status, outside.message, outside.data]).toEqual([
      403,
      'method_prohibited',
      expect.objectContaining({ reason: 'placement', field: 'groups' }),
    ]);
    // its last group stays: the declaration's `min(1)`, as the update says
    await call(client, 'remove_groups', { id: row.id, groups: [w.A] });
    const last = await failure(call(client, 'remove_groups', { id: row.id, groups: [w.A1] }));
    expect([last.status, last.message]).toEqual([422, 'check_fields_data']);
    expect(((await call(api, 'get', { id: row.id })) as Amenity).groups.map((g) => g.id)).toEqual([w.A1]);
  });

  it('shows a caller the rows one of whose groups is in his subtree, and no other', async () => {
    const both = await make([w.A1, w.B]);
    const onlyB = await make([w.B]);
    const viewer = await (
      await userWith(w.ts, api, { permissions: ['amenities.view_descendants'], domains: [w.A] })
    ).client();
    const seen = ((await call(viewer, 'list', { limit: 1000 })).data as Amenity[]).map((r) => r.id);
    expect(seen).toContain(both.id);
    expect(seen).not.toContain(onlyB.id);
  });
});

describe('the registry-wide suites, over the fixture registry', () => {
  // its groups' add and remove verbs too: in the matrix, and changing only what they name
  familyMatrixSuite([amenityResource], () => w);
  relationVerbsSuite([amenityResource], () => w);
  familySuite(amenityResource, exampleMaker(amenityResource, { api: () => api }, registry), () => w);
  fuzzFamilies([amenityResource], () => ({ ts: w.ts, api }));
  it('the audit log names its rows', async () => {
    await namesEveryFamily([amenityResource], () => w, registry);
  });
});
