/**
 * Issue 20 items 4 and 5: what one device's credentials may cost everyone else. A burst of 1,000 log pushes
 * from one device leaves a signed-in person's list requests answering 200 — every one, none 503 — because
 * device work waits in a bounded queue fair across devices, and a device over its budget is refused on its own
 * topic (429 on server/response/v0/{serial}). And a device cannot knock another offline by connecting with
 * its client id: the broker binds client ids to the serial that signed in. MQTT.js is the device here, on
 * the embedded broker, on PGlite and (with DATABASE_URL) PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import mqtt, { type MqttClient } from 'mqtt';
import { getCommand } from '@lintel/commands';
import { deviceTopics, type ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin, raw, rootGroup, uid } from '../support/fixtures';
import { until } from './mqtt-clients';

let ts: TestServer;
let api: ApiClient;
let root: number;
const clients: MqttClient[] = [];

beforeAll(async () => {
  ts = await startTestServer();
  api = await admin(ts);
  root = await rootGroup(api);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.endAsync(true).catch(() => undefined)));
  await ts?.close();
});

async function mqttDevice(): Promise<{ id: number; serial: string; url: string; password: string }> {
  const serial = `ABUSE-${uid()}`;
  const { data } = await getCommand('device.create').run(
    { api },
    { name: `Panel ${serial}`, type: 'panel', serial_number: serial, domain_id: root, protocol: 'mqtt' },
  );
  const c = await getCommand('device.credentials').run({ api }, { id: data.id });
  return { id: data.id, serial, url: c.mqtt.url, password: c.password };
}

async function connect(
  d: { url: string },
  username: string,
  password: string,
  clientId: string,
): Promise<MqttClient> {
  const client = await mqtt.connectAsync(d.url, {
    username,
    password,
    clientId,
    reconnectPeriod: 0,
    connectTimeout: 10_000,
  });
  clients.push(client);
  return client;
}

const statusOf = async (id: number) => (await getCommand('device.get').run({ api }, { id })).status;

describe('a burst of 1,000 pushes from one device', () => {
  it('leaves a signed-in user’s list requests answering 200, and the device is refused on its own topic', async () => {
    const d = await mqttDevice();
    const client = await connect(d, d.serial, d.password, d.serial);
    const replies: number[] = [];
    client.on('message', (_topic, payload) => {
      replies.push(Number((JSON.parse(payload.toString()) as { status: number }).status));
    });
    await client.subscribeAsync(deviceTopics(d.serial).push_reply, { qos: 1 });
    const gateway = ts.server.context.devices;
    const before = gateway.handled + gateway.refused;
    const burst = Array.from({ length: 1000 }, (_, i) =>
      client.publishAsync(
        deviceTopics(d.serial).push,
        JSON.stringify({
          request_id: `b-${i}`,
          method: 'POST',
          uri: '/logs',
          body: {
            events: [
              {
                event_id: `e-${i}`,
                kind: 'identifier_used',
                identifier_type: 'card',
                identifier_number: String(i),
                lock: 1,
                result: 'granted',
              },
            ],
          },
        }),
        { qos: 1 },
      ),
    );
    // a person keeps listing while the burst is handled: every request answered, none 503
    const statuses: number[] = [];
    const listing = (async () => {
      do {
        statuses.push((await raw(ts, api, 'GET', '/devices/events', { query: { limit: 5 } })).status);
        statuses.push((await raw(ts, api, 'GET', '/devices', { query: { limit: 5 } })).status);
      } while (gateway.handled + gateway.refused - before < 1000 && statuses.length < 400);
    })();
    await Promise.all(burst);
    await listing;
    await until(async () => gateway.handled + gateway.refused - before >= 1000, 120_000);
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    // the device was answered on its own topic: what was over its budget with 429
    await until(async () => replies.length >= 1000, 60_000);
    expect(replies.filter((s) => s === 429).length).toBeGreaterThan(0);
    expect(replies.filter((s) => s !== 429 && s !== 200)).toEqual([]);
  }, 240_000);
});

describe('client ids are bound to the device that signed in', () => {
  it('device B connecting with device A’s client id is refused, and A stays online', async () => {
    const a = await mqttDevice();
    const b = await mqttDevice();
    const clientA = await connect(a, a.serial, a.password, a.serial);
    await clientA.publishAsync(deviceTopics(a.serial).status, 'online', { qos: 1 });
    await until(async () => (await statusOf(a.id)) === 'online');
    let aClosed = false;
    clientA.on('close', () => (aClosed = true));

    // B with its own, right password and A's client id
    const refused = await mqtt
      .connectAsync(a.url, {
        username: b.serial,
        password: b.password,
        clientId: a.serial,
        reconnectPeriod: 0,
        connectTimeout: 10_000,
      })
      .then(
        (c) => {
          clients.push(c);
          return null;
        },
        (err: { code?: number }) => err,
      );
    expect(refused).not.toBeNull();
    expect(refused!.code).toBe(2);
    // A is still connected and still online; it can still be asked
    expect(aClosed).toBe(false);
    expect(clientA.connected).toBe(true);
    await clientA.publishAsync(deviceTopics(a.serial).status, 'online', { qos: 1 });
    expect(await statusOf(a.id)).toBe('online');
    // B under its own client id is welcome
    const clientB = await connect(b, b.serial, b.password, b.serial);
    expect(clientB.connected).toBe(true);
    expect(clientA.connected).toBe(true);
  });
});

// last: 200 device sign-ins at once from one address leave that address throttled (auth/device-throttle.ts)
describe('a burst of 200 pushes at once from one device over HTTP', () => {
  it('leaves a signed-in user’s list requests answering 200: the pushes wait in the devices’ queue, over the budget 429', async () => {
    const serial = `ABUSE-${uid()}`;
    const { data } = await getCommand('device.create').run(
      { api },
      { name: `Panel ${serial}`, type: 'panel', serial_number: serial, domain_id: root, protocol: 'http' },
    );
    const c = await getCommand('device.credentials').run({ api }, { id: data.id });
    const auth = `Basic ${Buffer.from(`${c.login}:${c.password}`).toString('base64')}`;
    const answered: number[] = [];
    // 200 connections at once: under the server's 256 per address (LINTEL_HTTP_MAX_CONNECTIONS_PER_ADDRESS)
    const burst = Array.from({ length: 200 }, (_, i) =>
      fetch(`${ts.url}/api/v0/device-gateway/logs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: auth },
        body: JSON.stringify({ events: [{ event_id: `h-${i}`, kind: 'door_opened', reason: 'button' }] }),
      }).then(
        (r) => void answered.push(r.status),
        () => void answered.push(0),
      ),
    );
    const statuses: number[] = [];
    const listing = (async () => {
      do {
        statuses.push((await raw(ts, api, 'GET', '/devices/events', { query: { limit: 5 } })).status);
        statuses.push((await raw(ts, api, 'GET', '/devices', { query: { limit: 5 } })).status);
      } while (answered.length < 200 && statuses.length < 400);
    })();
    await Promise.all(burst);
    await listing;
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    // the device was answered: stored, or over its budget 429 — never a 503
    expect(answered.filter((s) => s === 429).length).toBeGreaterThan(0);
    expect(answered.filter((s) => s !== 429 && s !== 200)).toEqual([]);
  }, 240_000);
});
