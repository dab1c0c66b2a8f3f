import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand, groupResource, roleResource, userResource } from '@lintel/commands';
import { parseWhere, Profile, type ApiClient } from '@lintel/core';
import { admin, uid } from '../support/fixtures';
import { startTestServer, type TestServer } from '../support/server';
import { run } from '../../apps/cli/src/program';
import type { CliContext } from '../../apps/cli/src/context';
import { buildCli, freshConfigDir, lintel, removeConfigDirs, type Run } from './support';
import { terminal } from './pty';

let ts: TestServer;
let api: ApiClient;
/** signed in as the administrator */
let adminDir: string;
let rootGroup: number;
let adminRole: number;

const cli = (args: string[], configDir = adminDir, input?: string) => lintel(args, { configDir, input });

/** The JSON a command printed, after checking it exited 0 with nothing on stderr. */
function out(r: Run): unknown {
  expect(r.stderr, r.stderr).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout);
}

async function signIn(configDir: string, login: string, password: string): Promise<void> {
  const r = await lintel(['login', '--server', ts.url, '--login', login, '--password-stdin'], {
    configDir,
    input: `${password}\n`,
  });
  expect(r.code, r.stderr).toBe(0);
}

beforeAll(async () => {
  const built = buildCli();
  expect(built.status, built.stderr).toBe(0);
  ts = await startTestServer();
  api = await admin(ts);
  adminDir = freshConfigDir();
  await signIn(adminDir, ts.adminLogin, ts.adminPassword);
  const profile = Profile.parse(out(await cli(['whoami', '--json'])));
  rootGroup = profile.domains[0]!.id;
  adminRole = profile.role.id;
});

afterAll(async () => {
  await ts?.close();
  removeConfigDirs();
});

