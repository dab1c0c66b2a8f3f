/**
 * `lintel` alone: the interactive palette, driven in a pseudo-terminal (util-linux `script`) against a real
 * server: typing filters, arrows and j/k move, Enter runs the command (asking its required arguments first,
 * enums as a choice list), Esc and Ctrl+C quit, and the role's gates hide what it may not run.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { admin, userWith } from '../support/fixtures';
import { startTestServer, type TestServer } from '../support/server';
import { terminal, type Terminal } from './pty';
import { buildCli, freshConfigDir, lintel, removeConfigDirs } from './support';

let ts: TestServer;
let api: ApiClient;
let adminDir: string;
let viewerDir: string;
let viewer: { id: number; login: string };
let adminId: number;
let root: number;
const open: Terminal[] = [];

async function signIn(configDir: string, login: string, password: string, extra: string[] = []) {
  const r = await lintel(['login', '--server', ts.url, '--login', login, '--password-stdin', ...extra], {
    configDir,
    input: `${password}\n`,
  });
  expect(r.code, r.stderr).toBe(0);
}

/** The palette at a terminal, once it takes keys (its key line is drawn then). */
async function palette(configDir: string, env?: Record<string, string>): Promise<Terminal> {
  const term = terminal([], { configDir, env });
  open.push(term);
  await term.waitFor(/Enter (choose|выбрать)/);
  return term;
}

beforeAll(async () => {
  const built = buildCli();
  expect(built.status, built.stderr).toBe(0);
  ts = await startTestServer();
  api = await admin(ts);
  adminDir = freshConfigDir();
  await signIn(adminDir, ts.adminLogin, ts.adminPassword);
  const me = await api.get<{ id: number; domains: Array<{ id: number }> }>('/profile');
  root = me.domains[0]!.id;
  adminId = me.id;
  const made = await userWith(ts, api, { permissions: ['users.view'], domains: [root], name: 'Viewer' });
  viewer = made;
  viewerDir = freshConfigDir();
  await signIn(viewerDir, made.login, made.password);
});

afterEach(() => {
  for (const term of open.splice(0)) term.kill();
});

afterAll(async () => {
  await ts?.close();
  removeConfigDirs();
});

