/**
 * `lintel api METHOD PATH`: raw calls with the saved session, the built CLI as a child process against a real
 * server: paths with or without /api/v0, --data and --field, JSON replies, error bodies on stderr with the
 * documented exit codes, and the one refresh of a refused access token.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { admin, uid, userWith } from '../support/fixtures';
import { startTestServer, type TestServer } from '../support/server';
import { buildCli, freshConfigDir, lintel, removeConfigDirs, type Run } from './support';

let ts: TestServer;
let api: ApiClient;
let adminDir: string;
let viewerDir: string;

const cli = (args: string[], configDir = adminDir, env?: Record<string, string>) =>
  lintel(['api', ...args], { configDir, env });
const readConfig = (configDir: string) =>
  JSON.parse(fs.readFileSync(path.join(configDir, 'config.json'), 'utf8'));

/** The JSON printed by a call that exited 0 with nothing on stderr. */
function reply(r: Run): Record<string, unknown> {
  expect(r.stderr, r.stderr).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout);
}

async function signIn(configDir: string, login: string, password: string) {
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
  const root = (await getCommand('profile.get').run({ api }, {})).domains[0]!.id;
  const viewer = await userWith(ts, api, { permissions: ['users.view'], domains: [root] });
  viewerDir = freshConfigDir();
  await signIn(viewerDir, viewer.login, viewer.password);
});

afterAll(async () => {
  await ts?.close();
  removeConfigDirs();
});

