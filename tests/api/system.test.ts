/**
 * System information and workers (issue 24 items 2 and 3): `/system-info` tells versions, uptime by the
 * server's clock, the database and its size, the broker, the SIP service, jobs and modules as they are; the
 * workers are the instance's real modules and the job kinds — a stopped job kind is not run until it is
 * started again, a restarted websocket module closes its sockets (1001) and takes new ones, the HTTP module
 * that serves the request and a module another one needs are refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { ManualClock } from '@lintel/server';
import { startTestServer, type TestServer } from '../support/server';
import { admin, failure, tokenOf } from '../support/fixtures';
import { RawSocket } from '../support/ws';

let ts: TestServer;
let api: ApiClient;
const clock = new ManualClock();

beforeAll(async () => {
  ts = await startTestServer({ config: { clock, accessTtlS: 30 * 86400 } });
  api = await admin(ts);
});
afterAll(() => ts?.close());

const worker = async (name: string) =>
  (await getCommand('worker.list').run({ api }, {})).data.find((w) => w.name === name)!;

describe('system information', () => {
  it('tells versions, uptime by the server clock, the database, broker, SIP, jobs and modules', async () => {
    const before = await getCommand('system.info').run({ api }, {});
    expect(before.versions.node).toBe(process.version);
    expect(before.versions.api).toBe('v0');
    expect(before.versions.database).toMatch(/PostgreSQL/);
    expect(before.database.kind).toBe(process.env.DATABASE_URL ? 'postgres' : 'pglite');
    expect(before.database.size_bytes).toBeGreaterThan(1_000_000);
    expect(before.database.pool.max).toBe(process.env.DATABASE_URL ? 10 : 1);
    expect(before.broker).toMatchObject({ kind: 'embedded', running: true, connected: true });
    // the test servers run no SIP server: the status says so, with its reason
    expect(before.sip).toMatchObject({ state: 'down', reason: 'disabled', mode: 'off' });
    expect(before.jobs.running).toBe(true);
    expect(before.modules.map((m) => m.name)).toEqual([
      'events',
      'jobs',
      'devices',
      'access',
      'sip',
      'webhooks',
      'http',
      'websocket',
    ]);
    expect(before.modules.every((m) => m.running)).toBe(true);

    clock.advance(90_000);
    const after = await getCommand('system.info').run({ api }, {});
    expect(after.uptime_s - before.uptime_s).toBe(90);
    expect(after.started_at).toBe(before.started_at);
  });
});

describe('workers', () => {
  it('lists the modules of this instance and every job kind with its jobs', async () => {
    const { data, instance } = await getCommand('worker.list').run({ api }, {});
    const modules = data.filter((w) => w.type === 'module');
    expect(modules.map((w) => w.name)).toEqual([
      'module:events',
      'module:jobs',
      'module:devices',
      'module:access',
      'module:sip',
      'module:webhooks',
      'module:http',
      'module:websocket',
    ]);
    expect(modules.every((m) => m.instance === instance && m.state === 'running')).toBe(true);
    const kinds = data.filter((w) => w.type === 'job').map((w) => w.name);
    for (const k of ['job:mail.send', 'job:events.prune', 'job:device.task', 'job:backup.make'])
      expect(kinds).toContain(k);
    // the day's pruning the jobs module queued at start
    const prune = data.find((w) => w.name === 'job:events.prune')!;
    expect(Object.values(prune.jobs).reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(1);
  });

  it('a stopped job kind is not run, on any instance, until it is started again', async () => {
    const jobs = ts.server.context.jobs;
    await jobs.drain();
    const stopped = await getCommand('worker.stop').run({ api }, { name: 'job:events.prune' });
    expect(stopped.data).toMatchObject({ state: 'stopped', stopped_at: clock.now().toISOString() });
    const id = await jobs.enqueue(
      ts.server.context.db,
      'events.prune',
      {},
      { idempotencyKey: 'workers-test' },
    );
    const state = async () =>
      (await sql<{ state: string }>`select state from jobs where id = ${id}`.execute(ts.server.context.db))
        .rows[0]!.state;
    await jobs.drain();
    expect(await state()).toBe('waiting');
    expect((await getCommand('system.info').run({ api }, {})).jobs.stopped_kinds).toEqual(['events.prune']);

    const started = await getCommand('worker.start').run({ api }, { name: 'job:events.prune' });
    expect(started.data.state).toBe('running');
    await jobs.drain();
    expect(await state()).toBe('done');
  });

  it('restarts the websocket module for real: its sockets close with 1001, new ones are taken', async () => {
    const socket = await RawSocket.open(ts.url, tokenOf(api));
    const restarted = await getCommand('worker.restart').run({ api }, { name: 'module:websocket' });
    expect(restarted.data.state).toBe('running');
    expect((await socket.closed).code).toBe(1001);
    // signed in again: the restarted module serves it
    const again = await RawSocket.signedIn(ts.url, tokenOf(api));
    expect(ts.server.context.sockets.size).toBe(1);
    again.ws.close();
    await again.closed;
  });

  it('stops and starts the jobs module of this instance', async () => {
    expect((await getCommand('worker.stop').run({ api }, { name: 'module:jobs' })).data.state).toBe(
      'stopped',
    );
    expect(ts.server.context.jobs.isStarted).toBe(false);
    expect((await getCommand('system.info').run({ api }, {})).jobs.running).toBe(false);
    expect((await getCommand('worker.start').run({ api }, { name: 'module:jobs' })).data.state).toBe(
      'running',
    );
    expect(ts.server.context.jobs.isStarted).toBe(true);
  });

  it('refuses the HTTP module that serves the request and unknown names; a stopped websocket takes no socket', async () => {
    const http = await failure(getCommand('worker.stop').run({ api }, { name: 'module:http' }));
    expect(http.code).toBe('cant_perform_action');
    expect(http.data).toMatchObject({ reason: 'worker_serves_this_request' });
    expect((await worker('module:http')).controllable).toBe(false);

    // stopped, the websocket module takes no socket: a client is told to try again later (1013)
    expect((await getCommand('worker.stop').run({ api }, { name: 'module:websocket' })).data.state).toBe(
      'stopped',
    );
    const refused = await RawSocket.open(ts.url, tokenOf(api));
    expect((await refused.closed).code).toBe(1013);
    expect((await getCommand('worker.start').run({ api }, { name: 'module:websocket' })).data.state).toBe(
      'running',
    );

    const unknown = await failure(getCommand('worker.stop').run({ api }, { name: 'module:nothing' }));
    expect(unknown.code).toBe('item_not_found');
  });
});
