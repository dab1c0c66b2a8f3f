import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import { ApiError, LoginReply, Profile } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';

let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(async () => {
  await ts?.close();
});

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${ts.url}/api/v0${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

describe('sessions', () => {
  it('answers server-info without a session', async () => {
    const res = await fetch(`${ts.url}/api/v0/server-info`);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.name).toBe('Lintel');
    expect(body.version).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('signs the administrator in to the default project and shows the profile', async () => {
    const res = await post('/login', { login: ts.adminLogin, password: ts.adminPassword });
    expect(res.status).toBe(200);
    const reply = LoginReply.parse(await res.json());
    expect(reply.sessions).toHaveLength(1);
    expect(reply.sessions[0]!.project.uid).toBe('default');
    const api = ts.client({ ...reply.sessions[0]! });
    const profile = Profile.parse(await getCommand('profile.get').run({ api }, {}));
    expect(profile.login).toBe('admin');
    expect(profile.role.permissions).toContain('users.create');
  });

  it('refuses a wrong password with the catalogue error', async () => {
    const res = await post('/login', { login: ts.adminLogin, password: 'wrong-password' });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({
      message: 'incorrect_login_password',
      error_code: 'incorrect_login_password',
      data: null,
    });
  });

  it('needs a session for the profile: 401 Unauthenticated / not_authorized', async () => {
    const res = await fetch(`${ts.url}/api/v0/profile`);
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ message: 'Unauthenticated', error_code: 'not_authorized' });
  });

  it('names the fields of a bad body', async () => {
    const res = await post('/login', { login: 5 });
    expect(res.status).toBe(422);
    const body = await res.json();
    expect(body.message).toBe('check_fields_data');
    expect(body.data.fields).toEqual(
      expect.arrayContaining([
        { field: 'login', rule: 'invalid_type', params: { expected: 'string' } },
        { field: 'password', rule: 'required' },
      ]),
    );
  });

  it('rotates refresh tokens; a second use of one ends the session', async () => {
    const login = LoginReply.parse(
      await (await post('/login', { login: ts.adminLogin, password: ts.adminPassword })).json(),
    );
    const first = login.sessions[0]!;
    const r1 = await post('/refresh', { token: first.refresh });
    expect(r1.status).toBe(200);
    const next = (await r1.json()).session;
    expect(next.refresh).not.toBe(first.refresh);
    // the old access token is gone, the new one works
    expect(
      (await fetch(`${ts.url}/api/v0/profile`, { headers: { authorization: `Bearer ${first.token}` } }))
        .status,
    ).toBe(401);
    expect(
      (await fetch(`${ts.url}/api/v0/profile`, { headers: { authorization: `Bearer ${next.token}` } }))
        .status,
    ).toBe(200);
    // the first refresh token again at once (its reply lost with a reload, another tab of the browser
    // refreshing with it): the same pair again, and the session goes on (issue 25, item 9)
    const again = await post('/refresh', { token: first.refresh });
    expect(again.status).toBe(200);
    expect((await again.json()).session).toMatchObject({ token: next.token, refresh: next.refresh });
    // a token that was never given is refused all the same
    expect((await post('/refresh', { token: `${first.refresh}x` })).status).toBe(401);
    expect(
      (await fetch(`${ts.url}/api/v0/profile`, { headers: { authorization: `Bearer ${next.token}` } }))
        .status,
    ).toBe(200);
    // the first refresh token again later than the grace: refused, and the whole session is revoked
    await ts.server.context.db
      .updateTable('used_refresh_tokens')
      .set({ used_at: new Date(Date.now() - (ts.server.context.config.refreshReuseGraceS + 1) * 1000) })
      .execute();
    const r2 = await post('/refresh', { token: first.refresh });
    expect(r2.status).toBe(401);
    expect((await r2.json()).message).toBe('invalid_token');
    expect(
      (await fetch(`${ts.url}/api/v0/profile`, { headers: { authorization: `Bearer ${next.token}` } }))
        .status,
    ).toBe(401);
    expect((await post('/refresh', { token: next.refresh })).status).toBe(401);
  });

  it('logs out: the token stops working', async () => {
    const login = LoginReply.parse(
      await (await post('/login', { login: ts.adminLogin, password: ts.adminPassword })).json(),
    );
    const api = ts.client({ ...login.sessions[0]! });
    await getCommand('session.logout').run({ api }, {});
    await expect(getCommand('profile.get').run({ api }, {})).rejects.toBeInstanceOf(ApiError);
    expect(api.store.get()).toBeNull();
  });
});
