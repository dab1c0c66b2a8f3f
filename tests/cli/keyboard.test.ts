import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import { Profile, type ApiClient } from '@lintel/core';
import { admin, group, uid } from '../support/fixtures';
import { startTestServer, type TestServer } from '../support/server';
import { bin, buildCli, freshConfigDir, lintel, removeConfigDirs, type Run } from './support';

// issue 13, "keyboard-first for real": the CLI's points 12 to 16, as a script sees them

let ts: TestServer;
let api: ApiClient;
let adminDir: string;
let rootGroup: number;
let adminRole: number;

const cli = (args: string[], input?: string) => lintel(args, { configDir: adminDir, input });

function out(r: Run): unknown {
  expect(r.stderr, r.stderr).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout);
}

/** Runs the CLI with a stdout whose reader has already gone, as `| head` leaves it after its lines. */
function closedPipe(args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env, CI: 'true', LINTEL_CONFIG_DIR: adminDir };
    for (const key of ['LINTEL_TOKEN', 'LINTEL_SERVER', 'LINTEL_LANG']) delete env[key];
    const child = spawn(process.execPath, [bin, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: '', stderr }));
  });
}

async function makeUsers(count: number, prefix: string): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 1; i <= count; i++) {
    const r = await getCommand('user.create').run(
      { api },
      {
        login: `${prefix}${i}`,
        name: `${prefix} ${i}`,
        role: adminRole,
        domains: [rootGroup],
        send_registration_link: false,
      },
    );
    ids.push(r.data.id);
  }
  return ids;
}

beforeAll(async () => {
  const built = buildCli();
  expect(built.status, built.stderr).toBe(0);
  ts = await startTestServer();
  api = await admin(ts);
  adminDir = freshConfigDir();
  const r = await lintel(['login', '--server', ts.url, '--login', ts.adminLogin, '--password-stdin'], {
    configDir: adminDir,
    input: `${ts.adminPassword}\n`,
  });
  expect(r.code, r.stderr).toBe(0);
  const profile = Profile.parse(out(await cli(['whoami', '--json'])));
  rootGroup = profile.domains[0]!.id;
  adminRole = profile.role.id;
});

afterAll(async () => {
  await ts?.close();
  removeConfigDirs();
});

