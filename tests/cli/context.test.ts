/**
 * Named contexts: `lintel login --context NAME`, `lintel context list|use|remove`, the built CLI as a child
 * process against a real server. The settings file stays mode 0600 through every change.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Profile } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { terminal } from './pty';
import { buildCli, freshConfigDir, lintel, removeConfigDirs } from './support';

let ts: TestServer;
let host: string;

const configFile = (configDir: string) => path.join(configDir, 'config.json');
const readConfig = (configDir: string) => JSON.parse(fs.readFileSync(configFile(configDir), 'utf8'));
const mode = (configDir: string) => fs.statSync(configFile(configDir)).mode & 0o777;

const signIn = (configDir: string, extra: string[] = []) =>
  lintel(['login', '--server', ts.url, '--login', ts.adminLogin, '--password-stdin', ...extra], {
    configDir,
    input: `${ts.adminPassword}\n`,
  });

async function activeSessions(): Promise<number> {
  const rows = await ts.server.context.db
    .selectFrom('sessions')
    .select('id')
    .where('revoked_at', 'is', null)
    .execute();
  return rows.length;
}

beforeAll(async () => {
  const built = buildCli();
  expect(built.status, built.stderr).toBe(0);
  ts = await startTestServer();
  host = new URL(ts.url).host;
});

afterAll(async () => {
  await ts?.close();
  removeConfigDirs();
});

describe('lintel contexts', () => {
  it('login names the context: --context NAME, or <project>@<host:port> by default', async () => {
    const configDir = freshConfigDir();
    const first = await signIn(configDir);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain(`Context: default@${host}`);

    const named = await signIn(configDir, ['--context', 'work', '--json']);
    expect(named.code, named.stderr).toBe(0);
    expect(JSON.parse(named.stdout)).toMatchObject({ context: 'work', server: ts.url });

    const config = readConfig(configDir);
    expect(config.current).toBe('work');
    expect(Object.keys(config.contexts).sort()).toEqual([`default@${host}`, 'work']);
    expect(mode(configDir)).toBe(0o600);

    const bad = await signIn(configDir, ['--context', 'two words']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('Not a context name: two words');
  });

  it('lists the contexts: tab-separated for a pipe, JSON with --json, the current one marked', async () => {
    const configDir = freshConfigDir();
    expect((await signIn(configDir)).code).toBe(0);
    expect((await signIn(configDir, ['--context', 'work'])).code).toBe(0);

    const pipe = await lintel(['context', 'list'], { configDir });
    expect(pipe.code).toBe(0);
    expect(pipe.stdout.trim().split('\n')).toEqual([
      'current\tname\tserver\tlogin\tproject\tsigned_in',
      `false\tdefault@${host}\t${ts.url}\tadmin\tdefault\ttrue`,
      `true\twork\t${ts.url}\tadmin\tdefault\ttrue`,
    ]);

    const json = await lintel(['context', 'ls', '--json'], { configDir });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual([
      {
        name: `default@${host}`,
        current: false,
        server: ts.url,
        login: 'admin',
        project: { uid: 'default', name: 'Default project' },
        signed_in: true,
      },
      {
        name: 'work',
        current: true,
        server: ts.url,
        login: 'admin',
        project: { uid: 'default', name: 'Default project' },
        signed_in: true,
      },
    ]);

    // a table for a person, `*` on the current one
    const tty = terminal(['context', 'list'], { configDir });
    expect(await tty.exited).toBe(0);
    const lines = tty
      .output()
      .split(/\r?\n/)
      .filter((l) => l.trim());
    expect(lines[0]).toMatch(/^ +NAME +SERVER +LOGIN +PROJECT +SIGNED IN$/);
    expect(lines).toContainEqual(
      expect.stringMatching(new RegExp(`^\\* +work +${host} +admin +Default project +yes$`)),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(new RegExp(`^ +default@${host} +${host} +admin +Default project +yes$`)),
    );

    const empty = await lintel(['context', 'list', '--json'], { configDir: freshConfigDir() });
    expect(empty.code).toBe(0);
    expect(JSON.parse(empty.stdout)).toEqual([]);
  });

  it('switches the current context with `use`; commands then run in it', async () => {
    const configDir = freshConfigDir();
    expect((await signIn(configDir)).code).toBe(0);
    expect((await signIn(configDir, ['--context', 'work'])).code).toBe(0);

    const used = await lintel(['context', 'use', `default@${host}`], { configDir });
    expect(used.code, used.stderr).toBe(0);
    expect(used.stdout.trim()).toBe(
      `Current context: default@${host} (admin at ${ts.url}, Default project).`,
    );
    expect(readConfig(configDir).current).toBe(`default@${host}`);
    expect(mode(configDir)).toBe(0o600);

    const who = await lintel(['whoami', '--json'], { configDir });
    expect(who.code).toBe(0);
    expect(Profile.parse(JSON.parse(who.stdout)).login).toBe('admin');

    const json = await lintel(['context', 'use', 'work', '--json'], { configDir });
    expect(JSON.parse(json.stdout)).toMatchObject({ name: 'work', current: true, signed_in: true });
  });

  it('exits 5 with the catalogue message for a context that does not exist', async () => {
    const configDir = freshConfigDir();
    expect((await signIn(configDir, ['--context', 'work'])).code).toBe(0);

    const text = await lintel(['context', 'use', 'nowhere'], { configDir });
    expect(text.code).toBe(5);
    expect(text.stdout).toBe('');
    expect(text.stderr.trim()).toBe('Unknown context nowhere. See `lintel context list`.');

    const json = await lintel(['context', 'use', 'nowhere', '--json'], { configDir });
    expect(json.code).toBe(5);
    expect(JSON.parse(json.stderr)).toEqual({
      message: 'Unknown context nowhere. See `lintel context list`.',
      error_code: 'unknown_context',
      data: { name: 'nowhere', contexts: ['work'] },
    });

    const ru = await lintel(['context', 'remove', 'nowhere'], { configDir, env: { LINTEL_LANG: 'ru' } });
    expect(ru.code).toBe(5);
    expect(ru.stderr).toContain('Неизвестный контекст nowhere');
    expect(readConfig(configDir).current).toBe('work');
  });

  it('removes a context: its session ends on the server and it is forgotten', async () => {
    const configDir = freshConfigDir();
    expect((await signIn(configDir)).code).toBe(0);
    expect((await signIn(configDir, ['--context', 'work'])).code).toBe(0);
    const token = readConfig(configDir).contexts.work.token as string;
    const sessions = await activeSessions();

    const other = await lintel(['context', 'remove', `default@${host}`], { configDir });
    expect(other.code, other.stderr).toBe(0);
    expect(other.stdout.trim()).toBe(`Context default@${host} removed.`);
    expect(readConfig(configDir).current).toBe('work');
    expect(await activeSessions()).toBe(sessions - 1);

    const current = await lintel(['context', 'rm', 'work', '--json'], { configDir });
    expect(current.code, current.stderr).toBe(0);
    expect(JSON.parse(current.stdout)).toEqual({ ok: true, context: 'work', current: null });
    expect(readConfig(configDir)).toEqual({ current: null, contexts: {} });
    expect(mode(configDir)).toBe(0o600);

    // the token is revoked, and with no current context commands say so
    const revoked = await lintel(['whoami', '--json'], {
      configDir: freshConfigDir(),
      env: { LINTEL_TOKEN: token, LINTEL_SERVER: ts.url },
    });
    expect(revoked.code).toBe(3);
    expect((await lintel(['whoami'], { configDir })).code).toBe(3);
  });

  it('forgets a context whose server is gone', async () => {
    const configDir = freshConfigDir();
    expect((await signIn(configDir, ['--context', 'away'])).code).toBe(0);
    const config = readConfig(configDir);
    config.contexts.away.server = 'http://127.0.0.1:9';
    fs.writeFileSync(configFile(configDir), JSON.stringify(config), { mode: 0o600 });

    const r = await lintel(['context', 'remove', 'away'], { configDir });
    expect(r.code, r.stderr).toBe(0);
    expect(readConfig(configDir).contexts).toEqual({});
  });
});
