/**
 * A family from its declaration alone (issue 11, item 1): a throwaway family declared in
 * tests/support/fixture-family.ts, with its table made here, gets from the generic parts the server's routes
 * and store (lists, writes, scopes, the create-placement check, unique errors), the web's routes, menu entry,
 * pages and palette entry, the CLI's `lintel fixture-spas list`, and its permission-matrix cases.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { AllPermissions, type ApiClient } from '@lintel/core';
import { getCommand, registry, type Command } from '@lintel/commands';
import { registerFixtureFamily } from '@lintel/server';
import { spaResource, spaTable } from '../support/fixture-family';
import { familyMatrix } from '../support/family-matrix';
import { canMove, familySuite, isScoped } from '../support/family-authority';
import { startTestServer, type TestServer } from '../support/server';
import { admin, failure, group, uid, userWith } from '../support/fixtures';
import { buildCli, freshConfigDir, lintel, removeConfigDirs } from '../cli/support';
import {
  familyCommandPages,
  familyEditPages,
  familyIcons,
  familyPageDefs,
  screenChoice,
  searchedFamilies,
} from '../../apps/web/src/families/family-pages';
import { evaluateGates } from '../../apps/web/src/access/gates';
import { run } from '../../apps/cli/src/program';
import { families } from '../../apps/cli/src/families/words';
import type { CliContext } from '../../apps/cli/src/context';

// the one registration a test needs: a shipped family is in the registry and the handler map already
const unregister = registerFixtureFamily(spaResource);

let ts: TestServer;
let api: ApiClient;
const w = {} as { root: number; A: number; A1: number; B: number };
const cmd = (verb: keyof typeof spaResource.commands) => spaResource.commands[verb] as unknown as Command;
const call = (client: ApiClient, verb: keyof typeof spaResource.commands, args: Record<string, unknown>) =>
  cmd(verb).run({ api: client }, args as never) as Promise<Record<string, unknown>>;
const spa = (domain_id: number, extra: Record<string, unknown> = {}) => ({
  name: `Spa ${uid()}`,
  capacity: 12,
  domain_id,
  ...extra,
});
const makeSpa = async (domain_id: number) =>
  ((await call(api, 'create', spa(domain_id))).data as { id: number }).id;

beforeAll(async () => {
  ts = await startTestServer();
  await sql.raw(spaTable).execute(ts.server.context.db);
  api = await admin(ts);
  const full = await getCommand('group.full').run({ api }, {});
  w.root = full.data.find((g) => g.parent_id === null)!.id;
  w.A = await group(api, `A${uid()}`, w.root);
  w.A1 = await group(api, `A1${uid()}`, w.A);
  w.B = await group(api, `B${uid()}`, w.root);
});
afterAll(async () => {
  await ts?.close();
  removeConfigDirs();
  unregister();
});

describe('the server, from the declaration', () => {
  it('has the six routes and a store over the table: create, get, list with filters and sort, update, delete', async () => {
    const created = (await call(api, 'create', spa(w.A1, { name: `Sauna ${uid()}`, capacity: 8 })))
      .data as Record<string, unknown>;
    expect(created).toMatchObject({
      capacity: 8,
      domain_id: w.A1,
      created_by_user: { name: expect.any(String) },
    });
    expect(typeof created.created_at).toBe('string');
    const id = created.id as number;
    expect(await call(api, 'get', { id })).toEqual(created);

    await makeSpa(w.B);
    const big = await call(api, 'list', {
      filters: [{ field: 'capacity', rule: 'above', value: 10 }],
      sort: '-capacity',
    });
    expect((big.data as Array<{ id: number }>).map((r) => r.id)).not.toContain(id);
    const found = await call(api, 'list', { search: (created.name as string).slice(0, 9) });
    expect((found.data as Array<{ id: number }>).map((r) => r.id)).toEqual([id]);

    const updated = (await call(api, 'update', { id, capacity: 9 })).data as Record<string, unknown>;
    expect(updated.capacity).toBe(9);
    expect(await call(api, 'delete', { id })).toEqual({ ok: true });
    expect((await failure(call(api, 'get', { id }))).message).toBe('item_not_found');
  });

  it('maps a duplicate of a unique field to value_not_unique naming the field', async () => {
    const first = spa(w.A);
    await call(api, 'create', first);
    const e = await failure(call(api, 'create', { ...first, capacity: 3 }));
    expect(e.status).toBe(409);
    expect(e.message).toBe('value_not_unique');
    expect(JSON.stringify(e.body)).toContain('"name"');
  });

  it('checks the group a new row is placed in against the caller’s create scope', async () => {
    const inA = await userWith(ts, api, {
      permissions: ['amenities.create_descendants', 'amenities.view_descendants'],
      domains: [w.A],
    });
    const client = await inA.client();
    expect(((await call(client, 'create', spa(w.A1))).data as { domain_id: number }).domain_id).toBe(w.A1);
    const outside = await failure(call(client, 'create', spa(w.B)));
    expect(outside.status).toBe(403);
    expect(outside.message).toBe('method_prohibited');
    const nowhere = await failure(call(client, 'create', spa(2_000_000)));
    expect(nowhere.message).toBe('invalid_related_entity');
    // nothing was written by the refused calls
    const mine = await call(client, 'list', { limit: 100 });
    expect((mine.data as Array<{ domain_id: number }>).every((r) => r.domain_id !== w.B)).toBe(true);
  });
});

describe('the permission matrix, derived from the declaration', () => {
  const cases = familyMatrix(spaResource, { capacity: 30 });
  it('has a case for each of the seven commands', () => {
    expect(cases.map((c) => c.id).sort()).toEqual(
      Object.values(spaResource.commands)
        .map((c) => c.id)
        .sort(),
    );
  });

  describe.each(cases.map((c) => [c.id, c] as const))('%s', (id, c) => {
    const command = registry.get(id)!;
    const tester = async (perms: string[]) =>
      (await userWith(ts, api, { permissions: perms, domains: [w.A] })).client();
    // view permissions too, for the writes: a row one cannot see is not found before it is refused
    const withView = (p: string) => [...new Set([p, 'amenities.view_all'])];

    it('(a) runs with the permission that reaches the whole project', async () => {
      const target = await makeSpa(w.B);
      const r = (await command.run(
        { api: await tester(withView(c.all)) },
        c.args(target, spa(w.B)) as never,
      )) as Record<string, unknown>;
      if (id.endsWith('.list')) expect((r.data as unknown[]).length).toBe(1);
      if (id.endsWith('.export')) expect(r as unknown as unknown[]).toHaveLength(1);
      if (id.endsWith('.delete_all')) expect(r.deleted).toEqual([target]);
    });

    it('(b) is refused without it', async () => {
      const other = AllPermissions.find((p) => !command.gates.anyPermission!.includes(p))!;
      const e = await failure(
        command.run({ api: await tester([other]) }, c.args(await makeSpa(w.A), spa(w.A)) as never),
      );
      expect(e.status).toBe(403);
      expect(e.message).toBe('method_prohibited');
    });

    it('(c) does not reach another subtree with the subtree permission', async () => {
      const client = await tester([c.descendants!, 'amenities.view_descendants']);
      const target = await makeSpa(w.B);
      const args = c.args(target, spa(w.B)) as never;
      if (id.endsWith('.list'))
        expect(((await command.run({ api: client }, args)) as { data: unknown[] }).data).toEqual([]);
      else if (id.endsWith('.export')) expect(await command.run({ api: client }, args)).toEqual([]);
      else if (id.endsWith('.delete_all'))
        expect(((await command.run({ api: client }, args)) as { deleted: number[] }).deleted).toEqual([]);
      else expect([403, 404]).toContain((await failure(command.run({ api: client }, args))).status);
    });
  });
});

describe('authority over the target and counted limits, derived from the declaration (issue 12)', () => {
  it('the fixture gets every case: scoped, movable between groups, one counted limit', () => {
    expect([isScoped(spaResource), canMove(spaResource), spaResource.limits]).toEqual([
      true,
      true,
      [{ per: 'group', feature: 'fixture_spas' }],
    ]);
  });
  familySuite(
    spaResource,
    { create: (g) => spa(g), change: () => ({ capacity: 31 }), move: (g) => ({ domain_id: g }) },
    () => ({ ts, api, ...w }),
  );
});

describe('the web, from the declaration', () => {
  const pages = familyPageDefs([spaResource]);

  it('gets a list, an add and an edit route, gated like their commands, and a menu entry', () => {
    expect(pages.map((p) => [p.id, p.path, p.menu])).toEqual([
      ['fixture-spas', '/fixture-spas', true],
      ['fixture-spas.add', '/fixture-spas/add', false],
      ['fixture-spas.edit', '/fixture-spas/:id/edit', false],
    ]);
    expect(pages[0]).toMatchObject({
      section: 'common',
      icon: 'home',
      titleKey: 'commands:pages.fixture_spa.title',
    });
    expect(pages.map((p) => p.gates)).toEqual([cmd('list').gates, cmd('create').gates, cmd('get').gates]);
    const holder = (permissions: string[]) => ({ permissions, license: {} as never });
    expect(evaluateGates(pages[0]!.gates, holder(['amenities.view_own'])).can).toBe(true);
    expect(evaluateGates(pages[0]!.gates, holder(['markers.view'])).can).toBe(false);
  });

  it('gets its generated screens for those routes, unless the router has its own', () => {
    expect(pages.map((p) => screenChoice(p, {}, [spaResource]))).toEqual([
      { own: false, resource: spaResource, view: 'list' },
      { own: false, resource: spaResource, view: 'add' },
      { own: false, resource: spaResource, view: 'edit' },
    ]);
    expect(screenChoice(pages[0]!, { 'fixture-spas': 'a page of its own' }, [spaResource])).toEqual({
      own: true,
    });
  });

  it('gets its palette entries: the list command opens the page, a row opens its edit page, rows are searched', () => {
    expect(familyCommandPages([spaResource])).toEqual({ 'fixture_spa.list': '/fixture-spas' });
    expect(familyEditPages([spaResource]).fixture_spa!(7)).toBe('/fixture-spas/7/edit');
    expect(familyIcons([spaResource])).toEqual({ fixture_spa: 'home' });
    expect(searchedFamilies([spaResource])).toEqual(['fixture_spa']);
  });
});

describe('the CLI, from the declaration', () => {
  it('has `lintel fixture-spas` with the six verbs, and `list` lists the rows', async () => {
    const family = families(registry).find((f) => f.noun === 'fixture_spa')!;
    expect(family.word).toBe('fixture-spas');
    expect(family.resource).toBe(spaResource);
    expect(family.verbs.map((v) => v.word)).toEqual([
      'list',
      'get',
      'create',
      'update',
      'delete',
      'delete-all',
    ]);

    const built = buildCli();
    expect(built.status, built.stderr).toBe(0);
    const configDir = freshConfigDir();
    const login = await lintel(['login', '--server', ts.url, '--login', ts.adminLogin, '--password-stdin'], {
      configDir,
      input: `${ts.adminPassword}\n`,
    });
    expect(login.code, login.stderr).toBe(0);
    const id = await makeSpa(w.A);
    let stdout = '';
    let stderr = '';
    const stream = (write: (s: string) => void) =>
      ({ isTTY: false, write: (s: string) => (write(s), true) }) as unknown as NodeJS.WriteStream;
    const ctx: CliContext = {
      env: { LINTEL_CONFIG_DIR: configDir, CI: 'true' },
      stdin: process.stdin,
      stdout: stream((s) => (stdout += s)),
      stderr: stream((s) => (stderr += s)),
    };
    const code = await run(['fixture-spas', 'list', '--where', `id equals ${id}`, '--json'], ctx);
    expect(code, stderr).toBe(0);
    expect((JSON.parse(stdout) as { data: Array<{ id: number }> }).data.map((r) => r.id)).toEqual([id]);
  });
});
