/**
 * What tells groups of one name apart (issue 13 point 5): a group's record carries its path, the groups
 * above it from the root down, and the tree lists children as people read their names (point 8).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand, pickerRow } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin, group, rootGroup } from '../support/fixtures';

let server: TestServer;
let api: ApiClient;

beforeAll(async () => {
  server = await startTestServer();
  api = await admin(server);
}, 60_000);

afterAll(async () => {
  await server?.close();
});

describe('a group’s path', () => {
  it('names the groups above it, and a picker row shows it with the logical address', async () => {
    const root = await rootGroup(api);
    const rootName = (await getCommand('group.get').run({ api }, { id: root })).name;
    const b1 = await group(api, 'Building 1', root);
    const b2 = await group(api, 'Building 2', root);
    const e1 = await group(api, 'Entrance 1', b1);
    const e2 = await group(api, 'Entrance 1', b2);
    const a1 = await group(api, 'Apartment 1', e1, { logic_address: '1.1.1' });
    const a2 = await group(api, 'Apartment 1', e2, { logic_address: '2.1.1' });

    const one = await getCommand('group.get').run({ api }, { id: a1 });
    expect(one.path).toEqual([
      { id: root, name: rootName },
      { id: b1, name: 'Building 1' },
      { id: e1, name: 'Entrance 1' },
    ]);
    expect((await getCommand('group.get').run({ api }, { id: root })).path).toEqual([]);

    const listed = await getCommand('group.list').run(
      { api },
      { search: 'Apartment 1', sort: 'name', limit: 10 },
    );
    const rows = listed.data.map((g) => pickerRow('group', g as unknown as Record<string, unknown>));
    expect(rows.find((r) => r.id === a1)!.hint).toBe(`${rootName} › Building 1 › Entrance 1 · 1.1.1`);
    expect(rows.find((r) => r.id === a2)!.hint).toBe(`${rootName} › Building 2 › Entrance 1 · 2.1.1`);
  });

  it('the tree lists children in the order people read their names', async () => {
    const root = await rootGroup(api);
    const entrance = await group(api, 'Entrance natural', root);
    for (const n of [10, 2, 1, 11, 3]) await group(api, `Apartment ${n}`, entrance);
    const tree = await getCommand('group.tree').run({ api }, {});
    const find = (nodes: typeof tree.data): (typeof tree.data)[number] | undefined => {
      for (const n of nodes) {
        if (n.id === entrance) return n;
        const f = find(n.children);
        if (f) return f;
      }
      return undefined;
    };
    expect(find(tree.data)!.children.map((c) => c.name)).toEqual([
      'Apartment 1',
      'Apartment 2',
      'Apartment 3',
      'Apartment 10',
      'Apartment 11',
    ]);
  });
});