describe('lintel api', () => {
  it('says which methods a path takes when it is called with another, sending nothing (issue 25 item 10)', async () => {
    const r = await cli(['POST', '/roles', '--data', '{"name": "x"}']);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stderr)).toMatchObject({ error_code: 'method_not_served' });
    const text = await lintel(['api', 'POST', '/roles'], { configDir: adminDir, env: { LINTEL_JSON: '' } });
    expect(text.stderr).toContain('/roles does not take POST; it takes GET, PUT');
    expect(text.stderr).toContain('PUT /roles: role.create');
    // a path with an id fits its pattern; the right method still goes through
    expect((await cli(['PATCH', '/users/1', '-F', 'name=x'])).stderr).not.toContain('method_not_served');
  });

  it('GETs a path with or without /api/v0, with fields and a query as query parameters', async () => {
    const a = reply(await cli(['GET', '/users', '-F', 'limit=1']));
    expect(a).toMatchObject({ meta: { limit: 1, page: 1 } });
    expect((a.data as unknown[]).length).toBe(1);

    const b = reply(await cli(['get', '/api/v0/users?limit=1&page=1']));
    expect(b).toEqual(a);
    const c = reply(await cli(['GET', 'users', '--data', '{"limit": 1}']));
    expect(c).toEqual(a);

    const profile = reply(await cli(['GET', '/profile']));
    expect(profile).toMatchObject({ login: 'admin', project: { uid: 'default' } });
  });

  it('sends --data and --field as the body of PUT, PATCH and DELETE, and prints the reply as JSON', async () => {
    const name = `VIP ${uid()}`;
    const file = path.join(path.dirname(adminDir), 'marker.json');
    fs.writeFileSync(file, JSON.stringify({ name, color: '#00ff00' }));
    const created = reply(await cli(['PUT', '/markers', '--data', `@${file}`, '-f', 'color=#ff0000']));
    const marker = created.data as { id: number; name: string; color: string };
    expect(marker).toMatchObject({ name, color: '#ff0000' });

    const renamed = reply(await cli(['PATCH', `/markers/${marker.id}`, '-F', `name=${name} gold`]));
    expect(renamed.data).toMatchObject({ id: marker.id, name: `${name} gold` });

    const r = await cli(['PATCH', `/markers/${marker.id}`, '-F', 'name=x', '--data', '{"color": "#0000ff"}']);
    expect(reply(r).data).toMatchObject({ name: 'x', color: '#0000ff' });
    // pretty JSON, as `--json` prints everywhere
    expect(r.stdout).toMatch(/^\{\n {2}"data": \{\n/);

    expect(reply(await cli(['DELETE', `/markers/${marker.id}`]))).toEqual({ ok: true });
    const gone = await getCommand('marker.list').run({ api }, { search: name });
    expect(gone.meta.total).toBe(0);
  });

  it('prints an error reply as its JSON body on stderr, with exit 5 for 404', async () => {
    const missing = await cli(['GET', '/users/999999']);
    expect(missing.code).toBe(5);
    expect(missing.stdout).toBe('');
    expect(JSON.parse(missing.stderr)).toEqual({
      message: 'item_not_found',
      error_code: 'item_not_found',
      data: null,
    });

    const noRoute = await cli(['POST', '/no/such/route']);
    expect(noRoute.code).toBe(5);
    expect(JSON.parse(noRoute.stderr)).toMatchObject({ error_code: 'item_not_found' });
  });

  it('exits 4 when the role lacks the permission, with the body naming it', async () => {
    const r = await cli(['PUT', '/markers', '-f', 'name=nope', '-f', 'color=#000000'], viewerDir);
    expect(r.code).toBe(4);
    expect(r.stdout).toBe('');
    const body = JSON.parse(r.stderr);
    expect(body.error_code).toBe('method_prohibited');
    // what the role may do still works
    expect(reply(await cli(['GET', '/users', '-F', 'limit=1'], viewerDir)).meta).toBeTruthy();
  });

  it('exits 1 for any other error reply, 2 for a value the server refused or bad usage', async () => {
    const wrong = await cli(['POST', '/login', '--data', '{"login": "admin", "password": "wrong-password"}']);
    expect(wrong.code).toBe(1);
    expect(JSON.parse(wrong.stderr)).toEqual({
      message: 'incorrect_login_password',
      error_code: 'incorrect_login_password',
      data: null,
    });

    const refused = await cli(['PUT', '/roles', '-f', 'name=No permissions given']);
    expect(refused.code).toBe(2);
    expect(JSON.parse(refused.stderr)).toEqual({
      message: 'check_fields_data',
      error_code: 'check_fields_data',
      data: { fields: [{ field: 'permissions', rule: 'required' }] },
    });

    const badMethod = await cli(['FETCH', '/users']);
    expect(badMethod.code).toBe(2);
    expect(JSON.parse(badMethod.stderr)).toMatchObject({
      error_code: 'bad_method',
      data: { method: 'FETCH', methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] },
    });
    const badField = await cli(['GET', '/users', '-F', 'limit']);
    expect(badField.code).toBe(2);
    expect(JSON.parse(badField.stderr)).toMatchObject({ error_code: 'bad_field', data: { field: 'limit' } });
    const badData = await cli(['POST', '/users', '--data', '[1,2']);
    expect(badData.code).toBe(2);
    expect(JSON.parse(badData.stderr)).toMatchObject({ error_code: 'bad_data' });
    const missing = await cli(['GET']);
    expect(missing.code).toBe(2);
  });

  it('refreshes a refused access token once, retries, and saves the rotated tokens', async () => {
    const configDir = freshConfigDir();
    await signIn(configDir, ts.adminLogin, ts.adminPassword);
    const before = readConfig(configDir);
    const name = before.current as string;
    before.contexts[name].token = 'no-longer-valid';
    fs.writeFileSync(path.join(configDir, 'config.json'), JSON.stringify(before), { mode: 0o600 });

    expect(reply(await cli(['GET', '/profile'], configDir))).toMatchObject({ login: 'admin' });
    const after = readConfig(configDir).contexts[name];
    expect(after.token).not.toBe('no-longer-valid');
    expect(after.refresh).not.toBe(before.contexts[name].refresh);
    expect(fs.statSync(path.join(configDir, 'config.json')).mode & 0o777).toBe(0o600);
  });

  it('exits 3 when not signed in or when the session has ended, as JSON', async () => {
    const nobody = await cli(['GET', '/profile'], freshConfigDir());
    expect(nobody.code).toBe(3);
    expect(JSON.parse(nobody.stderr)).toEqual({
      message: 'You are not signed in. Run `lintel login`.',
      error_code: 'not_signed_in',
      data: null,
    });

    const ended = await cli(['GET', '/profile'], freshConfigDir(), {
      LINTEL_TOKEN: 'not-a-token',
      LINTEL_SERVER: ts.url,
    });
    expect(ended.code).toBe(3);
    expect(JSON.parse(ended.stderr)).toMatchObject({ error_code: 'not_authorized' });
  });

  it('uses LINTEL_TOKEN and LINTEL_SERVER instead of a saved session', async () => {
    const login = await getCommand('session.login').run(
      { api: ts.client() },
      { login: ts.adminLogin, password: ts.adminPassword },
    );
    const configDir = freshConfigDir();
    const r = await cli(['GET', '/profile'], configDir, {
      LINTEL_TOKEN: login.sessions[0]!.token,
      LINTEL_SERVER: ts.url,
    });
    expect(reply(r)).toMatchObject({ login: 'admin' });
    expect(fs.existsSync(path.join(configDir, 'config.json'))).toBe(false);
  });
});
