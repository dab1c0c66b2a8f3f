import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import { ApiClient, ApiError, MemorySessionStore, type StoredSession } from '@lintel/core';
import { ManualClock } from '../../../apps/server/src/clock';
import { startTestServer, type TestServer } from '../../../tests/support/server';

let ts: TestServer;
// the server's clock, moved past an access token's life to watch it expire (it was a 1 s token and a 1.2 s
// sleep: on a loaded machine the refreshed token expired too before the retry reached the server)
const clock = new ManualClock();
const ACCESS_TTL_S = 60;
const expireAccessTokens = () => clock.advance((ACCESS_TTL_S + 1) * 1000);
beforeAll(async () => {
  ts = await startTestServer({ config: { accessTtlS: ACCESS_TTL_S, clock } });
});
afterAll(async () => {
  await ts?.close();
});

describe('ApiClient against a real server', () => {
  it('on 401 refreshes once, retries, and keeps the rotated tokens', async () => {
    const reply = await getCommand('session.login').run(
      { api: ts.client() },
      { login: ts.adminLogin, password: ts.adminPassword },
    );
    const store = new MemorySessionStore({ ...reply.sessions[0]! });
    const calls: string[] = [];
    const api = new ApiClient({
      baseUrl: ts.url,
      store,
      fetch: (input, init) => {
        calls.push(`${init?.method} ${new URL(String(input)).pathname}`);
        return fetch(input, init);
      },
    });
    expireAccessTokens();
    const profile = await getCommand('profile.get').run({ api }, {});
    expect(profile.login).toBe('admin');
    expect(calls).toEqual(['GET /api/v0/profile', 'POST /api/v0/refresh', 'GET /api/v0/profile']);
    expect(store.get()!.refresh).not.toBe(reply.sessions[0]!.refresh);
  });

  it('a refresh the server could not take yet (503, Retry-After) is asked again, not taken as refused', async () => {
    const reply = await getCommand('session.login').run(
      { api: ts.client() },
      { login: ts.adminLogin, password: ts.adminPassword },
    );
    const store = new MemorySessionStore({ ...reply.sessions[0]! });
    const calls: string[] = [];
    let busy = true;
    const api = new ApiClient({
      baseUrl: ts.url,
      store,
      fetch: (input, init) => {
        const path = new URL(String(input)).pathname;
        calls.push(`${init?.method} ${path}`);
        // the embedded database's answer when it was not free in time (db/faults.ts): the request did nothing
        if (path.endsWith('/refresh') && busy) {
          busy = false;
          return Promise.resolve(
            new Response(
              JSON.stringify({ message: 'service_unavailable', error_code: 'service_unavailable' }),
              {
                status: 503,
                headers: { 'content-type': 'application/json', 'retry-after': '0' },
              },
            ),
          );
        }
        return fetch(input, init);
      },
    });
    expireAccessTokens();
    const profile = await getCommand('profile.get').run({ api }, {});
    expect(profile.login).toBe('admin');
    expect(calls).toEqual([
      'GET /api/v0/profile',
      'POST /api/v0/refresh',
      'POST /api/v0/refresh',
      'GET /api/v0/profile',
    ]);
    expect(store.get()!.refresh).not.toBe(reply.sessions[0]!.refresh);
  });

  it('shares one refresh among calls that fail together', async () => {
    const reply = await getCommand('session.login').run(
      { api: ts.client() },
      { login: ts.adminLogin, password: ts.adminPassword },
    );
    let refreshes = 0;
    const api = new ApiClient({
      baseUrl: ts.url,
      store: new MemorySessionStore({ ...reply.sessions[0]! }),
      fetch: (input, init) => {
        if (String(input).endsWith('/refresh')) refreshes++;
        return fetch(input, init);
      },
    });
    expireAccessTokens();
    await Promise.all([1, 2, 3].map(() => getCommand('profile.get').run({ api }, {})));
    expect(refreshes).toBe(1);
  });

  it('two holders of one session (tabs, processes): the second to refresh takes the tokens of the first', async () => {
    // issue 25, item 9: a refresh token is single-use; the holder that refreshed second signed everyone out
    const reply = await getCommand('session.login').run(
      { api: ts.client() },
      { login: ts.adminLogin, password: ts.adminPassword },
    );
    let lock: Promise<unknown> = Promise.resolve();
    const rotations = new Map<string, StoredSession>();
    class SharedStore extends MemorySessionStore {
      override set(session: StoredSession) {
        const before = this.get();
        if (before && before.refresh !== session.refresh) rotations.set(before.refresh, session);
        super.set(session);
      }
      exclusive<T>(fn: () => Promise<T>): Promise<T> {
        const run = lock.then(fn, fn);
        lock = run.catch(() => undefined);
        return run;
      }
      successorOf(refresh: string) {
        const next = rotations.get(refresh) ?? null;
        if (next) super.set(next);
        return Promise.resolve(next);
      }
    }
    const a = new ApiClient({ baseUrl: ts.url, store: new SharedStore({ ...reply.sessions[0]! }) });
    const b = new ApiClient({ baseUrl: ts.url, store: new SharedStore({ ...reply.sessions[0]! }) });
    expect(await a.refresh()).toBe(true);
    // b still holds the first tokens: its access token was replaced, its refresh token used
    const profile = await getCommand('profile.get').run({ api: b }, {});
    expect(profile.login).toBe('admin');
    expect(b.store.get()).toEqual(a.store.get());
    // nothing was revoked: both go on
    expect((await getCommand('profile.get').run({ api: a }, {})).login).toBe('admin');
    const revoked = await ts.server.context.db
      .selectFrom('sessions')
      .select('id')
      .where('revoked_reason', '=', 'refresh_reuse')
      .execute();
    expect(revoked).toEqual([]);
  });

  it('signs out when the refresh fails', async () => {
    const reply = await getCommand('session.login').run(
      { api: ts.client() },
      { login: ts.adminLogin, password: ts.adminPassword },
    );
    let signedOut = 0;
    const store = new MemorySessionStore({ ...reply.sessions[0]!, refresh: 'revoked-or-forged' });
    const api = new ApiClient({ baseUrl: ts.url, store, onSignedOut: () => signedOut++ });
    expireAccessTokens();
    const err = await getCommand('profile.get')
      .run({ api }, {})
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(401);
    expect(signedOut).toBe(1);
    expect(store.get()).toBeNull();
  });

  it('gives up after the login timeout of 3 s', async () => {
    const api = new ApiClient({
      baseUrl: 'http://127.0.0.1:9',
      store: new MemorySessionStore(),
      fetch: (_input, init) =>
        new Promise((_resolve, reject) =>
          init?.signal?.addEventListener('abort', () => reject(new Error('aborted'))),
        ),
    });
    const t0 = Date.now();
    const err = await getCommand('session.login')
      .run({ api }, { login: 'a', password: 'b' })
      .catch((e: unknown) => e);
    expect((err as ApiError).message).toBe('timeout');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2900);
  });
});
