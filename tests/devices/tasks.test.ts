/**
 * Device tasks against the real gateway (the embedded broker) and the simulator as the device: a settings
 * change completes only on the device's acknowledgement; a task to an offline device waits and is sent when
 * it comes online; a device that does not answer is retried with back-off (the server's clock moved) and the
 * task ends in `error` with the catalogue code; a device killed mid-task and started again applied the task
 * exactly once. The job worker does not run (`modules` without `jobs`): `jobs.drain()` sends what is due.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { getCommand, type DeviceTask } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { AppError, ManualClock, backoffS, resumeWaiting, type JobRow } from '@lintel/server';
import { SimulatedDevice } from '@lintel/device-sim';
import { startTestServer, type TestServer } from '../support/server';
import { admin, rootGroup, uid, userWith } from '../support/fixtures';
import { until } from './mqtt-clients';

const clock = new ManualClock();
let ts: TestServer;
let api: ApiClient;
let root: number;
const sims: SimulatedDevice[] = [];
/** the task events the server published, as the websocket gets them */
const events: Record<string, unknown>[] = [];

beforeAll(async () => {
  ts = await startTestServer({
    config: {
      clock,
      modules: ['events', 'devices', 'http'],
      mqtt: { port: 0, host: '127.0.0.1', shared: false, requestTimeoutMs: 300, sweepMs: 0, taskAttempts: 4 },
    },
  });
  ts.server.context.events.subscribe((m) => {
    if (m.data.type === 'DeviceTaskChangedEvent') events.push(m.data);
  });
  api = await admin(ts);
  root = await rootGroup(api);
});
afterAll(async () => {
  await Promise.all(sims.map((s) => s.stop().catch(() => undefined)));
  await ts?.close();
});

/** A device registered on mqtt and its simulator (not started). */
async function register() {
  const serial = `TASK-${uid()}`;
  const { data } = await getCommand('device.create').run(
    { api },
    { name: `Panel ${serial}`, type: 'panel', serial_number: serial, domain_id: root, protocol: 'mqtt' },
  );
  const c = await getCommand('device.credentials').run({ api }, { id: data.id });
  const sim = new SimulatedDevice({
    serial,
    management: { protocol: 'mqtt', url: c.mqtt.url, login: c.login, password: c.password },
    heartbeatMs: 0,
  });
  sims.push(sim);
  return { id: data.id, serial, sim };
}

const statusOf = async (id: number) => (await getCommand('device.get').run({ api }, { id })).status;

async function online(d: { id: number; sim: SimulatedDevice }) {
  await d.sim.start();
  await until(async () => (await statusOf(d.id)) === 'online');
}

async function tasksOf(deviceId: number): Promise<DeviceTask[]> {
  return (await getCommand('device.tasks').run({ api }, { device_id: deviceId })).data;
}
const taskOf = async (id: number) => (await tasksOf((await taskRow(id)).device_id)).find((t) => t.id === id)!;
const taskRow = async (id: number) =>
  (
    await sql<{
      device_id: number;
    }>`select device_id from device_tasks where id = ${id}`.execute(ts.server.context.db)
  ).rows[0]!;
const jobOf = async (taskId: number) =>
  (
    await sql<JobRow>`select * from jobs where kind = 'device.task' and payload->>'taskId' = ${String(taskId)}
      order by id desc`.execute(ts.server.context.db)
  ).rows[0]!;
const statesOf = (taskId: number) => events.filter((e) => e.taskId === taskId).map((e) => e.state);

/** Runs what is due now (each job a unit of work: its events are delivered as it ends). */
const drain = () => ts.server.context.jobs.drain();

