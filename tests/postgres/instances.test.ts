/**
 * Several server instances on one PostgreSQL database: a job runs exactly once across them, survives the
 * kill -9 of the instance running it, and an event committed on one reaches the other's subscribers once,
 * while one of a rolled-back transaction reaches nobody. Runs in the PostgreSQL pass (DATABASE_URL set).
 */
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { z } from 'zod';
import { ManualClock, RoleChangedEvent, defineJob, type JobRow } from '@lintel/server';
import type { RealtimeMessage } from '../../apps/server/src/realtime/bus';
import { freshDatabase, startTestServer, type TestServer } from '../support/server';

const repoRoot = path.resolve(import.meta.dirname, '../..');
let database: Awaited<ReturnType<typeof freshDatabase>>;
let a: TestServer;
let b: TestServer;
const clockA = new ManualClock();

beforeAll(async () => {
  database = await freshDatabase();
  // the first start migrates and bootstraps the new database
  a = await startTestServer({
    database: database.url,
    config: { jobs: { pollMs: 50, leaseS: 60, concurrency: 2, backoffBaseS: 1, backoffCapS: 60 } },
  });
  b = await startTestServer({
    database: database.url,
    config: { jobs: { pollMs: 50, leaseS: 60, concurrency: 2, backoffBaseS: 1, backoffCapS: 60 } },
  });
});
afterAll(async () => {
  await b?.close();
  await a?.close();
  await database?.drop();
});

const jobRow = async (id: number) =>
  (await sql<JobRow>`select * from jobs where id = ${id}`.execute(a.server.context.db)).rows[0]!;

describe('two instances on one database', () => {
  it('both come up when started at the same moment', async () => {
    const [c, d] = await Promise.all([
      startTestServer({ database: database.url }),
      startTestServer({ database: database.url }),
    ]);
    try {
      expect((await fetch(`${c.url}/api/v0/server`)).status).toBeLessThan(500);
      expect((await fetch(`${d.url}/api/v0/server`)).status).toBeLessThan(500);
    } finally {
      await Promise.all([c.close(), d.close()]);
    }
  });

  it('run each of many jobs exactly once between them', async () => {
    const n = 40;
    const runs = new Map<number, string[]>();
    let resolveAll!: () => void;
    const allDone = new Promise<void>((r) => (resolveAll = r));
    for (const ts of [a, b]) {
      const jobs = ts.server.context.jobs;
      jobs.define(
        defineJob({
          kind: 'test.count',
          payload: z.object({ i: z.number().int() }),
          async run(_ctx, _payload, job) {
            runs.set(job.id, [...(runs.get(job.id) ?? []), jobs.workerId]);
            if (runs.size === n) resolveAll();
          },
        }),
      );
    }
    const ids = await a.server.context.db.transaction().execute(async (trx) => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) out.push(await a.server.context.jobs.enqueue(trx, 'test.count', { i }));
      return out;
    });
    await allDone;
    // the last run has been called; its outcome is written when it returns: wait for both instances' workers
    await Promise.all([a, b].map((ts) => ts.server.context.jobs.idle()));
    // every job finished, and none ran twice
    const rows = await sql<{
      state: string;
      n: number;
    }>`select state, count(*)::int as n from jobs where kind = 'test.count' group by state`.execute(
      a.server.context.db,
    );
    expect(rows.rows).toEqual([{ state: 'done', n }]);
    expect([...runs.keys()].sort((x, y) => x - y)).toEqual(ids);
    expect([...runs.values()].every((w) => w.length === 1)).toBe(true);
    const workers = new Set([...runs.values()].flat());
    for (const w of workers)
      expect([a.server.context.jobs.workerId, b.server.context.jobs.workerId]).toContain(w);
  });

  it('deliver an event committed on one to the subscribers of the other once, and one rolled back to nobody', async () => {
    const seen: Record<'a' | 'b', number[]> = { a: [], b: [] };
    let sentinel!: () => void;
    const sentinelSeen = new Promise<void>((r) => (sentinel = r));
    const offs = (['a', 'b'] as const).map((k) =>
      (k === 'a' ? a : b).server.context.events.subscribe((m: RealtimeMessage) => {
        if (m.data.type !== 'RoleChangedEvent') return;
        seen[k].push(m.data.roleId as number);
        if (k === 'b' && m.data.roleId === 3) sentinel();
      }),
    );
    try {
      const app = a.server.context;
      await app.outbox.unit(async () => {
        await app.db
          .transaction()
          .execute((trx) => app.outbox.emit(trx, RoleChangedEvent, { roleId: 1, projectId: 1 }));
        await app.db
          .transaction()
          .execute(async (trx) => {
            await app.outbox.emit(trx, RoleChangedEvent, { roleId: 2, projectId: 1 });
            throw new Error('rollback');
          })
          .catch(() => undefined);
        // committed after the others: once the other instance has it, it has had every earlier notification
        await app.db
          .transaction()
          .execute((trx) => app.outbox.emit(trx, RoleChangedEvent, { roleId: 3, projectId: 1 }));
      });
      await sentinelSeen;
      expect(seen.b).toEqual([1, 3]);
      expect(seen.a).toEqual([1, 3]);
    } finally {
      for (const off of offs) off();
    }
  });

  it('deliver many events of one transaction to the other instance in the order they were emitted', async () => {
    const n = 60;
    const seen: number[] = [];
    let all!: () => void;
    const allSeen = new Promise<void>((r) => (all = r));
    const off = b.server.context.events.subscribe((m: RealtimeMessage) => {
      if (m.data.type !== 'RoleChangedEvent' || (m.data.roleId as number) < 1000) return;
      seen.push(m.data.roleId as number);
      if (seen.length === n) all();
    });
    try {
      const app = a.server.context;
      await app.outbox.unit(() =>
        app.db.transaction().execute(async (trx) => {
          for (let i = 0; i < n; i++)
            await app.outbox.emit(trx, RoleChangedEvent, { roleId: 1000 + i, projectId: 1 });
        }),
      );
      await allSeen;
      expect(seen).toEqual(Array.from({ length: n }, (_, i) => 1000 + i));
    } finally {
      off();
    }
  });
});