describe('lintel alone at a terminal: the palette', () => {
  it('filters as you type, and Enter runs the command as if typed', async () => {
    const term = await palette(adminDir);
    const first = term.output();
    expect(first).toContain('admin (Administrator)');
    expect(first).toContain('users list');

    term.type('who');
    const filtered = await term.waitFor(/of \d+ ·/);
    expect(filtered).toContain('› who');
    expect(filtered).toMatch(/❯ Show who you are signed in as +whoami/);
    expect(filtered).not.toContain('roles list');

    term.type('\r');
    await term.waitFor('Server');
    expect(await term.exited).toBe(0);
    const out = term.output();
    expect(out).toContain('$ lintel whoami');
    expect(out).toMatch(/Login +admin/);
    expect(out).toContain(ts.url);
  });

  it('moves with the arrows and with j/k, and runs the one selected', async () => {
    const term = await palette(adminDir);
    term.type('list');
    expect(await term.waitFor(/of \d+ ·/)).toMatch(/❯ List users/);
    term.type('\x1b[B');
    expect(await term.waitFor(/❯ List roles/)).toContain('  List users');
    term.type('j');
    expect(await term.waitFor(/❯ List groups/)).toContain('  List roles');
    term.type('k');
    await term.waitFor(/❯ List roles/);
    term.type('k');
    await term.waitFor(/❯ List users/);
    term.type('\r');
    // a list's search, filter, sort and paging are offered, Run first
    await term.waitFor(/❯ Run[^]*All pages +--all/);
    term.type('\r');
    await term.waitFor('Administrator');
    expect(await term.exited).toBe(0);
    const out = term.output();
    expect(out).toContain('$ lintel users list');
    expect(out).toMatch(/LOGIN +NAME/);
    expect(out).toMatch(/admin +Administrator/);
  });

  it('offers a list its search, sort and paging, with a switch (--all) added as it is picked', async () => {
    // made B then A: the id order is not the name order
    const b = await userWith(ts, api, { permissions: ['users.view'], domains: [root], name: 'Listed B' });
    const a = await userWith(ts, api, { permissions: ['users.view'], domains: [root], name: 'Listed A' });
    const term = await palette(adminDir);
    term.type('list users');
    await term.waitFor(/❯ List users +users list/);
    term.type('\r');
    const options = await term.waitFor(/Page number, from 1 +--page/);
    expect(options).toMatch(/❯ Run[^]*Search +--search[^]*Filter +--where[^]*Sort by a field +--sort/);

    term.type('search');
    await term.waitFor(/❯ Search +--search/);
    term.type('\r');
    await term.waitFor('Search (optional)');
    term.type('Listed');
    await term.waitFor('lintel users list --search Listed');
    term.type('\r');
    expect(await term.waitFor(/❯ Run/)).toContain('Search: Listed');

    // the sort is a choice of the sortable fields
    term.type('sort');
    await term.waitFor(/❯ Sort by a field +--sort/);
    term.type('\r');
    await term.waitFor(/❯ id\b/);
    term.type('j');
    await term.waitFor(/❯ login\b/);
    term.type('j');
    await term.waitFor('lintel users list --search Listed --sort name');
    term.type('\r');
    expect(await term.waitFor(/❯ Run/)).toContain('Sort by a field: name');

    term.type('all pages');
    await term.waitFor(/❯ All pages +--all/);
    term.type('\r');
    await term.waitFor('lintel users list --search Listed --sort name --all');
    expect(term.output()).toContain('All pages: yes');
    term.type('\r');
    expect(await term.exited).toBe(0);
    const out = term.output();
    expect(out).toContain('$ lintel users list --search Listed --sort name --all');
    const listed = out.slice(out.lastIndexOf('$ lintel users list'));
    expect(listed.indexOf(a.login)).toBeGreaterThan(0);
    expect(listed.indexOf(a.login)).toBeLessThan(listed.indexOf(b.login));
    expect(listed).not.toMatch(/admin +Administrator/);
  });

  it('asks for the required arguments one by one, then runs the command with them', async () => {
    const term = await palette(adminDir);
    term.type('create marker');
    await term.waitFor(/❯ Create marker +markers create/);
    term.type('\r');
    const asking = await term.waitFor('Enter next');
    expect(asking).toContain('Name (1 of 2)');
    term.type('\r');
    // nothing typed: it stays, and says so
    expect(await term.waitFor('A value is required.')).toContain('Name (1 of 2)');
    term.type('Lobby desk');
    expect(await term.waitFor("lintel markers create --name 'Lobby desk'")).toContain('› Lobby desk');
    term.type('\r');
    await term.waitFor('Enter run');
    term.type('#336699');
    await term.waitFor("--color '#336699'");
    term.type('\r');
    expect(await term.exited).toBe(0);
    expect(term.output()).toContain("$ lintel markers create --name 'Lobby desk' --color '#336699'");
    const made = await getCommand('marker.list').run({ api }, { search: 'Lobby desk' });
    expect(made.data.map((m) => [m.name, m.color])).toEqual([['Lobby desk', '#336699']]);
  });

  it("lists another family's rows by name where a command takes an id, and runs it with the id", async () => {
    const term = await palette(adminDir);
    term.type('show user');
    await term.waitFor(/❯ Show user +users get/);
    term.type('\r');
    // every user the role may see, by name with the login and the id (Administrator first, by name)
    const listed = await term.waitFor(new RegExp(`Viewer +${viewer.login} +#${viewer.id}`));
    expect(listed).toContain('ID (1 of 1; type to search)');
    expect(listed).toMatch(/❯ +Administrator +admin +#\d+/);
    term.type('view');
    // filtered: Viewer comes first (Administrator sorts before it when all are listed)
    await term.waitFor(new RegExp(`❯ +Viewer +${viewer.login} +#${viewer.id}`));
    await term.waitFor(`lintel users get ${viewer.id}`);
    term.type('\r');
    expect(await term.exited).toBe(0);
    const out = term.output();
    expect(out).toContain(`$ lintel users get ${viewer.id}`);
    expect(out).toMatch(new RegExp(`Login +${viewer.login}`));
  });

  it('picks several rows with Tab where a command takes a list of ids', async () => {
    const marker = await getCommand('marker.create').run({ api }, { name: 'Night shift', color: '#223344' });
    const term = await palette(adminDir);
    term.type('apply marker');
    await term.waitFor(/❯ .+markers apply/);
    term.type('\r');
    await term.waitFor(/Lobby desk|Night shift/);
    // Enter before the search has answered (it waits 150 ms for more keys): the row found is taken, not
    // the one highlighted before (Lobby desk sorts first)
    term.type('night');
    await new Promise((r) => setTimeout(r, 30));
    term.type('\r');
    expect(await term.waitFor('Tab picks several')).toContain('ID: Night shift');
    term.type('view');
    await term.waitFor(new RegExp(`❯ +Viewer +${viewer.login}`));
    term.type('\t');
    await term.waitFor(`Picked: Viewer (${viewer.login})`);
    // Ctrl+U clears the search: every user again, the picked one marked
    term.type('\x15');
    await term.waitFor(new RegExp(`❯ +Administrator +admin[^]* ✓ Viewer +${viewer.login}`));
    term.type('\t');
    await term.waitFor(`Picked: Viewer (${viewer.login}), Administrator (admin)`);
    await term.waitFor(`--users ${viewer.id},${adminId}`);
    term.type('\r');
    // then the optional arguments, Run first
    expect(await term.waitFor(/❯ Run/)).toMatch(/Users \(IDs\): Viewer \(\w+\), Administrator \(admin\)/);
    term.type('\r');
    expect(await term.exited).toBe(0);
    expect(term.output()).toContain(
      `$ lintel markers apply ${marker.data.id} --users ${viewer.id},${adminId}`,
    );
    for (const id of [viewer.id, adminId]) {
      const user = await getCommand('user.get').run({ api }, { id });
      expect(user.markers.map((m) => m.name)).toContain('Night shift');
    }
  });

  it('offers the optional arguments after the required ones: filter, add, drop, then Run', async () => {
    const target = await userWith(ts, api, { permissions: ['users.view'], domains: [root], name: 'Pat Old' });
    const term = await palette(adminDir);
    term.type('edit user');
    await term.waitFor(/❯ Edit user +users update/);
    term.type('\r');
    await term.waitFor('type to search');
    term.type('pat old');
    await new Promise((r) => setTimeout(r, 30));
    term.type('\r');
    // every field is optional for an update: the list of them, Run first
    const options = await term.waitFor(/E-mail +--email/);
    expect(options).toContain(`ID: Pat Old (${target.login})`);
    expect(options).toMatch(/Optional arguments[^]*❯ Run[^]*E-mail +--email/);

    // a filter that matches nothing: Enter does not run the command
    term.type('zzz');
    await term.waitFor('› zzz');
    term.type('\r');
    await term.waitFor('Nothing matches.');
    term.type('\x15');
    await term.waitFor(/❯ Run/);

    term.type('name');
    await term.waitFor(/❯ Name +--name/);
    term.type('\r');
    expect(await term.waitFor('(optional)')).toContain('Name (optional)');
    term.type('Pat New');
    await term.waitFor(`lintel users update ${target.id} --name 'Pat New'`);
    term.type('\r');
    expect(await term.waitFor(/❯ Run/)).toContain('Name: Pat New');

    // one more, then Backspace drops it again
    term.type('mail');
    await term.waitFor(/❯ E-mail +--email/);
    term.type('\r');
    await term.waitFor('E-mail (optional)');
    term.type('pat@example.com');
    await term.waitFor('--email pat@example.com');
    term.type('\r');
    expect(await term.waitFor(/❯ Run/)).toContain('E-mail: pat@example.com');
    term.type('\x7f');
    // the e-mail is back in the list, and the command line ends without it (a whole line: the screen may
    // come in pieces)
    await term.waitFor(
      new RegExp(`E-mail +--email[^]*lintel users update ${target.id} --name 'Pat New'[ \\t]*\\r?\\n`),
    );

    term.type('\r');
    expect(await term.exited).toBe(0);
    expect(term.output()).toContain(`$ lintel users update ${target.id} --name 'Pat New'`);
    const after = await getCommand('user.get').run({ api }, { id: target.id });
    expect([after.name, after.email]).toEqual(['Pat New', null]);
  });

  it('where the role may not list the rows, says why and takes ids typed', async () => {
    const marker = await getCommand('marker.create').run({ api }, { name: 'Key holder', color: '#445566' });
    const dir = freshConfigDir();
    const applier = await userWith(ts, api, {
      permissions: ['markers.view', 'markers.view_all', 'markers.apply_to_user'],
      domains: [root],
      name: 'Applier',
    });
    await signIn(dir, applier.login, applier.password);
    const term = await palette(dir);
    term.type('apply marker');
    await term.waitFor(/❯ .+markers apply/);
    term.type('\r');
    await term.waitFor(new RegExp(`Key holder +#${marker.data.id}`));
    term.type('key holder');
    await term.waitFor(new RegExp(`❯ +Key holder +#${marker.data.id}`));
    term.type('\r');
    const refused = await term.waitFor('Type the id instead.');
    expect(refused).toContain('Users (IDs) (2 of 2');
    const denials = async () =>
      (
        await getCommand('audit_event.list').run(
          { api },
          {
            filters: [
              { field: 'user', rule: 'equals', value: applier.id },
              { field: 'action', rule: 'equals', value: 'permission_denied' },
            ],
          },
        )
      ).meta.total;
    const before = await denials();
    expect(before).toBeGreaterThan(0);
    term.type(`${applier.id}`);
    await term.waitFor(`lintel markers apply ${marker.data.id} --users ${applier.id}`);
    // the list was refused once: typing the ids does not ask again at every key
    expect(await denials()).toBe(before);
    // Esc: back to the marker, listed afresh
    term.type('\x1b');
    await term.waitFor(/ID \(1 of 2; type to search\)[^]*#\d+/);
    term.type('\x03');
    expect(await term.exited).toBe(130);
  });

  it('offers an enum as a choice list (context use), and Esc goes back a step', async () => {
    const dir = freshConfigDir();
    await signIn(dir, ts.adminLogin, ts.adminPassword);
    await signIn(dir, ts.adminLogin, ts.adminPassword, ['--context', 'zz-second']);
    const host = new URL(ts.url).host;
    const term = await palette(dir);
    term.type('saved context current');
    await term.waitFor(/❯ Make a saved context the current one +context use/);
    term.type('\r');
    const choosing = await term.waitFor('Enter run');
    expect(choosing).toMatch(new RegExp(`❯ default@${host.replace(/\./g, '\\.')}`));
    expect(choosing).toContain('  zz-second');

    term.type('\x1b');
    await term.waitFor(/❯ Make a saved context the current one/);
    term.type('\r');
    await term.waitFor('Enter run');
    term.type('j');
    expect(await term.waitFor('lintel context use zz-second')).toContain('❯ zz-second');
    term.type('k');
    await term.waitFor(`❯ default@${host}`);
    term.type('\x1b[B');
    await term.waitFor('❯ zz-second');
    term.type('\r');
    await term.waitFor('Current context: zz-second');
    expect(await term.exited).toBe(0);
    expect(term.output()).toContain('$ lintel context use zz-second');
  });

  it('quits with Esc (exit 0) or Ctrl+C (exit 130) without running anything', async () => {
    const esc = await palette(adminDir);
    esc.type('\x1b');
    expect(await esc.exited).toBe(0);
    expect(esc.output()).not.toContain('$ lintel');

    const ctrlC = await palette(adminDir);
    ctrlC.type('users');
    await ctrlC.waitFor('› users');
    ctrlC.type('\x03');
    expect(await ctrlC.exited).toBe(130);
    expect(ctrlC.output()).not.toContain('$ lintel');
  });

  it('hides what the role may not run, as the web palette does', async () => {
    const term = await palette(viewerDir);
    const all = term.output();
    expect(all).toContain('users list');
    expect(all).not.toContain('users create');
    expect(all).not.toContain('roles list');
    term.type('create user');
    const found = await term.waitFor(/of \d+ ·/);
    expect(found).not.toContain('users create');
    term.type('\x1b');
    expect(await term.exited).toBe(0);
  });

  it('speaks Russian with LINTEL_LANG=ru, and finds commands by either language', async () => {
    const term = await palette(adminDir, { LINTEL_LANG: 'ru' });
    term.type('list users');
    const found = await term.waitFor(/из \d+ ·/);
    expect(found).toMatch(/❯ Список пользователей +users list/);
    term.type('\x1b');
    expect(await term.exited).toBe(0);
  });

  it('at a terminal without a session: exit 3 with the usual message', async () => {
    const term = terminal([], { configDir: freshConfigDir() });
    open.push(term);
    expect(await term.exited).toBe(3);
    expect(term.output()).toContain('You are not signed in. Run `lintel login`.');
  });

  it('without a terminal, prints the help as before (on stderr: no command is bad usage)', async () => {
    const r = await lintel([], { configDir: adminDir });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('Usage: lintel');
    expect(r.stderr).toContain('Exit codes:');
    expect(r.stderr).toContain('Run `lintel` alone at a terminal');
  });
});
