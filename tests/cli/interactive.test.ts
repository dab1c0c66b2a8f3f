/**
 * `lintel` alone: the interactive palette, driven in a pseudo-terminal (util-linux `script`) against a real
 * server: typing filters, arrows and j/k move, Enter runs the command (asking its required arguments first,
 * enums as a choice list), Esc and Ctrl+C quit, and the role's gates hide what it may not run.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '@lintel/core';
import { admin, userWith } from '../support/fixtures';
import { startTestServer, type TestServer } from '../support/server';
import { terminal, type Terminal } from './pty';
import { buildCli, freshConfigDir, lintel, removeConfigDirs } from './support';

let ts: TestServer;
let api: ApiClient;
let adminDir: string;
let viewerDir: string;
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
  const root = (await api.get<{ domains: Array<{ id: number }> }>('/profile')).domains[0]!.id;
  const viewer = await userWith(ts, api, { permissions: ['users.view'], domains: [root], name: 'Viewer' });
  viewerDir = freshConfigDir();
  await signIn(viewerDir, viewer.login, viewer.password);
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
    await term.waitFor('Administrator');
    expect(await term.exited).toBe(0);
    const out = term.output();
    expect(out).toContain('$ lintel users list');
    expect(out).toMatch(/LOGIN +NAME/);
    expect(out).toMatch(/admin +Administrator/);
  });

  it('asks for the required arguments one by one, then runs the command with them', async () => {
    const term = await palette(adminDir);
    term.type('show user');
    await term.waitFor(/❯ Show user +users get/);
    term.type('\r');
    const asking = await term.waitFor('Enter run');
    expect(asking).toContain('ID (1 of 1; number)');
    term.type('\r');
    // nothing typed: it stays, and says so
    expect(await term.waitFor('A value is required.')).toContain('ID (1 of 1');
    term.type('1');
    expect(await term.waitFor('lintel users get 1')).toContain('› 1');
    term.type('\r');
    await term.waitFor('Created');
    expect(await term.exited).toBe(0);
    const out = term.output();
    expect(out).toContain('$ lintel users get 1');
    expect(out).toMatch(/Login +admin/);
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
    expect(await term.waitFor('❯ zz-second')).toContain('lintel context use zz-second');
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
