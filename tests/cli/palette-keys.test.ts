/**
 * Issue 13 point 15: the palette takes every key of a chunk that arrives in one write (a paste ending in
 * Enter, two quick backspaces), in a pseudo-terminal against a real server.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { admin, uid } from '../support/fixtures';
import { startTestServer, type TestServer } from '../support/server';
import { terminal, type Terminal } from './pty';
import { buildCli, freshConfigDir, lintel, removeConfigDirs } from './support';

let ts: TestServer;
let api: ApiClient;
let adminDir: string;
const open: Terminal[] = [];

async function palette(): Promise<Terminal> {
  const term = terminal([], { configDir: adminDir });
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
  const r = await lintel(['login', '--server', ts.url, '--login', ts.adminLogin, '--password-stdin'], {
    configDir: adminDir,
    input: `${ts.adminPassword}\n`,
  });
  expect(r.code, r.stderr).toBe(0);
});

afterEach(() => {
  for (const term of open.splice(0)) term.kill();
});

afterAll(async () => {
  await ts?.close();
  removeConfigDirs();
});

describe('the palette and keys that come in one write', () => {
  it('two backspaces in one write delete two characters', async () => {
    const term = await palette();
    term.type('whoXY');
    await term.waitFor('› whoXY');
    term.type('\x7f\x7f');
    const shown = await term.waitFor(/❯ Show who you are signed in as +whoami/);
    expect(shown).toContain('› who');
  });

  it('a paste ending in Enter types its text and presses Enter, at every step', async () => {
    const name = `Pasted ${uid()}`;
    const term = await palette();
    term.type('create marker\r');
    await term.waitFor('Name (1 of 2)');
    term.type(`${name}\r`);
    await term.waitFor('Enter run');
    term.type('#112233\r');
    await term.waitFor(`--color '#112233'`);
    term.type('\r');
    expect(await term.exited).toBe(0);
    const made = await getCommand('marker.list').run({ api }, { search: name });
    expect(made.data.map((m) => [m.name, m.color])).toEqual([[name, '#112233']]);
  });

  it('a command the server refuses opens the palette again where it stood, with why and what was typed', async () => {
    const name = `Taken ${uid()}`;
    await getCommand('marker.create').run({ api }, { name, color: '#000000' });
    const term = await palette();
    term.type('create marker\r');
    await term.waitFor('Name (1 of 2)');
    term.type(`${name}\r`);
    await term.waitFor('Enter run');
    term.type('#445566\r');
    // refused: back in the palette at the last step, the answers kept, the reason in it
    const again = await term.waitFor(/Value is not unique[^]*Enter run/);
    expect(again).toContain(`Name: ${name}`);
    expect(again).toContain('› #445566');
    // the name changed (Esc goes back to it), it runs and the palette is done
    term.type('\x1b');
    await term.waitFor('Name (1 of 2)');
    term.type('\x15');
    term.type(`${name} 2\r`);
    await term.waitFor('Enter run');
    term.type('#445566\r');
    expect(await term.exited).toBe(0);
    const made = await getCommand('marker.list').run({ api }, { search: `${name} 2` });
    expect(made.data.map((m) => m.color)).toEqual(['#445566']);
  });
});

describe('deleting at a terminal asks, naming what it deletes', () => {
  it('n keeps it (exit 130); y deletes it', async () => {
    const tag = uid();
    const made = await getCommand('user.create').run(
      { api },
      {
        login: `asked.${tag}`,
        name: `Asked ${tag}`,
        role: (await getCommand('profile.get').run({ api }, {})).role.id,
        domains: [(await getCommand('profile.get').run({ api }, {})).domains[0]!.id],
        send_registration_link: false,
      },
    );
    const id = made.data.id;
    const no = terminal(['users', 'delete', String(id)], { configDir: adminDir });
    open.push(no);
    await no.waitFor(`Delete user ${id} (Asked ${tag})? Type y to delete:`);
    no.type('n\r');
    expect(await no.exited).toBe(130);
    expect(no.output()).toContain('Nothing was deleted.');
    expect((await getCommand('user.get').run({ api }, { id })).id).toBe(id);

    const yes = terminal(['users', 'delete', String(id)], { configDir: adminDir });
    open.push(yes);
    await yes.waitFor(`Delete user ${id} (Asked ${tag})?`);
    yes.type('y\r');
    expect(await yes.exited).toBe(0);
    await expect(getCommand('user.get').run({ api }, { id })).rejects.toMatchObject({ status: 404 });
  });
});
