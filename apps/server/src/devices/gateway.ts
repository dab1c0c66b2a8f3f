import type { TLSSocket } from 'node:tls';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import mqtt, { type MqttClient } from 'mqtt';
import { registry, type BrokerStatus, type Command } from '@lintel/commands';
import { closeMqtt, deviceTopicFilter, deviceTopics, parseDeviceTopic } from '@lintel/core';
import type { ServerContext } from '../context';
import { AppError } from '../errors';
import { dispatch } from '../pipeline/dispatch';
import {
  DeviceChangedError,
  deviceBySerial,
  devicesBySerial,
  devicePrincipal,
  type DeviceBySerial,
} from '../pipeline/principal';
import { EmbeddedBroker, PLATFORM_USER } from './embedded-broker';
import { DynsecClient, platformPassword, queueBrokerReconcile } from './dynsec';
import { publishAcked, sendAtOnce } from './mqtt-client';
import { writeDemoDevicesFile } from './demo';
import { DeviceSearches } from './search';
import { FairQueue, WindowCounter } from './fair-queue';
import { beginDeviceAttempt } from '../auth/device-throttle';
import { deviceFetch, deviceUrl } from './outbound';
import { sweepOffline } from './status';
import { resumeWaiting } from './tasks';
import {
  certificateInfo,
  loadBrokerCertificate,
  peerCertificateInfo,
  type BrokerCertificate,
} from './broker-settings';

/** What an external broker says of itself on its `$SYS` topics (Mosquitto publishes them, retained). */
const SYS_TOPICS = ['$SYS/broker/version', '$SYS/broker/uptime', '$SYS/broker/clients/connected'];

/** A request to a device in the HTTP model (../shared/DEVICES.md): `{request_id, method, uri, body}`. */
export interface DeviceRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  uri: string;
  body?: unknown;
  /**
   * The request's id (default: a new one). A device task sends each attempt with the same id, `task-{id}`, so
   * the device applies it once however often it arrives; over HTTP it is the `X-Request-Id` header.
   */
  requestId?: string;
}

/** The device's reply, paired by `request_id`: `{request_id, status, body}`. */
export interface DeviceReply {
  status: number;
  body: unknown;
}

/** What the gateway needs to know of a device to reach it. */
export interface DeviceAddress {
  serial_number: string;
  protocol: string;
  status: string;
  ip_address: string | null;
  port: number;
}

/** The route prefix of what devices push: `POST {url}/heartbeat` over HTTP is uri `/heartbeat` over MQTT. */
export const DEVICE_GATEWAY_PATH = '/device-gateway';

/** The `device` commands by the uri a device pushes to (`/heartbeat` → `device_gateway.heartbeat`). */
function pushCommands(): Map<string, Command> {
  const out = new Map<string, Command>();
  for (const cmd of registry.values())
    if (cmd.access === 'device' && cmd.http.path.startsWith(`${DEVICE_GATEWAY_PATH}/`))
      out.set(`${cmd.http.method} ${cmd.http.path.slice(DEVICE_GATEWAY_PATH.length)}`, cmd);
  return out;
}

/** The uri of a push of device logs over MQTT (`device_gateway.logs`): the one push taken for a remembered device. */
const LOGS_ROUTE = `POST ${registry.get('device_gateway.logs')!.http.path.slice(DEVICE_GATEWAY_PATH.length)}`;
/** At most this many devices are remembered by an instance (a few hundred bytes each). */
const REMEMBERED_MAX = 200_000;
/** `run`'s answer for a push that found its remembered device changed (`DeviceChangedError`): no reply yet. */
const DEVICE_CHANGED: DeviceReply = Object.freeze({ status: 0, body: null });

