/**
 * `lintel users import` and `lintel users export`, the built CLI as a child process against real servers:
 * dry run, all or nothing, continue on error, exit codes, the --json report against the command's result
 * schema, and export → import round trips (CSV, XLSX, JSON; by id after deleting, by name into another server).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { parse as parseCsv } from 'csv-parse/sync';
import {
  exportNamers,
  exportRow,
  flatCells,
  getCommand,
  recordColumns,
  Role,
  userImportCommit,
  UserExportColumns,
  type User,
} from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { admin, group, rootGroup, uid } from '../support/fixtures';
import { startTestServer, type TestServer } from '../support/server';
import { buildCli, freshConfigDir, lintel, removeConfigDirs, type Run } from './support';

let ts: TestServer;
let api: ApiClient;
let dir: string;
let configDir: string;
const w = {} as { root: number; A: number; B: number; role: number; marker: number };

const cli = (args: string[], config = configDir) => lintel(args, { configDir: config });
const file = (name: string, text: string) => {
  const p = path.join(dir, name);
  fs.writeFileSync(p, text);
  return p;
};
const count = async (prefix: string) =>
  (
    await getCommand('user.list').run(
      { api },
      { filters: [{ field: 'login', rule: 'begins_with', value: prefix }], limit: 1 },
    )
  ).meta.total;

async function signIn(server: TestServer, config: string): Promise<void> {
  const r = await lintel(
    ['login', '--server', server.url, '--login', server.adminLogin, '--password-stdin'],
    { configDir: config, input: `${server.adminPassword}\n` },
  );
  expect(r.code, r.stderr).toBe(0);
}

/** A CSV in the export's own columns and values, so that an export of the same users is this very text. */
function exportLike(rows: Array<Partial<Record<(typeof UserExportColumns)[number], string>>>): string {
  const defaults = {
    email: '',
    description: '',
    markers: '',
    phone: '',
    address: '',
    time_zone: '+02:00',
    identifier_format: 'dec',
    time_format: 'DD-MM-YYYY',
    elevator_access_disabled: 'false',
    is_group_admin: 'false',
  };
  const lines = rows.map((r) =>
    UserExportColumns.map(
      (c) => (r as Record<string, string>)[c] ?? (defaults as Record<string, string>)[c] ?? '',
    ).join(','),
  );
  return `${UserExportColumns.join(',')}\n${lines.join('\n')}\n`;
}

beforeAll(async () => {
  const built = buildCli();
  expect(built.status, built.stderr).toBe(0);
  ts = await startTestServer();
  api = await admin(ts);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-bulk-'));
  configDir = freshConfigDir();
  await signIn(ts, configDir);
  w.root = await rootGroup(api);
  w.A = await group(api, 'Bulk A', w.root, { logic_address: '9.1' });
  w.B = await group(api, 'Bulk B', w.root);
  w.role = (
    await getCommand('role.create').run({ api }, { name: 'Bulk tenant', permissions: ['users.view'] })
  ).data.id;
  w.marker = (await getCommand('marker.create').run({ api }, { name: 'Bulk VIP', color: '#445566' })).data.id;
});