describe('lintel <family> <verb>: users', () => {
  const tag = uid();
  const login = `ann.${tag}`;
  let id: number;

  it('creates a user with groups, an existing role and a password, without a registration link', async () => {
    const r = await cli([
      'users',
      'create',
      '--login',
      login,
      '--name',
      `Ann ${tag}`,
      '--role',
      String(adminRole),
      '--domains',
      String(rootGroup),
      '--password',
      `Pass-${tag}-123`,
      '--no-send-registration-link',
      '--profile.phone',
      '+4912345678',
      '--json',
    ]);
    const created = userResource.commands.create.result.parse(out(r));
    id = created.data.id;
    expect(created.data).toMatchObject({
      login,
      name: `Ann ${tag}`,
      role: { id: adminRole },
      domains: [{ id: rootGroup }],
      profile: { phone: '+4912345678' },
      is_activated: true,
    });
  });

  it('lists with --where exactly what the API answers for the same filter', async () => {
    const where = `name contains ann`;
    const r = await cli(['users', 'list', '--where', where, '--json']);
    const listed = userResource.commands.list.result.parse(out(r));
    const reply = await api.get('/users', {
      query: { filters: JSON.stringify(parseWhere(where).filters) },
      schema: userResource.commands.list.result,
    });
    expect(listed).toEqual(reply);
    expect(listed.data.map((u) => u.id)).toContain(id);
    expect(listed.data.every((u) => u.name.toLowerCase().includes('ann'))).toBe(true);
  });

  it('prints a header and tab-separated rows of the default fields to a pipe', async () => {
    const r = await cli(['users', 'list', '--where', `id = ${id}`]);
    expect(r.code, r.stderr).toBe(0);
    const [header, row, ...rest] = r.stdout.trimEnd().split('\n');
    const defaults = Object.entries(userResource.fields)
      .filter(([, f]) => f.default)
      .map(([k]) => k);
    expect(header!.split('\t')).toEqual(defaults);
    const cells = row!.split('\t');
    expect(cells.slice(0, 3)).toEqual([String(id), login, `Ann ${tag}`]);
    // references print as names
    expect(cells[defaults.indexOf('role')]).toBe('Administrator');
    expect(rest).toEqual([]);

    const chosen = await cli(['users', 'list', '--where', `id = ${id}`, '--fields', 'login,id']);
    expect(chosen.stdout).toBe(`login\tid\n${login}\t${id}\n`);
  });

  it('selects fields in JSON too', async () => {
    const r = await cli(['users', 'list', '--where', `id = ${id}`, '--fields', 'id,login', '--json']);
    expect(out(r)).toEqual({
      data: [{ id, login }],
      meta: { total: 1, total_is_estimate: false, page: 1, limit: 50 },
    });
    const one = await cli(['users', 'get', String(id), '--fields', 'name', '--json']);
    expect(out(one)).toEqual({ name: `Ann ${tag}` });
  });

  it('gets, updates and deletes by id', async () => {
    const got = userResource.commands.get.result.parse(
      out(await cli(['users', 'get', String(id), '--json'])),
    );
    expect(got).toEqual(await getCommand('user.get').run({ api }, { id }));

    const updated = userResource.commands.update.result.parse(
      out(await cli(['users', 'update', String(id), '--name', `Anna ${tag}`, '--json'])),
    );
    expect(updated.data.name).toBe(`Anna ${tag}`);
    expect(updated.data.login).toBe(login);

    const text = await cli(['users', 'get', String(id)]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`name\tAnna ${tag}\n`);
    expect(text.stdout).toContain('profile.phone\t+4912345678\n');

    const deleted = await cli(['users', 'delete', String(id), '--yes', '--json']);
    expect(userResource.commands.delete.result.parse(out(deleted))).toEqual({ ok: true });
    const gone = await cli(['users', 'get', String(id)]);
    expect(gone.code).toBe(5);
    expect(gone.stderr.trim()).toBe('Item not found');
  });

  it('takes a new password from stdin or asks it at a terminal without echo, never only as a flag (issue 25 item 10)', async () => {
    const who = `pw.${uid()}`;
    const { data } = await getCommand('user.create').run(
      { api },
      {
        login: who,
        name: 'Password user',
        role: adminRole,
        domains: [rootGroup],
        send_registration_link: false,
      },
    );
    const canSignIn = async (password: string) => {
      const dir = freshConfigDir();
      const r = await lintel(['login', '--server', ts.url, '--login', who, '--password-stdin'], {
        configDir: dir,
        input: `${password}\n`,
      });
      return r.code === 0;
    };
    // from a script: stdin
    const piped = await cli(
      ['users', 'password', String(data.id), '--new-password-stdin'],
      adminDir,
      'Piped-123456\n',
    );
    expect(piped.code, piped.stderr).toBe(0);
    expect(await canSignIn('Piped-123456')).toBe(true);
    // neither flag nor stdin nor a terminal: missing, exit 2, nothing sent
    const missing = await cli(['users', 'password', String(data.id)]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('new_password: Field required');
    // at a terminal it is asked, and what is typed is not echoed
    const term = terminal(['users', 'password', String(data.id)], { configDir: adminDir });
    try {
      await term.waitFor('New password:');
      term.type('Typed-1234567\r');
      expect(await term.exited).toBe(0);
      expect(term.output()).not.toContain('Typed-1234567');
    } finally {
      term.kill();
    }
    expect(await canSignIn('Typed-1234567')).toBe(true);
  });

  it('exits 5 for an id that does not exist, with the reply body under --json', async () => {
    const r = await cli(['users', 'get', '999999', '--json']);
    expect(r.code).toBe(5);
    expect(JSON.parse(r.stderr)).toMatchObject({ error_code: 'item_not_found' });
  });

  it('follows every page with --all', async () => {
    const all = userResource.commands.list.result.parse(
      out(await cli(['users', 'list', '--all', '--limit', '1', '--json'])),
    );
    const reply = await getCommand('user.list').run({ api }, { limit: 1000 });
    expect(all.data).toEqual(reply.data);
    expect(all.meta.total).toBe(reply.meta.total);
  });
});

describe('a person at a terminal', () => {
  /** `run` in process, with a stdout that says it is a terminal of `columns` columns. */
  async function atTerminal(
    args: string[],
    columns: number,
    env: Record<string, string> = { NO_COLOR: '1' },
  ) {
    let stdout = '';
    let stderr = '';
    const stream = (write: (s: string) => void) =>
      ({ isTTY: true, columns, write: (s: string) => (write(s), true) }) as unknown as NodeJS.WriteStream;
    const ctx: CliContext = {
      env: { LINTEL_CONFIG_DIR: adminDir, CI: 'true', ...env },
      stdin: process.stdin,
      stdout: stream((s) => (stdout += s)),
      stderr: stream((s) => (stderr += s)),
    };
    const code = await run(args, ctx);
    return { code, stdout, stderr };
  }

  it('gets an aligned table that fits the terminal, and a hint when there are more pages', async () => {
    await getCommand('user.create').run(
      { api },
      {
        login: `tty.${uid()}`,
        name: 'Terminal user',
        role: adminRole,
        domains: [rootGroup],
        send_registration_link: false,
      },
    );
    const r = await atTerminal(['users', 'list', '--limit', '1', '--fields', 'id,login,name,role'], 30);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID +LOGIN +NAME +ROLE$/);
    expect(lines[1]).toMatch(/^1 +admin +/);
    expect(lines.every((l) => [...l].length <= 30)).toBe(true);
    expect(r.stderr).toMatch(/Rows 1-1 of \d+\. Next: --page 2/);

    // in colour, unless NO_COLOR says otherwise: the header bold
    const coloured = await atTerminal(['users', 'list', '--limit', '1', '--fields', 'id,login'], 30, {});
    expect(coloured.stdout.split('\n')[0]).toContain('\u001b[1mID\u001b[22m');

    const record = await atTerminal(['users', 'get', '1'], 80);
    expect(record.stdout).toMatch(/^ID +1$/m);
    expect(record.stdout).toMatch(/^Activated +yes$/m);
  });
});

