import net from 'node:net';
import { Aedes, type Client } from 'aedes';
import mqtt from 'mqtt';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { closeMqtt } from '@lintel/core';
import { publishAcked } from './mqtt-client';

// A broker that never acknowledges a publish and can drop a client: a QoS 1 message stays in flight while
// the connection is gone, as when Mosquitto kicks the platform's account (its password set again) or restarts.
let broker: Aedes;
let server: net.Server;
let port = 0;
const clients = new Map<string, Client>();

beforeAll(async () => {
  broker = await Aedes.createBroker({ authorizePublish: () => undefined });
  broker.on('client', (c) => clients.set(c.id, c));
  server = net.createServer(broker.handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as net.AddressInfo).port;
});
afterAll(async () => {
  await new Promise<void>((resolve) => broker.close(() => resolve()));
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

async function clientWithOneInFlight() {
  const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${port}`, { reconnectPeriod: 60_000 });
  void client.publishAsync('device/request/v0/X', 'a request', { qos: 1 }).catch(() => undefined);
  await expect.poll(() => Object.keys(client.outgoing).length).toBe(1);
  return client;
}

it('a client whose connection dropped with a QoS 1 message in flight closes (end() alone never returned)', async () => {
  const client = await clientWithOneInFlight();
  const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
  clients.get(client.options.clientId!)!.close();
  await closed;
  expect(client.connected).toBe(false);
  // what end() would have done: wait for 'outgoingEmpty', which no acknowledgement will ever bring
  let ended = false;
  await closeMqtt(client).then(() => (ended = true));
  expect(ended).toBe(true);
  expect(client.disconnected).toBe(true);
});

it('a connected client with a message in flight closes too; one with none says DISCONNECT', async () => {
  const busy = await clientWithOneInFlight();
  await closeMqtt(busy);
  expect(busy.disconnected).toBe(true);
  const idle = await mqtt.connectAsync(`mqtt://127.0.0.1:${port}`, { reconnectPeriod: 60_000 });
  const id = idle.options.clientId!;
  const gone = new Promise<Client>((resolve) => broker.once('clientDisconnect', resolve));
  await closeMqtt(idle);
  const c = await gone;
  expect(c.id).toBe(id);
  // aedes marks a client that sent DISCONNECT (its will, had it one, is not published)
  expect((c as Client & { _disconnected: boolean })._disconnected).toBe(true);
});

it('a publish waiting for its acknowledgement is given up when its connection closes (it waited for a reconnection)', async () => {
  const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${port}`, { reconnectPeriod: 60_000 });
  try {
    const settled: string[] = [];
    const replies = [1, 2].map((n) =>
      publishAcked(client, `device/push_reply/v0/X`, `reply ${n}`, { qos: 1 }).then(
        () => settled.push('acknowledged'),
        (err: Error) => settled.push(err.message),
      ),
    );
    await expect.poll(() => Object.keys(client.outgoing).length).toBe(2);
    // one listener for the connection, however many wait on it
    expect(client.listenerCount('close')).toBeLessThanOrEqual(2);
    clients.get(client.options.clientId!)!.close();
    await Promise.all(replies);
    expect(settled).toEqual([
      'mqtt: the connection closed before the broker acknowledged',
      'mqtt: the connection closed before the broker acknowledged',
    ]);
    await expect(publishAcked(client, 'x', 'y', { qos: 1 })).rejects.toThrow('not connected');
  } finally {
    await closeMqtt(client);
  }
});