const parseJson = (payload: Buffer): unknown => {
  try {
    return JSON.parse(payload.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
};

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The device gateway: one interface to devices over MQTT and HTTP, so the rest of the server never asks which
 * one a device speaks.
 *
 * - `npm start` runs the embedded broker (aedes, `MQTT_PORT`); `MQTT_URL` points at Mosquitto or any broker
 *   instead. The platform is one MQTT client of the broker either way.
 * - What devices push (`server/request/v0/{serial}`) and their status (`device/status/v0/{serial}`) is taken
 *   as MQTT shared subscriptions when the broker has them (`$share/<group>/…`, Mosquitto does), so of several
 *   instances each message is handled by one; every message goes through `dispatch` as the `device` principal.
 * - Replies (`device/response/v0/{serial}`) reach every instance; the one that asked pairs it by request id.
 * - Online and offline: heartbeats and the status topic; offline after three missed heartbeats, by the
 *   server's clock (`sweep`, every `LINTEL_DEVICE_SWEEP_MS`).
 */
export class DeviceGateway {
  private broker: EmbeddedBroker | null = null;
  /** the dynamic-security plugin's control API, when Lintel keeps the external broker's accounts (MQTT_DYNSEC) */
  dynsec: DynsecClient | null = null;
  private client: MqttClient | null = null;
  private sweepTimer: NodeJS.Timeout | null = null;
  private sweeping: Promise<number> | null = null;
  private readonly pending = new Map<
    string,
    { resolve: (r: DeviceReply) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }
  >();
  private readonly commands = pushCommands();
  private started = false;
  /** device messages this instance handled (tests count them across instances) */
  handled = 0;
  /** the subscriptions it took, as sent to the broker */
  subscriptions: string[] = [];

  private searchesRun: DeviceSearches | null = null;
  private queueMade: FairQueue | null = null;
  private pushesMade: WindowCounter | null = null;
  /** device messages refused because their device was over its budget or the queue was full */
  refused = 0;
  /** what an external broker said on its `$SYS` topics, by topic */
  private readonly sys = new Map<string, string>();
  /** restarts of the broker or of the platform's connection by `broker.restart` */
  private restarts = 0;
  /** the embedded broker's certificate, as stored (from the broker settings) */
  private certificate: BrokerCertificate | null = null;

  /**
   * The gateway is a part of the context it serves (`context.devices`) and dispatches into it: it is made
   * with the way to the context (server.ts) and reads it when it runs, never while it is made.
   */
  constructor(private readonly contextOf: () => ServerContext) {}

  private get app(): ServerContext {
    return this.contextOf();
  }

  /** the network searches this instance runs */
  get searches(): DeviceSearches {
    return (this.searchesRun ??= new DeviceSearches(this.app));
  }

  /** device messages waiting for their turn, fair across devices (issue 20 item 4) */
  get queue(): FairQueue {
    if (!this.queueMade) {
      const app = this.app;
      const limits = app.config.devices;
      // below the database's places: PGlite's one connection, PostgreSQL's pool of 10
      const concurrency = limits.concurrency > 0 ? limits.concurrency : app.config.databaseUrl ? 5 : 2;
      this.queueMade = new FairQueue(
        concurrency,
        limits.queueMax,
        Math.max(1, Math.ceil(limits.queueMax / 4)),
        // pushes of device events waiting for their group commit hold no database place (parkSlot)
        Math.ceil(limits.queueMax / 2),
      );
    }
    return this.queueMade;
  }

  /** what each device pushed in the current window */
  private get pushes(): WindowCounter {
    const limits = this.app.config.devices;
    return (this.pushesMade ??= new WindowCounter(limits.pushLimit, limits.pushWindowS * 1000));
  }

  /** The embedded broker, when this instance runs it. */
  get embedded(): EmbeddedBroker | null {
    return this.broker;
  }

  get running(): boolean {
    return this.started;
  }

  /** The broker address devices are told to use (MQTT_PUBLIC_URL, else the broker's own address). */
  brokerUrl(): string {
    const cfg = this.app.config.mqtt;
    if (cfg.publicUrl) return cfg.publicUrl;
    if (cfg.url) {
      const u = new URL(cfg.url);
      return `${u.protocol}//${u.host}`;
    }
    const host = new URL(this.app.config.publicUrl).hostname;
    return `mqtt://${host}:${this.broker?.port || cfg.port}`;
  }

  async start(): Promise<void> {
    const cfg = this.app.config.mqtt;
    let url: string;
    let auth: { username?: string; password?: string } = {};
    let adminPassword = '';
    if (cfg.url) {
      const u = new URL(cfg.url);
      const username = cfg.username ?? (u.username ? decodeURIComponent(u.username) : undefined);
      const password = cfg.password ?? (u.password ? decodeURIComponent(u.password) : undefined);
      u.username = '';
      u.password = '';
      url = u.toString();
      auth = { username, password };
      if (cfg.dynsec) {
        if (!username || !password)
          throw new Error('MQTT_DYNSEC needs the plugin admin account: MQTT_USERNAME and MQTT_PASSWORD');
        // the admin account only drives the plugin; the platform signs in as its own account
        this.dynsec = new DynsecClient({
          url,
          username,
          password,
          log: this.app.log,
          timeoutMs: cfg.requestTimeoutMs,
          onReconnect: () =>
            void queueBrokerReconcile(this.app).catch((err: Error) =>
              this.app.log.error({ err: err.message }, 'dynsec: queueing a reconciliation failed'),
            ),
        });
        await this.dynsec.start();
        await this.dynsec.ensurePlatform(password);
        adminPassword = password;
        auth = { username: PLATFORM_USER, password: platformPassword(password) };
      }
    } else {
      this.broker = new EmbeddedBroker({
        port: cfg.port,
        host: cfg.host,
        tlsPort: cfg.tlsPort,
        now: () => this.app.clock.now(),
        log: this.app.log,
        passwordOf: async (serial) => (await deviceBySerial(this.app, serial))?.password ?? null,
        throttle: (ip, serial) => beginDeviceAttempt(this.app, ip, serial),
      });
      this.certificate = await loadBrokerCertificate(this.app);
      if (this.certificate)
        await this.broker.setCertificate(this.certificate).catch((err: Error) => {
          // a stored certificate the TLS stack refuses does not keep devices on plain MQTT out
          this.app.log.error({ err: err.message }, 'mqtt: the stored TLS certificate was refused');
        });
      await this.broker.start();
      url = `mqtt://127.0.0.1:${this.broker.port}`;
      auth = { username: PLATFORM_USER, password: this.broker.platformPassword };
    }
    const shared = cfg.shared ? `$share/${await this.shareGroup()}/` : '';
    this.subscriptions = [
      `${shared}${deviceTopicFilter('push')}`,
      `${shared}${deviceTopicFilter('status')}`,
      deviceTopicFilter('response'),
    ];
    const options = {
      ...auth,
      clientId: `lintel-${randomUUID()}`,
      clean: true,
      reconnectPeriod: 2000,
      connectTimeout: 10_000,
    };
    let client: MqttClient;
    try {
      client = await mqtt.connectAsync(url, options);
    } catch (err) {
      // the platform's account predates a change of the admin's password: its own is set again
      const code = (err as { code?: unknown }).code;
      if (!this.dynsec || (code !== 4 && code !== 5 && code !== 134 && code !== 135)) throw err;
      await this.dynsec.resetPlatformPassword(adminPassword);
      client = await mqtt.connectAsync(url, options);
    }
    this.client = client;
    sendAtOnce(client);
    client.on('message', (topic, payload) => {
      if (topic.startsWith('$SYS/')) return void this.sys.set(topic, payload.toString('utf8').slice(0, 200));
      this.onMessage(topic, payload).catch((err: Error) =>
        this.app.log.error({ topic, err: err.message }, 'device message failed'),
      );
    });
    client.on('error', (err) =>
      this.app.log.warn({ err: err.message }, 'mqtt: the broker connection failed'),
    );
    // a clean session forgets subscriptions: take them again on every (re)connect
    // and the tasks that waited for the broker go on once the subscriptions are back
    client.on('connect', () => {
      if (!this.started) return;
      void this.subscribe(client)
        .then(() => resumeWaiting(this.app))
        .catch((err: Error) =>
          this.app.log.error({ err: err.message }, 'mqtt: resuming after a reconnection failed'),
        );
    });
    await this.subscribe(client);
    this.started = true;
    // tasks a job found waiting for the broker while this instance started (its first connect came before
    // `started`, so the handler above did not resume them) go on now: a restarted server left panels' syncs
    // waiting for a reconnection that had already happened
    await resumeWaiting(this.app);
    // accounts made while this instance was away (or the broker was) are compared at every start
    await queueBrokerReconcile(this.app);
    // the demo's simulated devices learn where the broker is and their passwords (`npm start` runs them)
    await writeDemoDevicesFile(this.app).catch((err: unknown) =>
      this.app.log.warn({ err }, 'the demo devices file could not be written'),
    );
    const sweepMs = cfg.sweepMs;
    if (sweepMs > 0) {
      this.sweepTimer = setInterval(() => void this.sweep().catch(() => undefined), sweepMs);
      this.sweepTimer.unref();
    }
    this.app.log.info(
      { broker: this.broker ? `embedded :${this.broker.port}` : new URL(url).host, shared: cfg.shared },
      'device gateway started',
    );
  }

  private async subscribe(client: MqttClient): Promise<void> {
    const granted = await client.subscribeAsync(this.subscriptions, { qos: 1 });
    const refused = granted.filter((g) => g.qos === 128);
    if (refused.length)
      this.app.log.error({ topics: refused.map((g) => g.topic) }, 'mqtt: the broker refused a subscription');
    // what an external broker says of itself, when it lets the platform read it (a refusal is no fault)
    if (!this.broker) await client.subscribeAsync(SYS_TOPICS, { qos: 0 }).catch(() => undefined);
  }

  /** The broker as this instance knows it (`broker.status`). */
  brokerStatus(): Omit<BrokerStatus, 'instance'> {
    const cfg = this.app.config.mqtt;
    const embedded = this.broker;
    const sysInt = (topic: string) => {
      const n = parseInt(this.sys.get(topic) ?? '', 10);
      return Number.isFinite(n) ? n : null;
    };
    const uptime = embedded
      ? embedded.startedAt &&
        Math.floor((this.app.clock.now().getTime() - embedded.startedAt.getTime()) / 1000)
      : sysInt('$SYS/broker/uptime');
    const stream = this.client?.stream as Partial<TLSSocket> | undefined;
    return {
      kind: cfg.url ? 'external' : 'embedded',
      state: this.connected ? 'up' : 'down',
      url: this.brokerUrl(),
      version: embedded ? embedded.version : (this.sys.get('$SYS/broker/version') ?? null),
      listeners: embedded ? embedded.listeners : [],
      clients: embedded ? embedded.clients : sysInt('$SYS/broker/clients/connected'),
      started_at: embedded
        ? (embedded.startedAt?.toISOString() ?? null)
        : uptime === null
          ? null
          : new Date(this.app.clock.now().getTime() - uptime * 1000).toISOString(),
      uptime_s: uptime === null ? null : Math.max(0, uptime),
      restarts: this.restarts,
      dynsec: Boolean(this.dynsec),
      messages_handled: this.handled,
      messages_refused: this.refused,
      certificate: embedded
        ? embedded.listeners.some((l) => l.protocol === 'mqtts') && this.certificate
          ? certificateInfo(this.certificate.cert)
          : null
        : this.connected && typeof stream?.getPeerCertificate === 'function'
          ? peerCertificateInfo(stream.getPeerCertificate())
          : null,
    };
  }

  /**
   * Restarts the embedded broker (`broker`: its listeners closed, every client disconnected, started again on
   * the same ports) or the platform's connection to its broker (`connection`), and waits up to `waitMs` for
   * the platform to be connected again (its subscriptions taken again by the connect handler).
   */
  async restart(type: 'broker' | 'connection', waitMs = 10_000): Promise<void> {
    const client = this.client;
    if (!client) throw new AppError('device_not_available', { reason: 'broker' });
    if (type === 'broker' && !this.broker)
      throw new AppError('cant_perform_action', { reason: 'external_broker' });
    this.app.log.info({ type }, 'mqtt: restart');
    // the platform leaves first, so it does not knock on a closed door every reconnect period
    await closeMqtt(client);
    try {
      if (type === 'broker') await this.broker!.restart();
    } finally {
      this.restarts += 1;
      const connected = new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, waitMs);
        timer.unref();
        client.once('connect', () => (clearTimeout(timer), resolve()));
      });
      client.reconnect();
      await connected;
    }
    // the subscriptions the connect handler takes again: a reply to the restart finds them in place
    if (client.connected) await this.subscribe(client).catch(() => undefined);
  }

  /** The embedded broker's TLS certificate (null: removed): the listener takes it at once. */
  async setCertificate(pem: BrokerCertificate | null): Promise<void> {
    if (!this.broker) throw new AppError('cant_perform_action', { reason: 'external_broker' });
    await this.broker.setCertificate(pem);
    this.certificate = pem;
  }

  /** The certificate the embedded broker serves, as stored; the TLS port; whether this instance runs one. */
  get tls(): { certificate: BrokerCertificate | null; port: number | null; embedded: boolean } {
    const b = this.broker;
    return {
      certificate: this.certificate,
      port: b?.listeners.find((l) => l.protocol === 'mqtts')?.port || this.app.config.mqtt.tlsPort || null,
      embedded: Boolean(b) || !this.app.config.mqtt.url,
    };
  }

  /** Instances on one database share their group; other installations on the same broker have their own. */
  private async shareGroup(): Promise<string> {
    if (this.app.config.mqtt.shareGroup) return this.app.config.mqtt.shareGroup;
    const r = await sql<{
      instance_id: string;
    }>`select instance_id from projects order by id limit 1`.execute(this.app.db);
    return `lintel_${(r.rows[0]?.instance_id ?? 'default').replace(/[^A-Za-z0-9]/g, '').slice(0, 16)}`;
  }

  /** whether the platform is connected to its broker now */
  get connected(): boolean {
    return Boolean(this.client?.connected);
  }

  async stop(): Promise<void> {
    this.started = false;
    await this.searches.stop();
    await this.queue.idle();
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.sweepTimer = null;
    await this.sweeping?.catch(() => undefined);
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new AppError('device_not_available'));
      this.pending.delete(id);
    }
    const client = this.client;
    this.client = null;
    if (client) await closeMqtt(client);
    await this.broker?.stop();
    this.broker = null;
    await this.dynsec?.stop();
    this.dynsec = null;
  }

  /** Marks offline the devices that missed three heartbeats, by the server's clock; how many it turned. */
  sweep(): Promise<number> {
    this.sweeping ??= sweepOffline(this.app).finally(() => (this.sweeping = null));
    return this.sweeping;
  }

  /**
   * One message from the broker. A reply is paired at once; what a device pushes is counted against its
   * budget and queued fairly (issue 20 item 4) before it costs a database statement: over its budget or
   * with the queue full it is refused on the device's own topic (`too_many_requests` with the seconds to
   * wait, when it carried a request id), and the console never waits behind it.
   */
  private async onMessage(topic: string, payload: Buffer): Promise<void> {
    const t = parseDeviceTopic(topic);
    if (!t) return;
    if (t.kind === 'response') return this.onResponse(t.serial, payload);
    if (t.kind === 'request' || t.kind === 'push_reply') return;
    const pushed = { kind: t.kind, serial: t.serial, topic };
    const wait = this.enqueuePush(t.serial, () =>
      this.onPush(pushed, payload).catch((err: Error) =>
        this.app.log.error({ topic, err: err.message }, 'device message failed'),
      ),
    );
    if (wait === 0) return;
    const message = t.kind === 'push' ? parseJson(payload) : undefined;
    const requestId = isRecord(message) ? message.request_id : undefined;
    if ((typeof requestId === 'string' || typeof requestId === 'number') && this.client?.connected) {
      const body = new AppError('too_many_requests', { seconds: Math.max(1, wait) }).body;
      await this.client
        .publishAsync(
          deviceTopics(t.serial).push_reply,
          JSON.stringify({ request_id: requestId, status: 429, body }),
          { qos: 0 },
        )
        .catch(() => undefined);
    }
  }

  /**
   * Counts a device's message against its budget and queues it fairly (issue 20 item 4), whatever it came
   * by: 0 when queued, else the seconds the device should wait (over its budget, or the queue full).
   */
  private enqueuePush(serial: string, task: () => Promise<void>): number {
    const wait = this.pushes.hit(serial, this.app.clock.now().getTime());
    if (wait === 0 && this.queue.push(serial, task)) return 0;
    this.refused++;
    return Math.max(1, wait);
  }

  /**
   * What a device pushes over HTTP (`/device-gateway/…` with its credentials) takes the same way as over
   * MQTT: its device's budget, then its turn in the fair queue beside every other device's messages. Over
   * its budget or with the queue full it is `429 too_many_requests` with `{seconds}` — the device's own
   * answer; people's requests never wait behind it.
   */
  admit<T>(serial: string, work: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const wait = this.enqueuePush(serial, () => work().then(resolve, reject));
      if (wait) reject(new AppError('too_many_requests', { seconds: wait }));
    });
  }

  private async onPush(
    t: { kind: 'push' | 'status'; serial: string; topic: string },
    payload: Buffer,
  ): Promise<void> {
    const topic = t.topic;
    const message = t.kind === 'push' ? parseJson(payload) : null;
    const route =
      isRecord(message) && typeof message.uri === 'string'
        ? `${typeof message.method === 'string' ? message.method.toUpperCase() : 'POST'} ${message.uri}`
        : null;
    // a push of logs is taken for the device as last read (the group commit checks it against its row); any
    // other message reads the device afresh, and what it reads is remembered
    const remembered = route === LOGS_ROUTE ? this.remembered.get(t.serial) : undefined;
    const device = remembered ?? (await this.deviceOf(t.serial));
    if (!device) {
      this.app.log.warn({ serial: t.serial, topic }, 'mqtt: a message of an unknown device');
      return;
    }
    if (device.protocol !== 'mqtt') {
      this.app.log.warn({ serial: t.serial, topic }, 'mqtt: a message of a device set to http; ignored');
      return;
    }
    this.handled++;
    const principal = devicePrincipal(device, !!remembered);
    if (t.kind === 'status') {
      // `online` / `offline` as plain text (the usual last will), or `{status}`
      const text = payload.toString('utf8').trim();
      const json = parseJson(payload);
      const status = isRecord(json) ? json.status : text;
      await this.run('POST /status', { status }, principal, t.serial);
      return;
    }
    if (!isRecord(message) || !route) {
      this.app.log.warn({ serial: t.serial }, 'mqtt: a push that is not {request_id, method, uri, body}');
      return;
    }
    let reply = await this.run(route, message.body ?? {}, principal, t.serial);
    if (reply === DEVICE_CHANGED) {
      // the device changed since it was remembered: read again, the message is taken anew (or dropped as any
      // message of a device unknown or set to http is)
      this.handled--;
      this.remembered.delete(t.serial);
      const now = await this.deviceOf(t.serial);
      if (!now || now.protocol !== 'mqtt') {
        this.app.log.warn({ serial: t.serial, topic }, 'mqtt: a message of a device removed or changed');
        return;
      }
      this.handled++;
      reply = await this.run(route, message.body ?? {}, devicePrincipal(now), t.serial);
      if (reply === DEVICE_CHANGED) {
        const e = new AppError('internal_error');
        reply = { status: e.status, body: e.body };
      }
    }
    // the answer, once what the push carried is stored: a device keeps its logs until then
    const requestId = message.request_id;
    if ((typeof requestId === 'string' || typeof requestId === 'number') && this.client?.connected)
      await publishAcked(
        this.client,
        deviceTopics(t.serial).push_reply,
        JSON.stringify({ request_id: requestId, status: reply.status, body: reply.body }),
        { qos: 1 },
      ).catch((err: Error) =>
        this.app.log.warn({ serial: t.serial, err: err.message }, 'mqtt: a push could not be answered'),
      );
  }

  /** the devices as last read, by serial (`remember`) */
  private readonly remembered = new Map<string, Omit<DeviceBySerial, 'password'>>();

  /** the serials of the messages taken in this turn of the event loop, each with those who wait for its row */
  private lookups: Map<
    string,
    Array<{ resolve: (d: DeviceBySerial | null) => void; reject: (e: unknown) => void }>
  > | null = null;

  /**
   * The device a message comes from, read afresh as `deviceBySerial` does, but the messages taken in one turn
   * of the event loop (a read from the broker's socket carries many) read theirs in ONE statement (issue 26
   * item 1: a statement a push was a fifth of the server's writes to the database at 2,000 events a second).
   */
  private deviceOf(serial: string): Promise<DeviceBySerial | null> {
    return this.readDevice(serial).then((d) => {
      this.remember(serial, d);
      return d;
    });
  }

  /**
   * What a read of a device leaves for its next pushes of logs (`remembered`; without its password, which the
   * MQTT path never needs): a device set to mqtt only, at most REMEMBERED_MAX of them, the longest unread going
   * first.
   */
  private remember(serial: string, d: DeviceBySerial | null): void {
    this.remembered.delete(serial);
    // a device set to http or none is read again each time, as any message of it is refused meanwhile
    if (!d || d.protocol !== 'mqtt') return;
    const { password: _password, ...row } = d;
    this.remembered.set(serial, row);
    if (this.remembered.size > REMEMBERED_MAX) this.remembered.delete(this.remembered.keys().next().value!);
  }

  private readDevice(serial: string): Promise<DeviceBySerial | null> {
    return new Promise((resolve, reject) => {
      let lookups = this.lookups;
      if (!lookups) {
        const taken = (lookups = this.lookups = new Map());
        setImmediate(() => {
          this.lookups = null;
          const read = devicesBySerial(this.app, [...taken.keys()]);
          read.then(
            (rows) => {
              const bySerial = new Map(rows.map((d) => [d.serial_number, d]));
              for (const [s, waiting] of taken) for (const w of waiting) w.resolve(bySerial.get(s) ?? null);
            },
            (err: unknown) => {
              for (const waiting of taken.values()) for (const w of waiting) w.reject(err);
            },
          );
        });
      }
      const waiting = lookups.get(serial) ?? [];
      waiting.push({ resolve, reject });
      lookups.set(serial, waiting);
    });
  }

  /** A push through `dispatch`: its reply in the HTTP model (a refusal: its status and catalogue body). */
  private async run(
    route: string,
    body: unknown,
    principal: ReturnType<typeof devicePrincipal>,
    serial: string,
  ): Promise<DeviceReply> {
    const cmd = this.commands.get(route);
    if (!cmd) {
      this.app.log.warn({ serial, route }, 'mqtt: a device pushed to an unknown uri');
      return { status: 404, body: new AppError('item_not_found', { uri: route }).body };
    }
    try {
      return { status: 200, body: await dispatch(this.app, cmd, body, principal) };
    } catch (err) {
      if (err instanceof DeviceChangedError) return DEVICE_CHANGED;
      const e = err instanceof AppError ? err : new AppError('internal_error');
      this.app.log.warn(
        {
          serial,
          route,
          err: e.key,
          data: e.data,
          ...(err instanceof AppError ? {} : { cause: (err as Error).message }),
        },
        'mqtt: a device push was refused',
      );
      return { status: e.status, body: e.body };
    }
  }

  private onResponse(serial: string, payload: Buffer): void {
    const reply = parseJson(payload);
    if (!isRecord(reply) || typeof reply.request_id !== 'string') return;
    const key = `${serial}:${reply.request_id}`;
    const waiting = this.pending.get(key);
    if (!waiting) return;
    this.pending.delete(key);
    clearTimeout(waiting.timer);
    this.handled++;
    waiting.resolve({ status: Number(reply.status ?? 200), body: reply.body ?? null });
  }

  /**
   * A request to a device, whichever protocol it speaks: over MQTT (published on its request topic, the
   * reply paired by request id) or over HTTP (the device's own API at its address). An mqtt device that is
   * offline is `device_offline`; one that does not answer in time, or an address that does not, is
   * `device_not_available`.
   */
  async request(device: DeviceAddress, req: DeviceRequest): Promise<DeviceReply> {
    const timeoutMs = this.app.config.mqtt.requestTimeoutMs;
    if (device.protocol === 'none')
      throw new AppError('device_protocol_none', { serial: device.serial_number });
    if (device.protocol === 'mqtt') {
      if (device.status !== 'online') throw new AppError('device_offline', { serial: device.serial_number });
      const client = this.client;
      if (!client?.connected) throw new AppError('device_not_available', { reason: 'broker' });
      const request_id = req.requestId ?? randomUUID();
      const key = `${device.serial_number}:${request_id}`;
      const reply = new Promise<DeviceReply>((resolve, reject) => {
        const entry = {
          resolve,
          reject,
          timer: setTimeout(() => {
            // a request id sent again (a task's next attempt) waits under the same key: leave its entry
            if (this.pending.get(key) === entry) this.pending.delete(key);
            reject(new AppError('device_not_available', { serial: device.serial_number, reason: 'timeout' }));
          }, timeoutMs),
        };
        // an earlier send of the same id still waiting gives way to this one (its reply answers both)
        const earlier = this.pending.get(key);
        if (earlier) {
          clearTimeout(earlier.timer);
          earlier.reject(
            new AppError('device_not_available', { serial: device.serial_number, reason: 'timeout' }),
          );
        }
        this.pending.set(key, entry);
      });
      // the reply's own timer bounds the wait for the broker's acknowledgement too: a connection that drops
      // with the request in flight leaves MQTT.js waiting for a reconnection, the request not beyond its time
      const sent = client.publishAsync(
        deviceTopics(device.serial_number).request,
        JSON.stringify({ request_id, method: req.method, uri: req.uri, body: req.body ?? null }),
        { qos: 1 },
      );
      sent.catch(() => undefined);
      reply.catch(() => undefined);
      await Promise.race([sent, reply]);
      return reply;
    }
    if (!device.ip_address) throw new AppError('device_not_available', { reason: 'no_address' });
    const limits = this.app.config.devices;
    // loopback, link-local and unspecified addresses refused unless allowed; no redirect, a bounded reply
    const url = deviceUrl(device.ip_address, device.port, req.uri, limits.allowLoopback);
    let reply;
    try {
      reply = await deviceFetch(url, {
        method: req.method,
        headers: {
          ...(req.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(req.requestId ? { 'x-request-id': req.requestId } : {}),
        },
        body: req.body === undefined ? undefined : JSON.stringify(req.body),
        timeoutMs,
        maxBytes: limits.replyMaxBytes,
      });
    } catch {
      throw new AppError('device_not_available', { serial: device.serial_number, reason: 'unreachable' });
    }
    if (reply.status >= 300 && reply.status < 400)
      throw new AppError('device_not_available', { serial: device.serial_number, reason: 'redirect' });
    if (reply.text === null)
      throw new AppError('device_not_available', { serial: device.serial_number, reason: 'reply_too_large' });
    let body: unknown = reply.text;
    try {
      body = reply.text ? JSON.parse(reply.text) : null;
    } catch {
      // a reply that is not JSON stays text
    }
    return { status: reply.status, body };
  }

  /** A device's password changed or it is gone: its broker connections end (embedded broker). */
  forget(serial: string): void {
    this.broker?.disconnect(serial);
  }
}
