import net from 'node:net';
import mqtt from 'mqtt';
import pino from 'pino';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { EmbeddedBroker, PLATFORM_USER } from './embedded-broker';
import { sendAtOnce } from './mqtt-client';

// Requests to devices are small writes answered by small writes: with Nagle's algorithm each waits for the
// peer's delayed acknowledgement (185 round trips a second instead of 9,300, 16 in flight). The figures are
// bench/access-sync's; here, that both ends of the platform's broker connections send at once.

const broker = new EmbeddedBroker({
  port: 0,
  host: '127.0.0.1',
  log: pino({ level: 'silent' }),
  passwordOf: () => Promise.resolve(null),
});
beforeAll(() => broker.start());
afterAll(() => broker.stop());

it("the embedded broker's sockets send at once", () => {
  const server = (broker as unknown as { server: net.Server & { noDelay?: boolean } }).server;
  expect(server.noDelay).toBe(true);
});

it("the platform's broker connection sends at once, after a reconnection too", async () => {
  const calls = vi.spyOn(net.Socket.prototype, 'setNoDelay');
  const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${broker.port}`, {
    username: PLATFORM_USER,
    password: broker.platformPassword,
    reconnectPeriod: 50,
  });
  try {
    sendAtOnce(client);
    const first = client.stream;
    expect(
      calls.mock.contexts.filter((s, i) => s === first && calls.mock.calls[i]![0] === true),
    ).toHaveLength(1);
    // the connection drops; the client connects again on a new socket, which sends at once too
    const again = new Promise((resolve) => client.once('connect', resolve));
    first.destroy();
    await again;
    expect(client.stream).not.toBe(first);
    const second = client.stream;
    expect(calls.mock.contexts.some((s, i) => s === second && calls.mock.calls[i]![0] === true)).toBe(true);
  } finally {
    calls.mockRestore();
    await client.endAsync();
  }
});