describe('lintel <family> <verb>: groups', () => {
  const name = `Block ${uid()}`;
  let id: number;

  it('creates a group under the root group, lists, updates and deletes it', async () => {
    const created = groupResource.commands.create.result.parse(
      out(
        await cli([
          'groups',
          'create',
          '--name',
          name,
          '--parent-id',
          String(rootGroup),
          '--logic-address',
          '7',
          '--json',
        ]),
      ),
    );
    id = created.data.id;
    expect(created.data).toMatchObject({ name, parent_id: rootGroup, logic_address: '7' });

    const listed = groupResource.commands.list.result.parse(
      out(await cli(['groups', 'list', '--where', `name = "${name}"`, '--json'])),
    );
    expect(listed.data.map((g) => g.id)).toEqual([id]);

    const rows = await cli(['groups', 'list', '--where', `id = ${id}`, '--fields', 'id,name,parent_id']);
    expect(rows.stdout).toBe(`id\tname\tparent_id\n${id}\t${name}\t${rootGroup}\n`);

    const updated = groupResource.commands.update.result.parse(
      out(
        await cli([
          'groups',
          'update',
          String(id),
          '--name',
          `${name} B`,
          '--description',
          'east wing',
          '--json',
        ]),
      ),
    );
    expect(updated.data).toMatchObject({ name: `${name} B`, description: 'east wing', parent_id: rootGroup });

    expect(out(await cli(['groups', 'delete', String(id), '--yes', '--json']))).toEqual({ ok: true });
    expect((await cli(['groups', 'get', String(id)])).code).toBe(5);
  });

  it("sets a group's licence settings and maximums with flags or --data (issue 15 item 4)", async () => {
    const g = getCommand('group.create').run({ api }, { name: `Licensed ${uid()}`, parent_id: rootGroup });
    const id = String((await g).data.id);
    for (const n of [1, 2])
      await getCommand('user.create').run(
        { api },
        {
          login: `lic${n}.${uid()}`,
          name: 'Member',
          role: adminRole,
          domains: [Number(id)],
          send_registration_link: false,
        },
      );
    // under the two users it holds: refused with the catalogue's message, nothing changed
    const refused = await cli(['groups', 'update', id, '--license-limits.users', '1']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      "Used counts are greater than the group's maximum of users: used 2, max 1",
    );
    const json = await cli(['groups', 'update', id, '--license-limits.users', '1', '--json']);
    expect(JSON.parse(json.stderr)).toMatchObject({
      error_code: 'license_used_exceeds_limit',
      data: { feature: 'users', used: 2, max: 1 },
    });
    // --data with the shapes of part 2 §5 (a numeric string, notifications off), a flag over it
    const data = {
      license_limits: { users: '5', mobile_apps: '' },
      license_settings: {
        is_enabled: true,
        notifications: { period: 'never', notify_before: 7 },
        licenses: [
          {
            is_active: true,
            features: { sip: { is_enabled: true } },
            restrict_period: { is_active: true, from: '2025-01-01', to: null },
          },
        ],
      },
    };
    const saved = groupResource.commands.update.result.parse(
      out(
        await cli([
          'groups',
          'update',
          id,
          '--data',
          JSON.stringify(data),
          '--license-limits.users',
          '2',
          '--json',
        ]),
      ),
    );
    expect(saved.data.license_limits).toEqual({
      users: 2,
      mobile_apps: null,
      virtual_numbers: null,
      ukey2_keys: null,
    });
    expect(saved.data.license_settings.notifications).toEqual({ period: 'never', notify_before: 0 });
    expect(saved.data.license_settings.licenses[0]!.features.sip.is_enabled).toBe(true);
    expect(saved.data.license_settings.licenses[0]!.restrict_period).toEqual({
      is_active: true,
      from: '2025-01-01',
      to: null,
    });
  });

  it('prints the tree, and runs the generic extras', async () => {
    const tree = getCommand('group.tree').result.parse(out(await cli(['groups', 'tree', '--json'])));
    expect(tree.data[0]!.id).toBe(rootGroup);
    const preview = getCommand('group.generate').result.parse(
      out(
        await cli([
          'groups',
          'generate',
          '--id',
          String(rootGroup),
          '--count',
          '3',
          '--prefix',
          'Flat-',
          '--numeration.from',
          '10',
          '--json',
        ]),
      ),
    );
    expect(preview.items.map((i) => i.name)).toEqual(['Flat-10', 'Flat-11', 'Flat-12']);
  });
});

