/**
 * Issue 12, point 1: PostgreSQL ending connections that are checked out (a query in flight, a transaction
 * open) under a loop of reads and writes. The server must keep serving: a request whose connection died is a
 * 503 `service_unavailable` with Retry-After (never a 500, never a dropped socket), and the pool heals.
 * Runs in the PostgreSQL pass of `npm test` (DATABASE_URL set).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import pg from 'pg';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin, rootGroup, tokenOf, uid } from '../support/fixtures';

let ts: TestServer;
let api: ApiClient;
let roleId: number;
let groupId: number;

beforeAll(async () => {
  ts = await startTestServer();
  expect(ts.server.context.database.kind).toBe('postgres');
  api = await admin(ts);
  roleId = (
    await getCommand('role.create').run(
      { api },
      { name: `role ${uid()}`, permissions: ['users.view'], available_roles: [] },
    )
  ).data.id;
  groupId = await rootGroup(api);
});
afterAll(async () => {
  await ts?.close();
});

interface Outcome {
  kind: 'read' | 'write';
  status: number;
  code?: string;
  retryAfter: string | null;
  ms: number;
}

/** One call as a browser makes it; a dropped socket is status 0. */
async function call(kind: 'read' | 'write'): Promise<Outcome> {
  const t0 = performance.now();
  const headers = { authorization: `Bearer ${tokenOf(api)}`, 'content-type': 'application/json' };
  try {
    const res =
      kind === 'read'
        ? await fetch(`${ts.url}/api/v0/users?limit=20`, { headers })
        : await fetch(`${ts.url}/api/v0/users`, {
            method: 'PUT',
            headers,
            body: JSON.stringify({
              login: `u${uid()}`,
              name: 'Load user',
              role: roleId,
              domains: [groupId],
              send_registration_link: false,
            }),
          });
    const body = (await res.json()) as { error_code?: string };
    return {
      kind,
      status: res.status,
      code: body.error_code,
      retryAfter: res.headers.get('retry-after'),
      ms: performance.now() - t0,
    };
  } catch {
    return { kind, status: 0, retryAfter: null, ms: performance.now() - t0 };
  }
}

it('keeps serving while PostgreSQL ends connections in use under reads and writes', async () => {
  const database = new URL(ts.server.context.config.databaseUrl!).pathname.slice(1);
  const outcomes: Outcome[] = [];
  let stop = false;
  let waiting: { at: number; resolve: () => void } | null = null;
  const progress = (at: number) => new Promise<void>((resolve) => (waiting = { at, resolve }));

  const worker = async (n: number) => {
    for (let i = 0; !stop; i++) {
      outcomes.push(await call((i + n) % 2 ? 'write' : 'read'));
      if (waiting && outcomes.length >= waiting.at) {
        const w = waiting;
        waiting = null;
        w.resolve();
      }
    }
  };
  const workers = Array.from({ length: 8 }, (_, n) => worker(n));

  // end every connection of the server's database each time 25 more calls have finished, eight times: some
  // are idle in the pool, the others checked out (a statement running, a transaction open, between the two)
  const killer = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await killer.connect();
  let killed = 0;
  try {
    for (let round = 0; round < 8; round++) {
      await progress(outcomes.length + 25);
      const r = await killer.query(
        'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
        [database],
      );
      killed += r.rowCount ?? 0;
    }
  } finally {
    stop = true;
    await killer.end();
    await Promise.all(workers);
  }
  expect(killed).toBeGreaterThanOrEqual(8);

  const failed = outcomes.filter((o) => o.status !== 200);
  // every failure is the catalogue's 503 with a Retry-After; none is a 500 or a dropped connection
  for (const o of failed)
    expect({ status: o.status, code: o.code, retryAfter: o.retryAfter }).toEqual({
      status: 503,
      code: 'service_unavailable',
      retryAfter: expect.stringMatching(/^[1-9]\d*$/),
    });
  expect(failed.length).toBeGreaterThan(0);
  expect(outcomes.filter((o) => o.status === 200).length).toBeGreaterThan(failed.length);

  // the pool healed: reads and writes succeed again, the same process answering
  for (const kind of ['read', 'write', 'read', 'write'] as const) expect((await call(kind)).status).toBe(200);
  const ok = outcomes
    .filter((o) => o.status === 200)
    .map((o) => o.ms)
    .sort((a, b) => a - b);
  const p = (q: number) => Math.round(ok[Math.min(ok.length - 1, Math.floor(q * ok.length))]!);
  console.log(
    `killed ${killed} backends; ${outcomes.length} calls, ${failed.length} answered 503 ` +
      `(${failed.filter((o) => o.kind === 'write').length} writes); others p50 ${p(0.5)} ms, p95 ${p(0.95)} ms, max ${p(1)} ms`,
  );
  expect(ts.logs()).toContain('database connection lost');
});
