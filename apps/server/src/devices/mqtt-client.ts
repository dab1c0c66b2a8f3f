import type { Socket } from 'node:net';
import type { IClientPublishOptions, MqttClient } from 'mqtt';

/**
 * How the server holds its MQTT.js connections (the gateway's and the dynamic-security admin's): sockets that
 * send at once, a publish that does not outlive its connection; the close that always ends is @lintel/core's
 * `closeMqtt`, which the simulator's devices use too.
 */

/**
 * The broker connection's socket sends each packet at once (TCP no-delay), on this connection and every
 * reconnection: requests to devices are small writes that Nagle's algorithm would hold until the broker's
 * delayed acknowledgement (docs/decisions.md, "MQTT without Nagle").
 */
export function sendAtOnce(client: MqttClient): void {
  const set = () => (client.stream as Partial<Socket> | undefined)?.setNoDelay?.(true);
  set();
  client.on('connect', set);
}

/** Per client, a promise rejected when its current connection closes (one listener a connection). */
const closings = new WeakMap<MqttClient, Promise<never>>();

function closing(client: MqttClient): Promise<never> {
  let p = closings.get(client);
  if (!p) {
    p = new Promise<never>((_, reject) =>
      client.once('close', () => {
        closings.delete(client);
        reject(new Error('mqtt: the connection closed before the broker acknowledged'));
      }),
    );
    p.catch(() => undefined);
    closings.set(client, p);
  }
  return p;
}

/**
 * Publishes and waits for the broker's acknowledgement, but not beyond the connection it was sent on. MQTT.js
 * keeps a QoS 1 message whose connection dropped and settles it only after a reconnection, which may never
 * come (the broker gone, or the platform's password changed): a device's push waited on its reply for ever,
 * its place in the fair queue with it, and the gateway's stop waited for that queue.
 */
export async function publishAcked(
  client: MqttClient,
  topic: string,
  payload: string,
  opts: IClientPublishOptions,
): Promise<void> {
  if (!client.connected) throw new Error('mqtt: not connected');
  const lost = closing(client);
  const sent = client.publishAsync(topic, payload, opts);
  sent.catch(() => undefined);
  await Promise.race([sent, lost]);
}