describe('12. a closed pipe ends quietly with success', () => {
  it('users list --all into a reader that has gone', async () => {
    const r = await closedPipe(['users', 'list', '--all']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it('users export into a reader that has gone', async () => {
    const r = await closedPipe(['users', 'export']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });
});

describe('13. a piped page says it is one page; --json keeps its shape', () => {
  it('a piped list with more rows than its page says so on stderr, and not when it holds them all', async () => {
    await makeUsers(3, `page.${uid()}.`);
    const total = (await getCommand('user.list').run({ api }, { limit: 1 })).meta.total;
    const r = await cli(['users', 'list', '--limit', '2']);
    expect(r.code).toBe(0);
    expect(r.stdout.trimEnd().split('\n')).toHaveLength(3); // the header and two rows
    expect(r.stderr).toBe(`Rows 1-2 of ${total}. Next: --page 2, or --all for every row.\n`);

    const all = await cli(['users', 'list', '--all', '--limit', '2']);
    expect(all.stderr).toBe('');
    expect(all.stdout.trimEnd().split('\n')).toHaveLength(total + 1);
  });

  it('--json with --fields is still {data, meta}', async () => {
    const r = await cli(['users', 'list', '--limit', '1', '--fields', 'id,login', '--json']);
    const reply = await getCommand('user.list').run({ api }, { limit: 1 });
    expect(out(r)).toEqual({
      data: reply.data.map((u) => ({ id: u.id, login: u.login })),
      meta: reply.meta,
    });
  });
});

describe('14. references by name, as the pickers take them', () => {
  it('a role and groups by name, a user by login; an unknown login is not found', async () => {
    const tag = uid();
    const role = await getCommand('role.create').run(
      { api },
      { name: `Concierge ${tag}`, permissions: ['users.view'] },
    );
    const block = await group(api, `Block ${tag}`, rootGroup);
    const login = `concierge.${tag}`;
    const created = await cli([
      'users',
      'create',
      '--login',
      login,
      '--name',
      `Concierge ${tag}`,
      '--role',
      `Concierge ${tag}`,
      '--domains',
      `Block ${tag}`,
      '--send-registration-link',
      'false',
      '--json',
    ]);
    const saved = (out(created) as { data: { id: number; role: { id: number }; domains: { id: number }[] } })
      .data;
    expect(saved.role.id).toBe(role.data.id);
    expect(saved.domains.map((d) => d.id)).toEqual([block]);

    const got = await cli(['users', 'get', login, '--fields', 'id,login', '--json']);
    expect(out(got)).toEqual({ id: saved.id, login });

    const missing = await cli(['users', 'get', `nobody.${tag}`]);
    expect(missing.code).toBe(5);
    expect(missing.stderr).toBe(`id: no user is named “nobody.${tag}”.\n`);
  });

  it('a name that several rows share is refused with exit 2, naming them by id', async () => {
    const tag = uid();
    const a = await group(api, `Building A ${tag}`, rootGroup);
    const b = await group(api, `Building B ${tag}`, rootGroup);
    const inA = await group(api, `Apartment 1 ${tag}`, a);
    const inB = await group(api, `Apartment 1 ${tag}`, b);
    const r = await cli(['groups', 'get', `Apartment 1 ${tag}`]);
    expect(r.code).toBe(2);
    // each named by its place: the path of groups above it, as the pickers show it
    const root = (await getCommand('group.get').run({ api }, { id: rootGroup })).name;
    expect(r.stderr).toBe(
      `id: “Apartment 1 ${tag}” names 2 rows (group): ${inA} (${root} › Building A ${tag}), ${inB} (${root} › Building B ${tag}). ` +
        'Give the id of the one you mean.\n',
    );
    const one = await cli(['groups', 'get', `Building A ${tag}`, '--fields', 'id', '--json']);
    expect(out(one)).toEqual({ id: a });
  });
});

describe('8. names sort naturally', () => {
  it('groups and users by name: numbers inside names compare as numbers, both ways', async () => {
    const tag = uid();
    for (const n of [10, 2, 11, 1, 100]) await group(api, `Apartment ${n} ${tag}`, rootGroup);
    const names = async (sort: string) => {
      const r = await cli(['groups', 'list', '--search', tag, '--sort', sort, '--fields', 'name']);
      expect(r.code, r.stderr).toBe(0);
      return r.stdout.trimEnd().split('\n').slice(1);
    };
    const order = [1, 2, 10, 11, 100].map((n) => `Apartment ${n} ${tag}`);
    expect(await names('name')).toEqual(order);
    expect(await names('-name')).toEqual([...order].reverse());

    for (const n of [10, 9])
      await getCommand('user.create').run(
        { api },
        {
          login: `flat${n}.${tag}`,
          name: `Flat ${n} ${tag}`,
          role: adminRole,
          domains: [rootGroup],
          send_registration_link: false,
        },
      );
    const users = await cli(['users', 'list', '--search', tag, '--sort', 'name', '--fields', 'name']);
    expect(users.stdout).toBe(`name\nFlat 9 ${tag}\nFlat 10 ${tag}\n`);
  });
});

describe('16. the smaller ones', () => {
  it('suggests the verb meant (users edit → update) and the family (userz → users)', async () => {
    const edit = await cli(['users', 'edit', '1']);
    expect(edit.code).toBe(2);
    expect(edit.stderr).toBe('Unknown command edit. See `lintel --help`.\nDid you mean update?\n');
    const userz = await cli(['userz', 'list']);
    expect(userz.code).toBe(2);
    expect(userz.stderr).toMatch(/^Unknown command userz\. .*\nDid you mean .*\busers\b.*\?\n$/);
  });

  it('a login already taken is a refused value: exit 2, as the README says', async () => {
    const r = await cli([
      'users',
      'create',
      '--login',
      ts.adminLogin,
      '--name',
      'Twin',
      '--role',
      String(adminRole),
      '--domains',
      String(rootGroup),
      '--send-registration-link',
      'false',
    ]);
    expect(r.stderr).not.toBe('');
    expect(r.code).toBe(2);
  });

  it('--dry-run says it is checking, not committing', async () => {
    const dir = path.dirname(adminDir);
    const file = path.join(dir, 'dry.csv');
    const tag = uid();
    fs.writeFileSync(file, `login,name,role,domains\ndry.${tag},Dry ${tag},${adminRole},${rootGroup}\n`);
    const r = await cli(['users', 'import', file, '--dry-run']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('checking 1 rows');
    expect(r.stderr).not.toContain('committing');
  });

  it('-F sends lists: key=[...] as JSON, key[] alone as an empty list', async () => {
    const name = `Arrays ${uid()}`;
    const r = await lintel(
      ['api', 'PUT', '/roles', '-F', `name=${name}`, '-F', 'permissions=["users.view","roles.view"]'],
      { configDir: adminDir },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).data.permissions).toEqual(['users.view', 'roles.view']);
    const empty = await lintel(['api', 'PUT', '/roles', '-F', `name=${name} 2`, '-F', 'permissions[]'], {
      configDir: adminDir,
    });
    expect(empty.code, empty.stderr).toBe(0);
    expect(JSON.parse(empty.stdout).data.permissions).toEqual([]);
  });

  it('a JSON error has the message in words, the code in error_code', async () => {
    const r = await cli(['users', 'get', '999999', '--json']);
    expect(r.code).toBe(5);
    expect(JSON.parse(r.stderr)).toEqual({
      message: 'Item not found',
      error_code: 'item_not_found',
      data: null,
    });
    const usage = await cli(['users', 'edit', '1', '--json']);
    expect(usage.code).toBe(2);
    expect(JSON.parse(usage.stderr)).toEqual({
      message: 'Unknown command edit. See `lintel --help`.\nDid you mean update?',
      error_code: 'unknown_command',
      data: { name: 'edit', suggestion: 'update' },
    });
  });
});

describe('undo where it is cheap: deleting asks', () => {
  it('a script must say --yes: without it exit 2 naming what it would delete, and nothing is deleted', async () => {
    const [id] = await makeUsers(1, `del.${uid()}.`);
    const r = await cli(['users', 'delete', String(id)]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`^This deletes user ${id} \\(del\\.[^)]+\\): add --yes to confirm`));
    expect((await getCommand('user.get').run({ api }, { id: id! })).id).toBe(id);
    const yes = await cli(['users', 'delete', String(id), '--yes', '--json']);
    expect(out(yes)).toEqual({ ok: true });
  });
});