afterAll(async () => {
  await ts?.close();
  removeConfigDirs();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('lintel users import', () => {
  const tag = uid();
  const mixed = () =>
    file(
      `mixed-${tag}.csv`,
      [
        'login,name,email,role,domains,markers,phone',
        `good1.${tag},Good One,good1.${tag}@example.test,Bulk tenant,Bulk A,Bulk VIP,+4912345678`,
        `good2.${tag},Good Two,,${w.role},${w.A};@9.1,,`,
        `bad1.${tag},Bad Mail,not-an-email,Bulk tenant,Bulk A,,`,
        `bad2.${tag},No Group,,Bulk tenant,Nowhere,,`,
        `good1.${tag},Same login,,Bulk tenant,Bulk B,,`,
        `"good3.${tag}","Good, Three",,Bulk tenant,"Bulk B",,`,
      ].join('\n'),
    );

  it('sits beside the generated verbs of users', async () => {
    const r = await cli(['users', '--help']);
    expect(r.stdout).toMatch(/^\s+list\b/m);
    expect(r.stdout).toMatch(/^\s+import \[options\] <file>/m);
    expect(r.stdout).toMatch(/^\s+export \[options\]/m);
  });

  it('--dry-run checks every row, reports the bad lines and writes nothing (exit 1)', async () => {
    const r = await cli(['users', 'import', mixed(), '--dry-run']);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toContain('6 rows, 3 valid, 3 rejected');
    expect(r.stdout).toContain('Dry run: nothing was written');
    expect(r.stdout).toContain('Rejected lines: 4-6');
    expect(r.stdout).toMatch(/^4\s+email\s+Must be an e-mail address/m);
    expect(r.stdout).toMatch(/^5\s+domains\s+Invalid related entity sent: domains: Nowhere/m);
    expect(r.stdout).toMatch(/^6\s+login\s+Repeats line 2 of the file/m);
    expect(r.stderr).toContain('3 rows of');
    expect(await count(`good`)).toBe(0);
  });

  it('without --continue-on-error inserts nothing while any row is invalid (exit 1)', async () => {
    const r = await cli(['users', 'import', mixed()]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('Nothing was inserted: 3 rows are invalid.');
    expect(await count(`good`)).toBe(0);
  });

  it('--continue-on-error inserts exactly the valid lines; --json prints the report of user.import_commit', async () => {
    const r = await cli(['users', 'import', mixed(), '--continue-on-error', '--json', '--batch', '2']);
    expect(r.code).toBe(1);
    const report = userImportCommit.result.parse(JSON.parse(r.stdout));
    expect(report).toMatchObject({
      committed: true,
      rows: 6,
      valid: 3,
      invalid: 3,
      inserted: 3,
      inserted_lines: 'all_valid',
      rejected_lines: [[4, 6]],
    });
    expect(JSON.parse(r.stderr)).toMatchObject({ error_code: 'rows_rejected', data: { count: 3 } });
    const users = await getCommand('user.list').run({ api }, { search: tag, sort: 'login', limit: 10 });
    expect(users.data.map((u) => u.login)).toEqual([`good1.${tag}`, `good2.${tag}`, `good3.${tag}`]);
    expect(users.data[0]).toMatchObject({
      email: `good1.${tag}@example.test`,
      role: { id: w.role },
      domains: [{ id: w.A }],
      markers: [{ id: w.marker }],
      profile: { phone: '+4912345678' },
    });
    expect(users.data[2]).toMatchObject({ name: 'Good, Three', domains: [{ id: w.B }] });
  });

  it('a clean file goes in whole: exit 0; a dry run of a clean file: exit 0', async () => {
    const t2 = uid();
    const csv = file(
      `clean-${t2}.csv`,
      `login,name,role,domains\nclean1.${t2},Clean One,Bulk tenant,Bulk A\nclean2.${t2},Clean Two,${w.role},${w.B}\n`,
    );
    const dry = await cli(['users', 'import', csv, '--dry-run', '--json']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(userImportCommit.result.parse(JSON.parse(dry.stdout))).toMatchObject({
      dry_run: true,
      would_insert: 2,
      inserted: 0,
    });
    expect(await count(`clean`)).toBe(0);
    const r = await cli(['users', 'import', csv]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Inserted 2 users: every valid line.');
    expect(await count(`clean`)).toBe(2);
  });

  it('bad files and options are usage errors (exit 2), before anything is sent', async () => {
    const unknown = await cli([
      'users',
      'import',
      file('unknown.csv', 'login,name,role,domains,colour\na,b,c,d,red\n'),
    ]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown columns: colour');
    const missing = await cli(['users', 'import', file('missing.csv', 'login,name\nabc,def\n')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('required columns missing: role, domains');
    const ragged = await cli(['users', 'import', file('ragged.csv', 'login,name,role,domains\nabc,def,1\n')]);
    expect(ragged.code).toBe(2);
    expect(ragged.stderr).toMatch(/line 2/);
    const json = await cli([
      'users',
      'import',
      file('broken.json', '[{"login": "a", "name": "b"},\n{"login": ]'),
      '--json',
    ]);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stderr)).toMatchObject({
      error_code: 'bad_file',
      data: { line: 2, reason: 'parser' },
    });
    const longFile = file(
      'long.csv',
      `login,name,role,domains,description\nabc,def,1,1,${'x'.repeat(10_001)}\n`,
    );
    const long = await cli(['users', 'import', longFile]);
    expect(long.code).toBe(2);
    expect(long.stderr).toContain('line 2: description: longer than 10000 characters');
    // the reason is told in the CLI's language
    const longRu = await lintel(['users', 'import', longFile], { configDir, env: { LINTEL_LANG: 'ru' } });
    expect(longRu.stderr).toContain('строка 2: description: длиннее 10000 символов');
    expect((await cli(['users', 'import', path.join(dir, 'nope.csv')])).code).toBe(2);
    expect((await cli(['users', 'import', file('people.txt', 'x')])).code).toBe(2);
    expect(
      (await cli(['users', 'import', file('ok.csv', 'login,name,role,domains\n'), '--batch', '5000'])).code,
    ).toBe(2);
    // nothing was left behind on the server
    const open = await sql<{
      n: number;
    }>`select count(*)::int as n from user_imports where status = 'open'`.execute(ts.server.context.db);
    expect(open.rows[0]!.n).toBe(0);
    // ten runs of the CLI, each a process of its own: 30 s was not enough with the machine's cores busy
  }, 90_000);

  it('JSON arrays and NDJSON import like CSV, lists as lists', async () => {
    const t3 = uid();
    const arr = file(
      `people-${t3}.json`,
      JSON.stringify(
        [
          {
            login: `j1.${t3}`,
            name: 'J One',
            role: w.role,
            domains: [w.A, 'Bulk B'],
            markers: ['Bulk VIP'],
            is_group_admin: true,
          },
        ],
        null,
        2,
      ),
    );
    const nd = file(
      `people-${t3}.ndjson`,
      `${JSON.stringify({ login: `j2.${t3}`, name: 'J Two', role: 'Bulk tenant', domains: '@9.1' })}\n\n`,
    );
    expect((await cli(['users', 'import', arr])).code).toBe(0);
    expect((await cli(['users', 'import', nd])).code).toBe(0);
    const users = await getCommand('user.list').run({ api }, { search: t3, sort: 'login', limit: 10 });
    expect(users.data.map((u) => [u.login, u.domains.map((d) => d.id).sort(), u.is_group_admin])).toEqual([
      [`j1.${t3}`, [w.A, w.B].sort(), true],
      [`j2.${t3}`, [w.A], false],
    ]);
  });
});

describe('lintel users export', () => {
  const tag = `rt${uid()}`;
  let original: string;

  beforeAll(async () => {
    original = exportLike(
      Array.from({ length: 40 }, (_, i) => ({
        login: `${tag}.${String(i).padStart(3, '0')}`,
        name: i % 7 === 0 ? `Name, with comma ${i}` : `Person ${i}`,
        email: i % 3 === 0 ? `${tag}.${i}@example.test` : '',
        description: i % 5 === 0 ? 'line one\nline "two"' : '',
        role: String(w.role),
        domains: i % 2 ? `${w.A};${w.B}` : String(w.B),
        markers: i % 4 === 0 ? String(w.marker) : '',
        phone: i % 6 === 0 ? '+4912345678' : '',
        is_group_admin: i % 9 === 0 ? 'true' : 'false',
      })),
    )
      .replace(/line one\nline "two"/g, '"line one\nline ""two"""')
      .replace(/(Name, with comma \d+)/g, '"$1"');
    const r = await cli(['users', 'import', file(`${tag}.csv`, original)]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
  });

  const where = () => `login begins_with ${tag}`;

  it('writes the import columns, equal to the data imported', async () => {
    const r = await cli(['users', 'export', '--where', where()]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(original);
  });

  for (const format of ['csv', 'xlsx', 'json'] as const)
    it(`${format}: export → delete → import → export again is the same`, async () => {
      const out = path.join(dir, `${tag}-export.${format}`);
      const first = await cli(['users', 'export', '--where', where(), '-o', out, '--json']);
      expect(JSON.parse(first.stdout)).toEqual({ exported: 40, file: out, format });
      const before = (await cli(['users', 'export', '--where', where()])).stdout;
      const ids = (
        await getCommand('user.list').run(
          { api },
          { filters: [{ field: 'login', rule: 'begins_with', value: tag }], limit: 100 },
        )
      ).data.map((u) => u.id);
      await getCommand('user.delete_all').run({ api }, { items: ids });
      expect(await count(tag)).toBe(0);
      const back = await cli(['users', 'import', out, '--json']);
      expect(back.code, back.stderr).toBe(0);
      expect(JSON.parse(back.stdout)).toMatchObject({ inserted: 40 });
      expect((await cli(['users', 'export', '--where', where()])).stdout).toBe(before);
    });

  it('--refs name carries the data to another server with the same names', async () => {
    const out = path.join(dir, `${tag}-names.csv`);
    expect((await cli(['users', 'export', '--where', where(), '--refs', 'name', '-o', out])).code).toBe(0);
    const text = fs.readFileSync(out, 'utf8');
    expect(text).toContain('Bulk tenant');
    expect(text).toContain('Bulk A;Bulk B');
    const other = await startTestServer();
    try {
      const otherApi = await admin(other);
      const root = await rootGroup(otherApi);
      // the same names, other ids (a few groups first, so that ids differ)
      await group(otherApi, 'Filler', root);
      await group(otherApi, 'Bulk B', root);
      await group(otherApi, 'Bulk A', root, { logic_address: '9.1' });
      await getCommand('marker.create').run({ api: otherApi }, { name: 'Filler', color: '#000000' });
      await getCommand('marker.create').run({ api: otherApi }, { name: 'Bulk VIP', color: '#445566' });
      await getCommand('role.create').run(
        { api: otherApi },
        { name: 'Bulk tenant', permissions: ['users.view'] },
      );
      const otherConfig = freshConfigDir();
      await signIn(other, otherConfig);
      const imported: Run = await cli(['users', 'import', out], otherConfig);
      expect(imported.code, imported.stdout + imported.stderr).toBe(0);
      const again = await cli(['users', 'export', '--where', where(), '--refs', 'name'], otherConfig);
      expect(again.stdout).toBe(text);
    } finally {
      await other.close();
    }
  });

  it('streams exactly the rows of list --all, in its sort, with its search (NDJSON)', async () => {
    const query = ['--where', where(), '--search', '1', '--sort', '-name'];
    const exported = await cli(['users', 'export', ...query, '--format', 'ndjson']);
    expect(exported.code, exported.stderr).toBe(0);
    const listed = await cli(['users', 'list', ...query, '--all', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    const users = (JSON.parse(listed.stdout) as { data: User[] }).data;
    expect(users.length).toBeGreaterThan(5);
    const lines = exported.stdout.trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l))).toEqual(users.map((u) => exportRow(u, exportNamers('id'))));
  });

  it('usage errors: --json without a file, xlsx to a terminal is refused only at a terminal, a bad filter', async () => {
    expect((await cli(['users', 'export', '--json'])).code).toBe(2);
    const bad = await cli(['users', 'export', '--where', 'colour equals red']);
    expect(bad.code).toBe(2);
    const badSort = await cli(['users', 'export', '--sort', 'colour']);
    expect(badSort.code).toBe(2);
    expect(
      JSON.parse((await cli(['users', 'export', '--sort', 'colour', '--json', '-o', 'x.csv'])).stderr),
    ).toMatchObject({ error_code: 'check_fields_data' });
  });
});

describe('lintel <nouns> export: every family', () => {
  it('roles: CSV of the record’s fields, the rows of list --all (references by id, lists joined by ;)', async () => {
    for (let i = 0; i < 3; i++)
      await getCommand('role.create').run({ api }, { name: `Export role ${i}`, permissions: ['users.view'] });
    const r = await cli(['roles', 'export', '--where', 'name begins_with Export', '--sort', '-id']);
    expect(r.code, r.stderr).toBe(0);
    const rows = parseCsv(r.stdout) as string[][];
    const columns = recordColumns(Role);
    expect(rows[0]).toEqual(columns);
    const listed = await getCommand('role.list').run(
      { api },
      { filters: [{ field: 'name', rule: 'begins_with', value: 'Export' }], sort: '-id', limit: 100 },
    );
    expect(rows.slice(1)).toEqual(
      listed.data.map((role) => flatCells(role, columns).map((c) => (c === null ? '' : String(c)))),
    );
    expect(rows.length).toBe(4);
  });

  it('markers: NDJSON is the records as the API gives them; --help lists export for each family', async () => {
    const r = await cli(['markers', 'export', '--format', 'ndjson']);
    expect(r.code, r.stderr).toBe(0);
    const listed = await getCommand('marker.list').run({ api }, { limit: 1000 });
    expect(
      r.stdout
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual(listed.data);
    for (const family of ['users', 'roles', 'groups', 'markers', 'domain-types', 'audit-events']) {
      const help = await cli([family, '--help']);
      expect(help.stdout, family).toMatch(/^\s+export \[options\]/m);
    }
  });
});
