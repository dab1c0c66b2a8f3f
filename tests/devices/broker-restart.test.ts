/**
 * A fault of issue 16's done-when: the broker restarted. A Mosquitto of the test's own (the Debian binary, on a
 * free port, no persistence: a restart forgets every session and subscription) carries the platform and a
 * simulated panel. Killed while a task is due, the task is not lost, not reported done, and spends no retry
 * on the outage: it goes to `waiting`; once the broker is back, the platform and the device reconnect by
 * themselves, the platform queues what waited, the task completes on the device's acknowledgement, and the
 * device applied it exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand, type DeviceTask } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { ManualClock } from '@lintel/server';
import { SimulatedDevice } from '@lintel/device-sim';
import { startTestServer, type TestServer } from '../support/server';
import { admin, rootGroup, uid } from '../support/fixtures';
import { PrivateMosquitto, until } from './mqtt-clients';

const clock = new ManualClock();
const broker = new PrivateMosquitto(['allow_anonymous true', 'persistence false']);
let ts: TestServer;
let api: ApiClient;
let sim: SimulatedDevice | null = null;

beforeAll(async () => {
  await broker.start();
  ts = await startTestServer({
    config: {
      clock,
      modules: ['events', 'devices', 'http'],
      mqtt: {
        url: broker.url,
        shared: true,
        port: 0,
        host: '127.0.0.1',
        requestTimeoutMs: 300,
        sweepMs: 0,
        taskAttempts: 6,
      },
    },
  });
  api = await admin(ts);
}, 60_000);
afterAll(async () => {
  await sim?.stop().catch(() => undefined);
  await ts?.close();
  await broker.dispose();
});

const statusOf = async (id: number) => (await getCommand('device.get').run({ api }, { id })).status;
const taskOf = async (deviceId: number, id: number): Promise<DeviceTask> =>
  (await getCommand('device.tasks').run({ api }, { device_id: deviceId })).data.find((t) => t.id === id)!;
const drain = () => ts.server.context.jobs.drain();

describe('the broker restarted', () => {
  it('a task due while it is down waits for it, then completes on the acknowledgement, applied once', async () => {
    const serial = `BRK-${uid()}`;
    const { data } = await getCommand('device.create').run(
      { api },
      {
        name: `Panel ${serial}`,
        type: 'panel',
        serial_number: serial,
        domain_id: await rootGroup(api),
        protocol: 'mqtt',
      },
    );
    const c = await getCommand('device.credentials').run({ api }, { id: data.id });
    // the device is told the broker's address, as an installer would type it
    expect(c.mqtt.url).toBe(broker.url);
    sim = new SimulatedDevice({
      serial,
      management: { protocol: 'mqtt', url: c.mqtt.url, login: c.login, password: c.password },
      heartbeatMs: 0,
    });
    await sim.start();
    await until(async () => (await statusOf(data.id)) === 'online');

    await broker.kill();
    const { task } = await getCommand('device.restart').run({ api }, { id: data.id });
    // the attempt finds no broker: not done, not failed, and no retry spent on it: it waits for the broker
    expect(await drain()).toBe(1);
    expect(await taskOf(data.id, task.id)).toMatchObject({ state: 'waiting', attempts: 1 });
    expect(sim.applied.restart).toBe(0);
    // nothing is due while the broker is down, however long that lasts
    clock.advance(3600_000);
    expect(await drain()).toBe(0);

    await broker.start();
    // both ends reconnect by themselves (their own reconnect timers); the platform then sends what waited
    await until(async () => ts.server.context.devices.connected && sim!.connected);
    await until(async () => (await taskOf(data.id, task.id)).state === 'queued');
    expect(await drain()).toBe(1);
    expect(await taskOf(data.id, task.id)).toMatchObject({ state: 'completed' });
    expect(sim.applied.restart).toBe(1);
    const sent = sim.requests.filter((r) => r.uri === '/api/v1/system/reboot/run');
    expect(new Set(sent.map((r) => r.request_id))).toEqual(new Set([`task-${task.id}`]));
  });
});
