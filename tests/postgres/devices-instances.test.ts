/**
 * Two server instances on one PostgreSQL database and the machine's Mosquitto: each device message is
 * handled by one instance (MQTT shared subscriptions), and a request one instance sends is answered to it.
 * `mosquitto_pub` is the device. Runs in the PostgreSQL pass (DATABASE_URL set).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import { deviceTopics, type ApiClient } from '@lintel/core';
import { freshDatabase, startTestServer, type TestServer } from '../support/server';
import { admin, rootGroup, signIn, uid } from '../support/fixtures';
import { mosquittoPub, mosquittoSub, until } from '../devices/mqtt-clients';

const MOSQUITTO = { host: '127.0.0.1', port: 1883 };
let database: Awaited<ReturnType<typeof freshDatabase>>;
let a: TestServer;
let b: TestServer;
let api: ApiClient;
let root: number;

const mqtt = {
  url: 'mqtt://127.0.0.1:1883',
  shared: true,
  port: 0,
  host: '127.0.0.1',
  requestTimeoutMs: 5_000,
  sweepMs: 0,
};

beforeAll(async () => {
  database = await freshDatabase();
  a = await startTestServer({ database: database.url, config: { mqtt } });
  b = await startTestServer({ database: database.url, config: { mqtt } });
  api = await admin(a);
  root = await rootGroup(api);
});
afterAll(async () => {
  await b?.close();
  await a?.close();
  await database?.drop();
});

describe('two instances, one broker', () => {
  it('share one subscription group, and each device message is handled by one of them', async () => {
    expect(a.server.context.devices.subscriptions).toEqual(b.server.context.devices.subscriptions);
    const serial = `SH-${uid()}`;
    const { data } = await getCommand('device.create').run(
      { api },
      { name: 'Shared', type: 'panel', serial_number: serial, domain_id: root, protocol: 'mqtt' },
    );
    const before = a.server.context.devices.handled + b.server.context.devices.handled;
    const n = 20;
    for (let i = 0; i < n; i++)
      expect(
        (
          await mosquittoPub(
            MOSQUITTO,
            deviceTopics(serial).push,
            JSON.stringify({ request_id: String(i), method: 'POST', uri: '/heartbeat', body: {} }),
          )
        ).code,
      ).toBe(0);
    const handled = () => a.server.context.devices.handled + b.server.context.devices.handled - before;
    await until(async () => handled() >= n);
    expect(handled()).toBe(n);
    expect((await getCommand('device.get').run({ api }, { id: data.id })).status).toBe('online');
    // one "online" change, announced once, though both instances took heartbeats of it
    const changes = [a, b].flatMap((ts) =>
      ts.server.context.events.sent.filter(
        (m) => m.data.type === 'DeviceStatusChangedEvent' && m.data.deviceId === data.id,
      ),
    );
    // every instance delivers every event once (the outbox's NOTIFY): one change, seen by both
    expect(changes).toHaveLength(2);
  });

  it('a request sent by instance B is answered to B', async () => {
    const serial = `SH-${uid()}`;
    const { data } = await getCommand('device.create').run(
      { api },
      { name: 'Asked', type: 'panel', serial_number: serial, domain_id: root, protocol: 'mqtt' },
    );
    await mosquittoPub(MOSQUITTO, deviceTopics(serial).status, 'online');
    await until(
      async () => (await getCommand('device.get').run({ api }, { id: data.id })).status === 'online',
    );
    const sub = mosquittoSub(MOSQUITTO, deviceTopics(serial).request, { count: 1 });
    await sub.subscribed;
    const apiB = await signIn(b, a.adminLogin, a.adminPassword);
    const info = getCommand('device.info').run({ api: apiB }, { id: data.id });
    const [line] = await sub.messages;
    const { request_id } = JSON.parse(line!.slice(deviceTopics(serial).request.length + 1)) as {
      request_id: string;
    };
    await mosquittoPub(
      MOSQUITTO,
      deviceTopics(serial).response,
      JSON.stringify({ request_id, status: 200, body: { device_serial_number: serial } }),
    );
    expect(await info).toEqual({ device_serial_number: serial });
  });
});
