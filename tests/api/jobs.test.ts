/**
 * The server's spine on one instance: durable jobs (back-off moved by the clock, idempotency), the one
 * dispatch pipeline called by a non-HTTP principal, the result-schema check, typed events that go out only
 * when their transaction commits, and time that tests move instead of sleeping.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { z } from 'zod';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import {
  ManualClock,
  ResultShapeError,
  RoleChangedEvent,
  backoffS,
  defineJob,
  dispatch,
  jobPrincipal,
  type JobRow,
} from '@lintel/server';
import { startTestServer, type TestServer } from '../support/server';
import { admin, tokenOf, uid, userWith } from '../support/fixtures';

const clock = new ManualClock();
let ts: TestServer;
let api: ApiClient;

beforeAll(async () => {
  // the worker is not started (no `jobs` module): each test runs due jobs itself with drain()
  // a lease of 1 s: a running job extends it every third of a second (real time; the clock is the test's)
  ts = await startTestServer({
    config: {
      clock,
      modules: ['events', 'http'],
      jobs: { pollMs: 1000, leaseS: 1, concurrency: 2, backoffBaseS: 10, backoffCapS: 3600 },
    },
  });
  api = await admin(ts);
});
afterAll(async () => {
  await ts?.close();
});

const jobRow = async (id: number) =>
  (await sql<JobRow>`select * from jobs where id = ${id}`.execute(ts.server.context.db)).rows[0]!;

describe('jobs', () => {
  it('retries a failing job with exponential back-off, by the clock, until it succeeds', async () => {
    const { jobs } = ts.server.context;
    const seen: number[] = [];
    jobs.define(
      defineJob({
        kind: 'test.flaky',
        payload: z.object({ n: z.number() }),
        async run(_ctx, _payload, job) {
          seen.push(job.attempts);
          if (job.attempts < 3) throw new Error(`failure ${job.attempts}`);
        },
      }),
    );
    const id = await jobs.enqueue(ts.server.context.db, 'test.flaky', { n: 1 });
    expect(await jobs.drain()).toBe(1);
    let row = await jobRow(id);
    expect(row).toMatchObject({ state: 'waiting', attempts: 1, last_error: 'failure 1' });
    const first = backoffS(jobs.settings, 1);
    expect(row.run_at.getTime()).toBe(clock.now().getTime() + first * 1000);

    // not due yet: nothing runs until the clock reaches run_at
    clock.advance(first * 1000 - 1000);
    expect(await jobs.drain()).toBe(0);
    clock.advance(1000);
    expect(await jobs.drain()).toBe(1);
    row = await jobRow(id);
    expect(row).toMatchObject({ state: 'waiting', attempts: 2, last_error: 'failure 2' });
    // the second wait is twice the first
    expect(row.run_at.getTime() - clock.now().getTime()).toBe(2 * first * 1000);

    clock.advance(2 * first * 1000);
    expect(await jobs.drain()).toBe(1);
    expect(await jobRow(id)).toMatchObject({ state: 'done', attempts: 3, last_error: null });
    expect(seen).toEqual([1, 2, 3]);
  });

  it('gives up after max_attempts and keeps the last error', async () => {
    const { jobs, db } = ts.server.context;
    jobs.define(
      defineJob({
        kind: 'test.broken',
        payload: z.object({}),
        run: () => Promise.reject(new Error('always')),
      }),
    );
    const id = await jobs.enqueue(db, 'test.broken', {}, { maxAttempts: 2 });
    expect(await jobs.drain()).toBe(1);
    clock.advance(backoffS(jobs.settings, 1) * 1000);
    expect(await jobs.drain()).toBe(1);
    expect(await jobRow(id)).toMatchObject({ state: 'failed', attempts: 2, last_error: 'always' });
    clock.advance(24 * 3600 * 1000);
    expect(await jobs.drain()).toBe(0);
  });

  it('makes one job of two enqueues with the same idempotency key', async () => {
    const { jobs, db } = ts.server.context;
    let runs = 0;
    jobs.define(defineJob({ kind: 'test.once', payload: z.object({}), run: async () => void runs++ }));
    const key = `k-${uid()}`;
    const a = await jobs.enqueue(db, 'test.once', {}, { idempotencyKey: key });
    const b = await jobs.enqueue(db, 'test.once', {}, { idempotencyKey: key });
    expect(b).toBe(a);
    expect(await jobs.drain()).toBe(1);
    expect(runs).toBe(1);
  });

  it('enqueued in a transaction that rolls back, a job never exists', async () => {
    const { jobs, db } = ts.server.context;
    let runs = 0;
    jobs.define(defineJob({ kind: 'test.rolledback', payload: z.object({}), run: async () => void runs++ }));
    await expect(
      db.transaction().execute(async (trx) => {
        await jobs.enqueue(trx, 'test.rolledback', {});
        throw new Error('rollback');
      }),
    ).rejects.toThrow('rollback');
    expect(await jobs.drain()).toBe(0);
    expect(runs).toBe(0);
  });

  it('gives a free worker to the kind running the fewest jobs: a flood of one kind does not starve another', async () => {
    const { jobs, db } = ts.server.context;
    expect(await jobs.drain()).toBe(0);
    for (const kind of ['test.flood', 'test.lone'])
      jobs.define(defineJob({ kind, payload: z.object({ n: z.number() }), run: async () => undefined }));
    // a backlog of one kind (a webhook whose endpoint is slow), then one job of another kind (a backup)
    const flood: number[] = [];
    for (let n = 0; n < 20; n++) flood.push(await jobs.enqueue(db, 'test.flood', { n }));
    clock.advance(1000);
    const lone = await jobs.enqueue(db, 'test.lone', { n: 0 });
    // the first free worker takes the oldest job; the next one, while that still runs, the other kind's
    const [first] = await jobs.claim(1);
    expect(first!.id).toBe(flood[0]);
    const [second] = await jobs.claim(1);
    expect(second!.id).toBe(lone);
    // every claimed job runs to its end; the rest of the flood follows
    await jobs.run(first!);
    await jobs.run(second!);
    expect(await jobs.drain()).toBe(19);
  });

  it('extends the lease of a job while it runs, so a job outliving its lease is not taken over', async () => {
    const { jobs, db } = ts.server.context;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    jobs.define(defineJob({ kind: 'test.long', payload: z.object({}), run: () => gate }));
    const id = await jobs.enqueue(db, 'test.long', {});
    const [job] = await jobs.claim(1);
    expect(job!.id).toBe(id);
    const running = jobs.run(job!);
    // the clock passes the 1 s lease by far; the running job renews it from the clock's new time
    clock.advance(60_000);
    // renewed every third of a second: bounded generously, as a loaded machine delays timers
    for (
      const end = Date.now() + 20_000;
      (await jobRow(id)).locked_until!.getTime() <= clock.now().getTime();
    ) {
      if (Date.now() > end) throw new Error('the lease was never extended');
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(await jobs.claim(1)).toEqual([]);
    release();
    await running;
    expect(await jobRow(id)).toMatchObject({ state: 'done', attempts: 1 });
  });

  it("drains a job this instance's own worker claimed first: drain() returns once its outcome is recorded", async () => {
    const { jobs, db } = ts.server.context;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let claimed!: () => void;
    const inWorker = new Promise<void>((r) => (claimed = r));
    let finished = false;
    jobs.define(
      defineJob({
        kind: 'test.held',
        payload: z.object({}),
        async run() {
          claimed();
          await gate;
          // the job's own writes take a round trip after the gate opens
          await sql`select 1`.execute(db);
          finished = true;
        },
      }),
    );
    // the gate opens when a claim while draining finds nothing: the job is then the worker's, not drain's
    let draining = false;
    const claim = jobs.claim.bind(jobs);
    jobs.claim = async (n: number) => {
      const rows = await claim(n);
      if (draining && rows.length === 0) release();
      return rows;
    };
    await jobs.start();
    try {
      const id = await jobs.enqueue(db, 'test.held', {});
      await inWorker;
      draining = true;
      await jobs.drain();
      expect(finished).toBe(true);
      expect(await jobRow(id)).toMatchObject({ state: 'done' });
    } finally {
      release();
      await jobs.stop();
      jobs.claim = claim;
    }
  });
});

describe('the dispatch pipeline', () => {
  it('runs a job kind through dispatch as the job principal, with the gates of the user it acts for', async () => {
    const { jobs, db } = ts.server.context;
    const root = (
      await db
        .selectFrom('domains')
        .select('id')
        .where('parent_id', 'is', null)
        .orderBy('id')
        .executeTakeFirstOrThrow()
    ).id;
    const holder = await userWith(ts, api, { permissions: ['markers.view'], domains: [root] });
    const adminId = (
      await db
        .selectFrom('users')
        .innerJoin('accounts', 'accounts.id', 'users.account_id')
        .select('users.id')
        .where('accounts.login', '=', ts.adminLogin)
        .executeTakeFirstOrThrow()
    ).id;
    const ran: string[] = [];
    // a job acting for a user, gated like the command it runs, which it dispatches as its own principal
    const MarkerJob = defineJob({
      kind: 'test.marker',
      payload: z.object({ userId: z.number().int(), name: z.string() }),
      actor: (p) => p.userId,
      gates: { anyPermission: ['markers.create'] },
      async run(ctx, { name }) {
        ran.push(name);
        expect(ctx.principal.kind).toBe('job');
        await dispatch(ctx.app, getCommand('marker.create'), { name, color: '#123456' }, ctx.principal);
      },
    });
    jobs.define(MarkerJob);
    const name = `Job ${uid()}`;
    const ok = await jobs.enqueue(db, MarkerJob, { userId: adminId, name });
    const refused = await jobs.enqueue(db, MarkerJob, { userId: holder.id, name: `${name} refused` });
    expect(await jobs.drain()).toBe(2);
    expect(ran).toEqual([name]);
    expect(await jobRow(ok)).toMatchObject({ state: 'done' });
    // refused by the gates before its handler ran: failed at once, not retried
    expect(await jobRow(refused)).toMatchObject({
      state: 'failed',
      attempts: 1,
      last_error: 'refused: method_prohibited',
    });
    const list = (await getCommand('marker.list').run({ api }, { search: name })) as {
      data: Array<{ name: string }>;
    };
    expect(list.data.map((m) => m.name)).toEqual([name]);
  });

  it("refuses a job's handler when its user lost the permission after it was queued", async () => {
    const { jobs, db } = ts.server.context;
    const root = (
      await db
        .selectFrom('domains')
        .select('id')
        .where('parent_id', 'is', null)
        .orderBy('id')
        .executeTakeFirstOrThrow()
    ).id;
    const user = await userWith(ts, api, {
      permissions: ['markers.view', 'markers.create'],
      domains: [root],
    });
    const ran: number[] = [];
    const CountJob = defineJob({
      kind: 'test.gated-count',
      payload: z.object({ userId: z.number().int(), n: z.number().int() }),
      actor: (p) => p.userId,
      gates: { anyPermission: ['markers.create'] },
      run: async (_ctx, { n }) => void ran.push(n),
    });
    jobs.define(CountJob);
    // allowed while the user holds the permission
    await jobs.enqueue(db, CountJob, { userId: user.id, n: 1 });
    expect(await jobs.drain()).toBe(1);
    expect(ran).toEqual([1]);
    // queued, then the user's role loses the permission before the job runs
    const id = await jobs.enqueue(db, CountJob, { userId: user.id, n: 2 });
    await getCommand('role.update').run({ api }, { id: user.roleId, permissions: ['markers.view'] });
    expect(await jobs.drain()).toBe(1);
    expect(ran).toEqual([1]);
    expect(await jobRow(id)).toMatchObject({ state: 'failed', last_error: 'refused: method_prohibited' });
  });

  it('checks a job payload against its kind when it is queued and when it runs', async () => {
    const { jobs, db } = ts.server.context;
    const ran: number[] = [];
    const Typed = defineJob({
      kind: 'test.typed',
      payload: z.object({ taskId: z.number().int() }),
      run: async (_ctx, { taskId }) => void ran.push(taskId),
    });
    jobs.define(Typed);
    await expect(jobs.enqueue(db, Typed, { taskId: 'seven' } as never)).rejects.toThrow(/payload/);
    // a row written by other means (an older version's payload) is refused when it runs, never half-run
    const bad = (
      await sql<{ id: number }>`insert into jobs (kind, payload, run_at, max_attempts, created_at, updated_at)
        values ('test.typed', '{"taskId":"seven"}'::jsonb, ${clock.now()}, 5, ${clock.now()}, ${clock.now()})
        returning id`.execute(db)
    ).rows[0]!.id;
    await jobs.enqueue(db, Typed, { taskId: 7 });
    expect(await jobs.drain()).toBe(2);
    expect(ran).toEqual([7]);
    expect(await jobRow(Number(bad))).toMatchObject({ state: 'failed', attempts: 1 });
    expect((await jobRow(Number(bad))).last_error).toMatch(/^refused: check_fields_data/);
  });

  it('refuses a session command to a principal with no identity', async () => {
    await expect(
      dispatch(ts.server.context, getCommand('marker.list'), {}, jobPrincipal(0, null)),
    ).rejects.toThrow('unauthenticated');
  });

  it('catches a handler whose result does not match its command', async () => {
    const app = ts.server.context;
    const info = getCommand('server.info');
    // the real handler, checked against a result schema it does not satisfy
    const strict = { ...info, result: z.object({ no_such_field: z.string() }) };
    await expect(dispatch(app, strict, {}, { kind: 'anonymous' })).rejects.toBeInstanceOf(ResultShapeError);
    await expect(dispatch(app, info, {}, { kind: 'anonymous' })).resolves.toBeTruthy();
    expect(app.config.checkResults).toBe(true);
  });
});

describe('typed events', () => {
  it('are delivered when their transaction commits, and never when it rolls back', async () => {
    const app = ts.server.context;
    const got: number[] = [];
    const off = app.events.subscribe((m) => {
      if (m.data.type === 'RoleChangedEvent') got.push(m.data.roleId as number);
    });
    try {
      await app.outbox.unit(async () => {
        await app.db
          .transaction()
          .execute((trx) => app.outbox.emit(trx, RoleChangedEvent, { roleId: 900001, projectId: 1 }));
        await app.db
          .transaction()
          .execute(async (trx) => {
            await app.outbox.emit(trx, RoleChangedEvent, { roleId: 900002, projectId: 1 });
            throw new Error('rollback');
          })
          .catch(() => undefined);
      });
      expect(got).toEqual([900001]);
      // a second flush sends nothing again
      await app.outbox.flush();
      expect(got).toEqual([900001]);
    } finally {
      off();
    }
  });

  it('emitted by a job, are delivered when the job ends, if its transaction committed', async () => {
    const app = ts.server.context;
    const got: number[] = [];
    const off = app.events.subscribe((m) => {
      if (m.data.type === 'RoleChangedEvent') got.push(m.data.roleId as number);
    });
    try {
      app.jobs.define(
        defineJob({
          kind: 'test.emit',
          payload: z.object({ roleId: z.number().int() }),
          async run(_ctx, { roleId }) {
            await app.db
              .transaction()
              .execute((trx) => app.outbox.emit(trx, RoleChangedEvent, { roleId, projectId: 1 }));
          },
        }),
      );
      app.jobs.define(
        defineJob({
          kind: 'test.emit-rollback',
          payload: z.object({}),
          async run() {
            await app.db.transaction().execute(async (trx) => {
              await app.outbox.emit(trx, RoleChangedEvent, { roleId: 900013, projectId: 1 });
              throw new Error('rolled back');
            });
          },
          maxAttempts: 1,
        }),
      );
      await app.jobs.enqueue(app.db, 'test.emit', { roleId: 900011 });
      await app.jobs.enqueue(app.db, 'test.emit-rollback', {});
      expect(got).toEqual([]);
      expect(await app.jobs.drain()).toBe(2);
      expect(got).toEqual([900011]);
    } finally {
      off();
    }
  });

  it('refuses a payload that does not match the declaration', async () => {
    const app = ts.server.context;
    await expect(app.outbox.emit(app.db, RoleChangedEvent, { roleId: 'x' } as never)).rejects.toThrow();
  });
});

describe('the clock', () => {
  it('expires an access token when the server clock passes its lifetime, without waiting', async () => {
    const token = tokenOf(await admin(ts));
    const profile = () =>
      fetch(`${ts.url}/api/v0/profile`, { headers: { authorization: `Bearer ${token}` } });
    clock.advance((ts.server.context.config.accessTtlS - 1) * 1000);
    expect((await profile()).status).toBe(200);
    clock.advance(1000);
    expect((await profile()).status).toBe(401);
  });
});