describe('device tasks', () => {
  it('a settings change is a task completed only when the device acknowledges it', async () => {
    const d = await register();
    await online(d);
    // the device takes the request but does not answer: not completed
    d.sim.fault = 'silent';
    await getCommand('device.update').run(
      { api },
      { id: d.id, device_settings: { sip: { talk_timeout: 45 } } },
    );
    const [task] = await tasksOf(d.id);
    expect(task).toMatchObject({ kind: 'settings', state: 'queued', attempts: 0 });
    expect(await drain()).toBe(1);
    expect(await taskOf(task!.id)).toMatchObject({
      state: 'queued',
      attempts: 1,
      error: 'device_not_available',
    });
    expect(d.sim.requests.filter((r) => r.uri === '/api/v1/settings')).toHaveLength(1);
    expect(d.sim.applied.settings).toBe(0);

    // it answers now: the next attempt, after the back-off, completes the task
    d.sim.fault = 'none';
    expect(await drain()).toBe(0);
    clock.advance(backoffS(ts.server.context.jobs.settings, 1) * 1000);
    expect(await drain()).toBe(1);
    expect(await taskOf(task!.id)).toMatchObject({ state: 'completed', attempts: 2, error: null });
    expect(d.sim.applied.settings).toBe(1);
    expect(d.sim.settings).toMatchObject({ sip: { talk_timeout: 45, transport: 'UDP' } });
    // every send carried the task's request id
    expect(
      new Set(d.sim.requests.filter((r) => r.uri === '/api/v1/settings').map((r) => r.request_id)),
    ).toEqual(new Set([`task-${task!.id}`]));
    await until(async () => statesOf(task!.id).includes('completed'));
    expect(statesOf(task!.id)).toEqual(['new', 'queued', 'started', 'queued', 'started', 'completed']);
  });

  it('a task to an offline device waits, and is sent when the device comes online', async () => {
    const d = await register();
    const { task } = await getCommand('device.restart').run({ api }, { id: d.id });
    expect(task).toMatchObject({ kind: 'restart', state: 'waiting', attempts: 0 });
    // nothing to send while it is offline
    expect(await drain()).toBe(0);
    await online(d);
    expect((await taskOf(task.id)).state).toBe('queued');
    expect(await drain()).toBe(1);
    expect(await taskOf(task.id)).toMatchObject({ state: 'completed', attempts: 1 });
    expect(d.sim.applied.restart).toBe(1);
  });

  it('a device that does not answer: retried with back-off, then error with the catalogue code', async () => {
    // who the device's group names for failed tasks is told; who it names only for offline devices is not
    const told = await userWith(ts, api, { permissions: [], domains: [root] });
    const offlineOnly = await userWith(ts, api, { permissions: [], domains: [root] });
    await getCommand('group.update').run(
      { api },
      {
        id: root,
        device_status_notify: [
          { user_id: told.id, notify_about_offline_device: false, notify_about_device_task_failed: true },
          {
            user_id: offlineOnly.id,
            notify_about_offline_device: true,
            notify_about_device_task_failed: false,
          },
        ],
      },
    );
    const failedNotices = async (u: typeof told) =>
      (await getCommand('notification.unread').run({ api: await u.client() }, {})).data.filter(
        (n) => n.type === 'device_task_failed',
      );
    const d = await register();
    await online(d);
    d.sim.fault = 'silent';
    const { task } = await getCommand('device.reinit').run({ api }, { id: d.id });
    const settings = ts.server.context.jobs.settings;
    expect(await drain()).toBe(1);
    for (let attempt = 1; attempt < 4; attempt++) {
      expect(await taskOf(task.id)).toMatchObject({ state: 'queued', attempts: attempt });
      // not before its back-off has passed
      clock.advance(backoffS(settings, attempt) * 1000 - 1000);
      expect(await drain()).toBe(0);
      clock.advance(1000);
      expect(await drain()).toBe(1);
    }
    expect(await taskOf(task.id)).toMatchObject({
      state: 'error',
      attempts: 4,
      error: 'device_not_available',
    });
    expect(await jobOf(task.id)).toMatchObject({ state: 'failed', attempts: 4 });
    expect(d.sim.requests.filter((r) => r.uri === '/api/v1/settings')).toHaveLength(4);
    expect(d.sim.applied.reinit).toBe(0);
    await until(async () => statesOf(task.id).at(-1) === 'error');
    const notices = await failedNotices(told);
    expect(notices).toHaveLength(1);
    expect(notices[0]!.data).toMatchObject({
      device: { id: d.id, serial_number: d.serial },
      status: 'reinit: device_not_available',
      has_error: true,
    });
    expect(await failedNotices(offlineOnly)).toEqual([]);

    // restarting the queue sends it again; the device answers now
    d.sim.fault = 'none';
    const retried = await getCommand('device.task_retry').run({ api }, { id: task.id });
    expect(retried.task).toMatchObject({ state: 'queued', error: null });
    expect(await drain()).toBe(1);
    expect(await taskOf(task.id)).toMatchObject({ state: 'completed' });
    expect(d.sim.applied.reinit).toBe(1);
  });

  it('a device that comes back while its task waits out a back-off: the task is sent at once', async () => {
    const d = await register();
    await online(d);
    d.sim.fault = 'silent';
    const { task } = await getCommand('device.reinit').run({ api }, { id: d.id });
    expect(await drain()).toBe(1);
    expect(await taskOf(task.id)).toMatchObject({ state: 'queued', attempts: 1 });
    // nothing is due before the back-off's end
    expect(await drain()).toBe(0);
    // the panel restarts and says it is online: the clock has not moved, and the task goes now
    d.sim.fault = 'none';
    await d.sim.stop();
    await online(d);
    await until(async () => (await jobOf(task.id)).run_at.getTime() <= clock.now().getTime());
    expect(await drain()).toBe(1);
    expect(await taskOf(task.id)).toMatchObject({ state: 'completed', attempts: 2 });
    expect(d.sim.applied.reinit).toBe(1);
  });

  it('a task that found no broker as the platform reconnected goes on: it does not wait for a reconnection past', async () => {
    const d = await register();
    await online(d);
    const gateway = ts.server.context.devices;
    const request = gateway.request.bind(gateway);
    // a restarted server's interleaving: the attempt finds no broker yet; before it records that it waits for
    // one, the platform connects and resumes what was waiting (not this task: it is not waiting yet)
    let first = true;
    gateway.request = async (...args) => {
      if (!first) return request(...args);
      first = false;
      await resumeWaiting(ts.server.context);
      throw new AppError('device_not_available', { reason: 'broker' });
    };
    try {
      const { task } = await getCommand('device.reinit').run({ api }, { id: d.id });
      // the attempt, then (the broker is there) the task queued again at once and sent
      await drain();
      await drain();
      expect(await taskOf(task.id)).toMatchObject({ state: 'completed' });
      expect(d.sim.applied.reinit).toBe(1);
    } finally {
      gateway.request = request;
    }
  });

  it('a device killed mid-task and started again: the task completes, applied exactly once', async () => {
    const d = await register();
    await online(d);
    // it applies the restart, then dies before its reply leaves
    d.sim.fault = 'mute';
    const { task } = await getCommand('device.restart').run({ api }, { id: d.id });
    expect(await drain()).toBe(1);
    expect(d.sim.applied.restart).toBe(1);
    expect((await taskOf(task.id)).state).toBe('queued');
    await d.sim.kill();
    await until(async () => (await statusOf(d.id)) === 'offline');
    // the retry finds it offline: the task waits for it
    clock.advance(backoffS(ts.server.context.jobs.settings, 1) * 1000);
    expect(await drain()).toBe(1);
    expect((await taskOf(task.id)).state).toBe('waiting');

    d.sim.fault = 'none';
    await online(d);
    expect(await drain()).toBe(1);
    expect(await taskOf(task.id)).toMatchObject({ state: 'completed', attempts: 2 });
    // it got the request twice, with one request id, and restarted once
    const sent = d.sim.requests.filter((r) => r.uri === '/api/v1/system/reboot/run');
    expect(sent.map((r) => r.request_id)).toEqual([`task-${task.id}`, `task-${task.id}`]);
    expect(d.sim.applied.restart).toBe(1);
  });

  it("a device's tasks go one at a time, in order; a stopped one is not sent", async () => {
    const d = await register();
    const first = (await getCommand('device.restart').run({ api }, { id: d.id })).task;
    const second = (await getCommand('device.apply_settings').run({ api }, { id: d.id })).task;
    const third = (await getCommand('device.restart').run({ api }, { id: d.id })).task;
    expect([first.state, second.state, third.state]).toEqual(['waiting', 'waiting', 'waiting']);
    await getCommand('device.task_stop').run({ api }, { id: third.id });
    await online(d);
    expect((await tasksOf(d.id)).map((t) => [t.id, t.state])).toEqual([
      [third.id, 'stopped'],
      [second.id, 'new'],
      [first.id, 'queued'],
    ]);
    expect(await drain()).toBe(2);
    expect((await tasksOf(d.id)).map((t) => t.state)).toEqual(['stopped', 'completed', 'completed']);
    expect(d.sim.requests.map((r) => r.uri)).toEqual(['/api/v1/system/reboot/run', '/api/v1/settings']);
    expect(d.sim.applied).toMatchObject({ restart: 1, settings: 1 });
  });

  it('a device on HTTP: the request id goes as X-Request-Id, and a lost reply does not apply it twice', async () => {
    const sim = new SimulatedDevice({
      serial: `TASKH-${uid()}`,
      management: { protocol: 'http', url: '', login: '', password: '' },
      heartbeatMs: 0,
    });
    sims.push(sim);
    await sim.start();
    const { data } = await getCommand('device.create').run(
      { api },
      {
        name: `Http ${sim.serial}`,
        type: 'panel',
        serial_number: sim.serial,
        domain_id: root,
        protocol: 'http',
        ip_address: '127.0.0.1',
        port: sim.httpPort,
      },
    );
    const c = await getCommand('device.credentials').run({ api }, { id: data.id });
    Object.assign(sim.opts, {
      management: { protocol: 'http', url: c.http_url, login: c.login, password: c.password },
    });
    await sim.heartbeat();
    expect(await statusOf(data.id)).toBe('online');
    // it applies the settings, and its reply is lost
    sim.fault = 'mute';
    const { task } = await getCommand('device.apply_settings').run({ api }, { id: data.id });
    expect(await drain()).toBe(1);
    expect(await taskOf(task.id)).toMatchObject({ state: 'queued', error: 'device_not_available' });
    expect(sim.applied.settings).toBe(1);
    sim.fault = 'none';
    clock.advance(backoffS(ts.server.context.jobs.settings, 1) * 1000);
    expect(await drain()).toBe(1);
    expect(await taskOf(task.id)).toMatchObject({ state: 'completed', attempts: 2 });
    expect(sim.applied.settings).toBe(1);
  });

  it('tasks of an unknown device or task are item_not_found', async () => {
    await expect(getCommand('device.restart').run({ api }, { id: 999_999 })).rejects.toMatchObject({
      code: 'item_not_found',
    });
    await expect(getCommand('device.task_stop').run({ api }, { id: 999_999 })).rejects.toMatchObject({
      code: 'item_not_found',
    });
  });
});
