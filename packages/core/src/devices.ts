/**
 * The devices' MQTT topics (../shared/DEVICES.md), one set per serial number. The platform, the simulator
 * and the broker's access rules all name them from here.
 */
export const DeviceTopicKinds = ['request', 'response', 'push', 'push_reply', 'status'] as const;
export type DeviceTopicKind = (typeof DeviceTopicKinds)[number];

const prefixes: Record<DeviceTopicKind, string> = {
  /** platform to device: `{request_id, method, uri, body}` */
  request: 'device/request/v0/',
  /** device to platform: the reply `{request_id, status, body}` */
  response: 'device/response/v0/',
  /** device to platform: what the device pushes (heartbeats, logs, events), in the same request model */
  push: 'server/request/v0/',
  /**
   * platform to device: the answer to a push `{request_id, status, body}`, sent once what it carried is
   * stored (a device keeps its logs until their push is answered; ours: docs/decisions.md "Device events")
   */
  push_reply: 'server/response/v0/',
  /** the device's `online` / `offline` (its last will) */
  status: 'device/status/v0/',
};

export function deviceTopics(serial: string): Record<DeviceTopicKind, string> {
  return {
    request: prefixes.request + serial,
    response: prefixes.response + serial,
    push: prefixes.push + serial,
    push_reply: prefixes.push_reply + serial,
    status: prefixes.status + serial,
  };
}

/** The subscription of one kind for every device: `device/status/v0/+`. */
export const deviceTopicFilter = (kind: DeviceTopicKind): string => `${prefixes[kind]}+`;

/** Which device topic a topic is, and for which serial; null when it is none of them. */
export function parseDeviceTopic(topic: string): { kind: DeviceTopicKind; serial: string } | null {
  for (const kind of DeviceTopicKinds) {
    const p = prefixes[kind];
    if (topic.startsWith(p)) {
      const serial = topic.slice(p.length);
      if (serial && !/[/+#]/.test(serial)) return { kind, serial };
    }
  }
  return null;
}

/** What the device may do on each of its own topics (the broker's access rules): read requests, write the rest. */
export const DeviceTopicAccess: Record<DeviceTopicKind, 'read' | 'write' | 'readwrite'> = {
  request: 'read',
  response: 'write',
  push: 'write',
  push_reply: 'read',
  status: 'readwrite',
};

/** What `closeMqtt` needs of an MQTT.js client, typed without MQTT.js (the server and the simulator hold one). */
export interface ClosableMqttClient {
  readonly connected: boolean;
  /** the QoS 1 messages sent and not yet acknowledged, by message id */
  readonly outgoing: object;
  endAsync(force?: boolean): Promise<void>;
}

/**
 * Closes an MQTT.js client for good, whatever its connection is doing. MQTT.js's `end()` without force waits
 * until every QoS 1 message it sent is acknowledged, and stops reconnecting first: a client whose connection
 * had dropped with a publish in flight (the broker restarted, or kicked it when its password changed) waited
 * for an acknowledgement that could never come, and `end()` never returned. So the polite close (DISCONNECT,
 * then the socket ended) is only for a connected client with nothing in flight; any other is closed at once.
 * What was in flight is lost either way: its callers were answered before.
 */
export function closeMqtt(client: ClosableMqttClient): Promise<void> {
  const inFlight = Object.keys(client.outgoing).length > 0;
  return client.endAsync(inFlight || !client.connected).catch(() => undefined);
}
