import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import { Profile } from '@lintel/core';
import { createProject } from '../../apps/server/src/bootstrap';
import { hashPassword } from '../../apps/server/src/auth/crypto';
import { startTestServer, type TestServer } from '../support/server';
import { buildCli, freshConfigDir, lintel, removeConfigDirs } from './support';

const readConfig = (configDir: string) =>
  JSON.parse(fs.readFileSync(path.join(configDir, 'config.json'), 'utf8'));

let ts: TestServer;
const multi = { login: 'multi', password: 'Multi-123456' };
let multiAccountId: number;

beforeAll(async () => {
  const built = buildCli();
  expect(built.status, built.stderr).toBe(0);
  ts = await startTestServer();

  // `multi` belongs to the default project and to a second one
  const db = ts.server.context.db;
  const second = await createProject(db, { uid: 'second', name: 'Second project' });
  const first = await db
    .selectFrom('projects')
    .innerJoin('roles', 'roles.project_id', 'projects.id')
    .innerJoin('domains', 'domains.project_id', 'projects.id')
    .select(['roles.id as roleId', 'domains.id as domainId', 'projects.id as projectId'])
    .where('projects.uid', '=', 'default')
    .where('roles.name', '=', 'Administrator')
    .where('domains.parent_id', 'is', null)
    .executeTakeFirstOrThrow();
  const account = await db
    .insertInto('accounts')
    .values({
      login: multi.login,
      email: null,
      password_hash: await hashPassword(multi.password),
      activated_at: new Date(),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  multiAccountId = account.id;
  for (const m of [
    { projectId: first.projectId, roleId: first.roleId, domainId: first.domainId },
    { projectId: second.projectId, roleId: second.adminRoleId, domainId: second.rootDomainId },
  ]) {
    const user = await db
      .insertInto('users')
      .values({ project_id: m.projectId, account_id: account.id, role_id: m.roleId, name: 'Multi' })
      .returning('id')
      .executeTakeFirstOrThrow();
    await db.insertInto('user_domains').values({ user_id: user.id, domain_id: m.domainId }).execute();
  }
});

afterAll(async () => {
  await ts?.close();
  removeConfigDirs();
});

async function activeSessions(accountId: number): Promise<number> {
  const rows = await ts.server.context.db
    .selectFrom('sessions')
    .innerJoin('users', 'users.id', 'sessions.user_id')
    .select('sessions.id')
    .where('users.account_id', '=', accountId)
    .where('sessions.revoked_at', 'is', null)
    .execute();
  return rows.length;
}

const signIn = (configDir: string, extra: string[] = [], who = { login: 'admin', password: '' }) =>
  lintel(['login', '--server', ts.url, '--login', who.login || ts.adminLogin, '--password-stdin', ...extra], {
    configDir,
    input: `${who.password || ts.adminPassword}\n`,
  });

describe('lintel CLI: sessions', () => {
  it('documents the exit codes in --help', async () => {
    const r = await lintel(['--help'], { configDir: freshConfigDir() });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Exit codes:');
    expect(r.stdout).toMatch(/3 +not signed in/);
  });

  it('signs in without a terminal, saves the session 0600, and whoami shows the profile', async () => {
    const configDir = freshConfigDir();
    const login = await signIn(configDir);
    expect(login.stderr).toBe('');
    expect(login.code).toBe(0);
    const context = `default@${new URL(ts.url).host}`;
    expect(login.stdout).toContain(context);

    expect(fs.statSync(path.join(configDir, 'config.json')).mode & 0o777).toBe(0o600);
    expect(fs.statSync(configDir).mode & 0o777).toBe(0o700);
    const config = readConfig(configDir);
    expect(config.current).toBe(context);
    expect(config.contexts[context]).toMatchObject({
      server: ts.url,
      login: 'admin',
      project: { uid: 'default' },
    });
    expect(config.contexts[context].token).toEqual(expect.any(String));

    const json = await lintel(['whoami', '--json'], { configDir });
    expect(json.code).toBe(0);
    const profile = Profile.parse(JSON.parse(json.stdout));
    expect(profile.login).toBe('admin');
    expect(profile.project.uid).toBe('default');

    const text = await lintel(['whoami'], { configDir });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/Login +admin/);
    expect(text.stdout).toMatch(/Role +Administrator/);
    expect(text.stdout).toContain(ts.url);
  });

  it('prints JSON for login with --json, and never the tokens', async () => {
    const r = await signIn(freshConfigDir(), ['--json']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ server: ts.url, login: 'admin', project: { uid: 'default' } });
    expect(r.stdout).not.toMatch(/token|refresh/);
  });

  it('refuses a wrong password: exit 1 with the catalogue text, or its JSON body on stderr', async () => {
    const configDir = freshConfigDir();
    const text = await signIn(configDir, [], { login: 'admin', password: 'wrong-password' });
    expect(text.code).toBe(1);
    expect(text.stderr.trim()).toBe('Incorrect login/password');
    expect(text.stdout).toBe('');

    const json = await signIn(configDir, ['--json'], { login: 'admin', password: 'wrong-password' });
    expect(json.code).toBe(1);
    expect(json.stdout).toBe('');
    expect(JSON.parse(json.stderr)).toEqual({
      message: 'Incorrect login/password',
      error_code: 'incorrect_login_password',
      data: null,
    });
    expect(fs.existsSync(path.join(configDir, 'config.json'))).toBe(false);
  });

  it('needs --login and --password-stdin without a terminal (exit 2), and checks arguments before sending', async () => {
    const configDir = freshConfigDir();
    const noPassword = await lintel(['login', '--server', ts.url, '--login', 'admin'], { configDir });
    expect(noPassword.code).toBe(2);
    expect(noPassword.stderr).toContain('--password-stdin');

    const noLogin = await lintel(['login', '--server', ts.url, '--password-stdin', '--json'], {
      configDir,
      input: 'x',
    });
    expect(noLogin.code).toBe(2);
    expect(JSON.parse(noLogin.stderr)).toMatchObject({ error_code: 'login_required' });

    const empty = await lintel(['login', '--server', ts.url, '--login', 'admin', '--password-stdin'], {
      configDir,
      input: '',
    });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('Check fields data');
    expect(empty.stderr).toContain('password: Field required');
  });

  it('says when no server answers', async () => {
    const r = await lintel(
      ['login', '--server', 'http://127.0.0.1:9', '--login', 'admin', '--password-stdin'],
      {
        configDir: freshConfigDir(),
        input: 'x\n',
      },
    );
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe('No Lintel server answers at http://127.0.0.1:9.');
  });

  it('exits 3 when not signed in, as text or as JSON', async () => {
    const configDir = freshConfigDir();
    const text = await lintel(['whoami'], { configDir });
    expect(text.code).toBe(3);
    expect(text.stderr).toContain('lintel login');

    const json = await lintel(['whoami', '--json'], { configDir });
    expect(json.code).toBe(3);
    expect(json.stdout).toBe('');
    expect(JSON.parse(json.stderr)).toEqual({
      message: 'You are not signed in. Run `lintel login`.',
      error_code: 'not_signed_in',
      data: null,
    });

    const ru = await lintel(['whoami'], { configDir, env: { LINTEL_LANG: 'ru' } });
    expect(ru.code).toBe(3);
    expect(ru.stderr).toContain('Вход не выполнен');
  });

  it('rotates the stored tokens on disk when the access token is refused', async () => {
    const configDir = freshConfigDir();
    expect((await signIn(configDir)).code).toBe(0);
    const before = readConfig(configDir);
    const name = before.current as string;
    before.contexts[name].token = 'no-longer-valid';
    fs.writeFileSync(path.join(configDir, 'config.json'), JSON.stringify(before));

    const r = await lintel(['whoami', '--json'], { configDir });
    expect(r.code).toBe(0);
    const after = readConfig(configDir).contexts[name];
    expect(after.token).not.toBe('no-longer-valid');
    expect(after.refresh).not.toBe(before.contexts[name].refresh);
  });

  it('logs out: the session ends on the server and the context is forgotten', async () => {
    const configDir = freshConfigDir();
    expect((await signIn(configDir)).code).toBe(0);
    const { current, contexts } = readConfig(configDir);
    const token = contexts[current].token as string;

    const out = await lintel(['logout', '--json'], { configDir });
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout)).toEqual({ ok: true, context: current });
    expect(readConfig(configDir)).toEqual({ current: null, contexts: {} });

    expect((await lintel(['whoami'], { configDir })).code).toBe(3);
    // the token itself is revoked
    const revoked = await lintel(['whoami', '--json'], {
      configDir,
      env: { LINTEL_TOKEN: token, LINTEL_SERVER: ts.url },
    });
    expect(revoked.code).toBe(3);
    expect(JSON.parse(revoked.stderr)).toMatchObject({ error_code: 'not_authorized' });
    // nothing left to log out of
    expect((await lintel(['logout'], { configDir })).code).toBe(3);
  });

  it('with several projects: exit 2 listing them without --project, and --project picks one', async () => {
    const configDir = freshConfigDir();
    const text = await signIn(configDir, [], multi);
    expect(text.code).toBe(2);
    expect(text.stderr).toContain('default');
    expect(text.stderr).toContain('second');
    expect(text.stderr).toContain('--project');

    const json = await signIn(configDir, ['--json'], multi);
    expect(json.code).toBe(2);
    const body = JSON.parse(json.stderr);
    expect(body.error_code).toBe('project_required');
    expect([...body.data.projects].sort()).toEqual(['default', 'second']);
    expect(fs.existsSync(path.join(configDir, 'config.json'))).toBe(false);
    // the sessions the login opened are closed again
    expect(await activeSessions(multiAccountId)).toBe(0);

    const picked = await signIn(configDir, ['--project', 'second'], multi);
    expect(picked.code).toBe(0);
    expect(readConfig(configDir).current).toBe(`second@${new URL(ts.url).host}`);
    const who = await lintel(['whoami', '--json'], { configDir });
    expect(Profile.parse(JSON.parse(who.stdout)).project.uid).toBe('second');
    expect(await activeSessions(multiAccountId)).toBe(1);

    const unknown = await signIn(freshConfigDir(), ['--project', 'nowhere'], multi);
    expect(unknown.code).toBe(5);
    expect(unknown.stderr).toContain('Unknown project');
  });

  it('uses LINTEL_TOKEN with LINTEL_SERVER instead of a stored session', async () => {
    const reply = await getCommand('session.login').run(
      { api: ts.client() },
      { login: ts.adminLogin, password: ts.adminPassword },
    );
    const token = reply.sessions[0]!.token;
    const configDir = freshConfigDir();
    const r = await lintel(['whoami', '--json'], {
      configDir,
      env: { LINTEL_TOKEN: token, LINTEL_SERVER: ts.url },
    });
    expect(r.code).toBe(0);
    expect(Profile.parse(JSON.parse(r.stdout)).login).toBe('admin');
    expect(fs.existsSync(path.join(configDir, 'config.json'))).toBe(false);

    const bad = await lintel(['whoami'], {
      configDir,
      env: { LINTEL_TOKEN: 'not-a-token', LINTEL_SERVER: ts.url },
    });
    expect(bad.code).toBe(3);
    expect(bad.stderr).toContain('Your session has ended');
  });

  it('reports bad usage with exit 2, as JSON too', async () => {
    const configDir = freshConfigDir();
    const text = await lintel(['whoami', '--jsn'], { configDir });
    expect(text.code).toBe(2);
    expect(text.stderr).toContain('Unknown option --jsn');
    expect(text.stderr).toContain('Did you mean --json?');

    const json = await lintel(['whoami', '--bogus', '--json'], { configDir });
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stderr)).toMatchObject({
      error_code: 'unknown_option',
      data: { name: '--bogus' },
    });

    expect((await lintel(['frobnicate'], { configDir })).code).toBe(2);
    expect((await lintel(['login', '--password', 'x'], { configDir })).code).toBe(2);
  });
});