describe('lintel <family> <verb>: roles', () => {
  it('creates with a list of permissions, updates, and deletes', async () => {
    const name = `Viewers ${uid()}`;
    const created = roleResource.commands.create.result.parse(
      out(
        await cli(['roles', 'create', '--name', name, '--permissions', 'users.view,users.create', '--json']),
      ),
    );
    expect([...created.data.permissions].sort()).toEqual(['users.create', 'users.view']);
    const id = created.data.id;

    const updated = roleResource.commands.update.result.parse(
      out(
        await cli([
          'roles',
          'update',
          String(id),
          '--permissions',
          'users.view',
          '--permissions',
          'markers.view',
          '--json',
        ]),
      ),
    );
    expect([...updated.data.permissions].sort()).toEqual(['markers.view', 'users.view']);

    expect(out(await cli(['roles', 'delete', String(id), '--yes', '--json']))).toEqual({ ok: true });
    expect((await cli(['roles', 'get', String(id)])).code).toBe(5);
  });

  it('keeps a role in use unless --gently false', async () => {
    const role = (
      await getCommand('role.create').run({ api }, { name: `Held ${uid()}`, permissions: ['users.view'] })
    ).data;
    await getCommand('user.create').run(
      { api },
      {
        login: `held.${uid()}`,
        name: 'Holder',
        role: role.id,
        domains: [rootGroup],
        send_registration_link: false,
      },
    );

    const kept = await cli(['roles', 'delete', String(role.id), '--yes', '--json']);
    expect(kept.code).toBe(1);
    expect(JSON.parse(kept.stderr)).toMatchObject({
      error_code: 'cant_perform_action',
      data: { reason: 'has_dependencies', dependencies: { users: 1 } },
    });
    expect((await cli(['roles', 'get', String(role.id)])).code).toBe(0);

    expect(
      out(await cli(['roles', 'delete', String(role.id), '--gently', 'false', '--yes', '--json'])),
    ).toEqual({
      ok: true,
    });
    expect((await cli(['roles', 'get', String(role.id)])).code).toBe(5);
  });

  it('delete-all reports what it did not delete, and why', async () => {
    const spare = (await getCommand('role.create').run({ api }, { name: `Spare ${uid()}`, permissions: [] }))
      .data;
    const r = await cli(['roles', 'delete-all', '--items', `${spare.id},${adminRole}`, '--yes', '--json']);
    const report = roleResource.commands.delete_all.result.parse(out(r));
    expect(report.deleted).toEqual([spare.id]);
    expect(report.not_deleted).toEqual([{ id: adminRole, reason: 'system_role' }]);

    const text = await cli(['roles', 'delete-all', '--items', String(adminRole), '--yes']);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('not_deleted\t');
    expect(text.stdout).toContain('system_role');
  });
});