describe('the callers each instance remembers', () => {
  it('are forgotten on both when a session ends on one', async () => {
    const login = await fetch(`${a.url}/api/v0/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ login: a.adminLogin, password: a.adminPassword }),
    });
    const token = ((await login.json()) as { sessions: { token: string }[] }).sessions[0]!.token;
    const on = (ts: TestServer, path = '/users') =>
      fetch(`${ts.url}/api/v0${path}`, {
        method: path === '/logout' ? 'POST' : 'GET',
        headers: { authorization: `Bearer ${token}` },
      }).then((r) => r.status);
    // both remember the caller
    expect(await on(a)).toBe(200);
    expect(await on(b)).toBe(200);
    expect(await on(b)).toBe(200);
    expect(b.server.context.authCache.size).toBeGreaterThan(0);
    expect(await on(a, '/logout')).toBeLessThan(300);
    expect(await on(a)).toBe(401);
    await expect.poll(() => on(b)).toBe(401);
  });
});

describe('a job whose instance is killed', () => {
  let child: ChildProcess | null = null;
  afterAll(() => {
    child?.kill('SIGKILL');
  });

  it('is taken over by another instance once its lease ran out, and runs to the end there', async () => {
    // the workers of a and b stand aside; c has no worker of its own (it drains by hand) and a clock the test moves
    await a.server.context.jobs.stop();
    await b.server.context.jobs.stop();
    const c = await startTestServer({
      database: database.url,
      config: { clock: clockA, modules: ['events', 'http'] },
    });
    try {
      const jobs = c.server.context.jobs;
      let finishedOnC = 0;
      jobs.define(
        defineJob({ kind: 'test.block', payload: z.object({}), run: async () => void finishedOnC++ }),
      );

      child = spawn(
        path.join(repoRoot, 'node_modules/.bin/vite-node'),
        [path.join(repoRoot, 'tests/support/job-child.ts')],
        {
          cwd: repoRoot,
          env: { ...process.env, CHILD_DATABASE_URL: database.url },
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      const lines: string[] = [];
      const waitFor = (prefix: string) =>
        new Promise<string>((resolve, reject) => {
          const check = () => {
            const line = lines.find((l) => l.startsWith(prefix));
            if (line) resolve(line);
          };
          child!.stdout!.on('data', (chunk: Buffer) => {
            lines.push(...chunk.toString().split('\n').filter(Boolean));
            check();
          });
          child!.once('exit', (code) =>
            reject(new Error(`the child instance exited (${code}) before "${prefix}"`)),
          );
          check();
        });
      await waitFor('ready');
      const id = await jobs.enqueue(c.server.context.db, 'test.block', {});
      const claimed = await waitFor(`claimed ${id} `);
      const childWorker = claimed.split(' ')[2]!;
      expect(await jobRow(id)).toMatchObject({ state: 'running', attempts: 1, locked_by: childWorker });

      // while the lease holds, nobody else takes it
      expect(await jobs.drain()).toBe(0);
      const exited = new Promise((r) => child!.once('exit', r));
      child.kill('SIGKILL');
      await exited;
      child = null;
      expect(await jobs.drain()).toBe(0);

      // the lease runs out (by the clock): the job is claimable again and finishes here
      const lease = (await jobRow(id)).locked_until!;
      clockA.set(lease.getTime() + 1000);
      expect(await jobs.drain()).toBe(1);
      expect(finishedOnC).toBe(1);
      expect(await jobRow(id)).toMatchObject({ state: 'done', attempts: 2, locked_by: null });
    } finally {
      await c.close();
    }
  });
});