describe('exit codes', () => {
  it('2 for a bad flag value, a missing required field, a bad --where, or an unknown field', async () => {
    const [badNumber, badChoice, missing, missingText, where, unknownField, ...others] = await Promise.all([
      cli(['users', 'create', '--login', 'x1', '--name', 'X', '--role', 'abc', '--domains', '1']),
      cli(['users', 'update', '1', '--profile.time-format', 'soon', '--json']),
      cli(['users', 'create', '--name', 'X', '--json']),
      cli(['users', 'create', '--name', 'X']),
      cli(['users', 'list', '--where', 'name contains']),
      cli(['users', 'list', '--where', 'shoe_size = 42', '--json']),
      cli(['users', 'list', '--fields', 'id,shoe_size']),
      cli(['users', 'list', '--limit', 'many']),
      cli(['users', 'list', '--sort', 'shoe_size']),
      cli(['roles', 'delete', '1', '--gently', 'maybe']),
      cli(['users', 'list', '--bogus']),
      cli(['users', 'create', '--data', '{not json']),
    ]);
    expect(badNumber!.code).toBe(2);
    // a reference takes a name too: one that names no role is a refused value
    expect(badNumber!.stderr).toContain('role: no role is named “abc”.');

    expect(badChoice!.code).toBe(2);
    expect(JSON.parse(badChoice!.stderr)).toMatchObject({
      error_code: 'check_fields_data',
      data: { fields: [{ field: 'profile.time_format', rule: 'one_of' }] },
    });

    expect(missing!.code).toBe(2);
    const fields = JSON.parse(missing!.stderr).data.fields.map(
      (f: { field: string; rule: string }) => `${f.field}:${f.rule}`,
    );
    expect(fields).toEqual(expect.arrayContaining(['login:required', 'role:required', 'domains:required']));
    expect(missingText!.stderr).toContain('login: Field required');

    expect(where!.code).toBe(2);
    expect(where!.stderr).toContain('Cannot read the filter');

    expect(unknownField!.code).toBe(2);
    expect(JSON.parse(unknownField!.stderr).data.fields[0]).toMatchObject({
      field: 'filters.0.field',
      rule: 'one_of',
    });

    for (const r of others) expect(r.code, r.stderr).toBe(2);
  });

  it('3 when not signed in', async () => {
    const r = await cli(['users', 'list'], freshConfigDir());
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('lintel login');
  });

  it('4 without sending anything for a command the role lacks; help marks it', async () => {
    const tag = uid();
    const role = (
      await getCommand('role.create').run({ api }, { name: `Lookers ${tag}`, permissions: ['users.view'] })
    ).data;
    const password = `Look-${tag}-123`;
    await getCommand('user.create').run(
      { api },
      {
        login: `look.${tag}`,
        name: 'Looker',
        role: role.id,
        domains: [rootGroup],
        password,
        send_registration_link: false,
      },
    );
    const dir = freshConfigDir();
    await signIn(dir, `look.${tag}`, password);

    const before = await getCommand('audit_event.list').run(
      { api },
      { filters: [{ field: 'action', rule: 'equals', value: 'permission_denied' }] },
    );
    const refused = await cli(['roles', 'create'], dir);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain('Method or action is prohibited');
    expect(refused.stderr).toContain('roles.create');
    const json = await cli(['roles', 'create', '--name', 'x', '--permissions', '', '--json'], dir);
    expect(json.code).toBe(4);
    expect(JSON.parse(json.stderr)).toMatchObject({
      error_code: 'method_prohibited',
      data: { command: 'role.create' },
    });
    // the server never saw the attempt (it would have logged permission_denied)
    const after = await getCommand('audit_event.list').run(
      { api },
      { filters: [{ field: 'action', rule: 'equals', value: 'permission_denied' }] },
    );
    expect(after.meta.total).toBe(before.meta.total);

    // what the role has still works
    expect((await cli(['users', 'list'], dir)).code).toBe(0);

    const help = await cli(['roles', '--help'], dir);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(
      /create \[options\] +Create role \[not available: your role lacks the\s+permission\]/,
    );
    const usersHelp = await cli(['users', '--help'], dir);
    expect(usersHelp.stdout).toMatch(/list \[options\] +List users\n/);
    expect(usersHelp.stdout).toMatch(/delete \[options\] <id> +Delete user \[not available/);

    // signed out, help lists everything unmarked
    const anon = await cli(['roles', '--help'], freshConfigDir());
    expect(anon.code).toBe(0);
    expect(anon.stdout).not.toContain('not available');
  });
});

describe('help', () => {
  it('lists the families and their verbs, with flags from the argument schema', async () => {
    const dir = freshConfigDir();
    const top = await cli(['--help'], dir);
    for (const word of ['users', 'roles', 'groups', 'markers', 'domain-types', 'audit-events'])
      expect(top.stdout).toMatch(new RegExp(`\\n  ${word}\\b`));

    const create = await cli(['users', 'create', '--help'], dir);
    expect(create.code).toBe(0);
    expect(create.stdout).toMatch(/--login <text> +Login \(required\)/);
    expect(create.stdout).toMatch(/--domains <n,\.\.\.> +Groups \(required; comma-separated or repeated\)/);
    expect(create.stdout).toMatch(/--no-send-registration-link/);
    expect(create.stdout).toMatch(/--profile\.time-format <choice> +Profile: Time format \(one of: /);

    const list = await cli(['users', 'list', '--help'], dir);
    for (const flag of ['--where', '--search', '--sort', '--page', '--limit', '--all', '--fields', '--json'])
      expect(list.stdout).toContain(flag);
  });

  it('is Russian with LINTEL_LANG=ru', async () => {
    const r = await lintel(['users', 'create', '--help'], {
      configDir: freshConfigDir(),
      env: { LINTEL_LANG: 'ru' },
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Создать пользователя');
    expect(r.stdout).toMatch(/--login <текст> +Логин \(обязательно\)/);
    expect(r.stdout).toContain('Параметры:');
  });
});
