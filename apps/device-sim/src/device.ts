import type { Socket } from 'node:net';
import http from 'node:http';
import { createHash, randomUUID } from 'node:crypto';
import mqtt, { type MqttClient } from 'mqtt';
import {
  AccessIndex,
  DeviceTiming,
  accessDataFromHolding,
  closeMqtt,
  deviceTopics,
  type DecisionReason,
  type DeviceIdentifierItem,
  type DeviceTimeProfile,
} from '@lintel/core';

/** A simulated device's kind, as the platform names them (spec part 1 §3). */
export type SimDeviceType =
  'panel' | 'monitor' | 'accesscontroller' | 'liftcontroller' | 'ip_camera' | 'barrier';

export interface SimDeviceOptions {
  serial: string;
  type?: SimDeviceType;
  name?: string;
  /**
   * how the device reaches the platform: what an installer types into its management settings; none: a
   * device fresh from the box, which only serves its own HTTP API (what a network search finds)
   */
  management?:
    | { protocol: 'mqtt'; url: string; login: string; password: string }
    | { protocol: 'http'; url: string; login: string; password: string };
  /** heartbeat period in ms (the devices' 10 s by default); 0: only when told (`heartbeat()`) */
  heartbeatMs?: number;
  /** the device's own HTTP API (`/api/info`) and the control API, on loopback; 0: a free port */
  httpPort?: number;
  /**
   * the address its HTTP API listens on (default 127.0.0.1): any of 127.0.0.0/8 on Linux, where all of it
   * reaches loopback, so several devices share one port on addresses of their own, as on a real network
   */
  httpHost?: string;
  firmwareVersion?: string;
  /** how long a lock stays open after a remote opening, by the device's own timer (5 s by default) */
  lockOpenMs?: number;
  /** how long it waits for the platform to answer a push before it keeps the logs for later (5 s) */
  pushTimeoutMs?: number;
  /** the device's clock (ms since the epoch) — its own, settable (`setClock`, `POST /control/clock`) */
  now?: () => number;
}

/** The device's locks (1: first, 2: second): open now, and how many times they were opened (for tests). */
export type SimLocks = Record<1 | 2, { open: boolean; opened: number }>;

/** An identifier the device holds (../shared/DEVICES.md `/api/v1/access/identifier/item`). */
export interface SimIdentifier {
  uid: string;
  identifier_owner?: { name?: string; type?: 'owner' | 'guest' };
  identifier_type: 'card' | 'ukey' | 'inputCode' | 'face_id' | 'qr' | 'license_plate';
  identifier_number: string;
  /** which locks it opens */
  lock: 'first' | 'second' | 'all';
  valid?: {
    time?: { is_permanent?: boolean; from?: string; to?: string };
    passes?: { is_permanent?: boolean; max_passes?: number };
  };
  /** passes used so far (the device's own counter: a change of the item from the platform keeps it) */
  passes_used?: number;
  /** the keys of the time profiles in which it opens (none: at all times) */
  time_profiles?: string[];
  /** the keys of the time profiles in which it must not open */
  deny_time_profiles?: string[];
  /** a face identifier's photo to come (its SHA-256, hex): `PUT …/item/{uid}/face` brings it */
  face_sha256?: string;
}

/** A face identifier's photo as the device holds it (`PUT …/item/{uid}/face`). */
export interface SimFacePhoto {
  /** the picture, JPEG or PNG */
  photo: Buffer;
  sha256: string;
}

/** One decision at the door, as the device logged it. */
export interface SimDecision {
  time: string;
  identifier_type: string;
  identifier_number: string;
  lock: number;
  granted: boolean;
  /** the catalogue code of a refusal (`unknown`: the device does not hold it; `other`: another lock) */
  reason: DecisionReason | 'unknown' | 'other' | null;
}

/** One event of the device's log, as it pushes it (`POST /logs`). */
export interface SimLogEntry {
  event_id: string;
  time: string;
  kind: 'identifier_used' | 'identifier_refused' | 'door_opened' | 'call' | 'alarm';
  identifier_type?: string;
  identifier_number?: string;
  lock?: number;
  result?: string;
  reason?: string;
  number?: string;
  image?: string;
}

/** What presenting an identifier did. */
export interface PresentResult {
  granted: boolean;
  /** why not (see SimDecision) */
  reason: SimDecision['reason'];
  lock: number;
  event_id: string;
  /** the platform answered the push that carried the event (it is stored) */
  acknowledged: boolean;
}

/** The device's own number in the decision's data (it decides for itself only). */
const SELF = 1;
const IDENTIFIER_TYPES = ['card', 'ukey', 'inputCode', 'face_id', 'qr', 'license_plate'];
const LOCK_CHOICES = ['first', 'second', 'all'];

/** A request in the HTTP model, as the platform sends it over MQTT. */
interface PlatformRequest {
  request_id: string;
  method: string;
  uri: string;
  body?: unknown;
}

/**
 * One simulated device speaking the device side of ../shared/DEVICES.md: its own HTTP API (`GET /api/info`),
 * and towards the platform either MQTT (its serial's topics, `online` retained and `offline` as its last will,
 * requests answered on its response topic) or HTTP (`POST {url}/heartbeat` with its login and password).
 * Heartbeats every 10 s. A control API for tests: `heartbeat()`, `stop()` (goes offline politely), `kill()`
 * (drops the connection: the broker sends the last will), and the same over HTTP under `/control/`.
 */
export class SimulatedDevice {
  private client: MqttClient | null = null;
  private server: http.Server | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** requests the platform sent, newest last (for tests) */
  readonly requests: PlatformRequest[] = [];
  heartbeats = 0;
  httpPort = 0;
  /** the settings the platform sent it (`PUT /api/v1/settings`) */
  settings: Record<string, unknown> | null = null;
  /** how many times it applied each change (a request id applies once, however often it comes) */
  readonly applied = { settings: 0, restart: 0, reinit: 0, entities: 0 };
  /**
   * The replies of the request ids it applied, kept as a device keeps them across restarts (its flash): a
   * request id that comes again is answered with its first reply and not applied twice.
   */
  private readonly done = new Map<string, { status: number; body: unknown }>();
  /**
   * Tests' faults: `silent` — takes requests and neither applies nor answers them (a device that hangs);
   * `mute` — applies them but its replies are lost (dies before answering).
   */
  fault: 'none' | 'silent' | 'mute' = 'none';
  /**
   * A test's fault for the identifier API: the keys (an identifier's uid, a time profile's key) whose writes
   * the device refuses (422 with its reason), as a panel whose memory is full or that does not take a type.
   */
  readonly refuse = new Set<string>();
  /** the time profiles synced to it (`PUT /api/v1/access/identifier/time_profile/{key}`), by key */
  readonly timeProfiles = new Map<string, DeviceTimeProfile>();
  /** writes of the identifier API it applied (an item or a profile put or deleted; for tests and the bench) */
  writes = 0;
  /** every decision it made at the door, oldest first */
  readonly decisions: SimDecision[] = [];
  /** the held identifiers by `type:number` (checked against `identifiers` when read: tests change that map) */
  private readonly byNumber = new Map<string, string>();
  /** the index it decides with, made from what it holds (dropped when that changes) */
  private index: { access: AccessIndex; data: ReturnType<typeof accessDataFromHolding> } | null = null;
  /** the device's clock: null, the machine's; else a fixed offset from it (`setClock`) */
  private clockOffset: number | null = null;
  /** its locks: opened remotely (`lock/open/remote/accepted/{lock}`) or by an identifier presented, closed
   * again by its own timer */
  readonly locks: SimLocks = { 1: { open: false, opened: 0 }, 2: { open: false, opened: 0 } };
  private readonly lockTimers = new Map<number, NodeJS.Timeout>();
  /** the identifiers synced to it, by uid: the device decides from these alone, platform or not */
  readonly identifiers = new Map<string, SimIdentifier>();
  /** the face photos of its face identifiers, by uid (gone with the item) */
  readonly facePhotos = new Map<string, SimFacePhoto>();
  /** the log events not yet acknowledged by the platform, oldest first: sent again until they are */
  readonly pendingLogs: SimLogEntry[] = [];
  /** the events the platform acknowledged */
  logsAcknowledged = 0;
  private logSeq = 0;
  private readonly pushWaiters = new Map<string, (reply: { status: number; body: unknown }) => void>();
  private pushing: Promise<boolean> | null = null;

  constructor(readonly opts: SimDeviceOptions) {}

  get serial(): string {
    return this.opts.serial;
  }

  /** The device's time now (ms): its own clock, which an installer (or a test) sets. */
  now(): number {
    const base = this.opts.now ? this.opts.now() : Date.now();
    return this.clockOffset === null ? base : base + this.clockOffset;
  }

  /** Sets the device's clock to this instant (it runs on from there); null: back to the machine's. */
  setClock(at: number | Date | string | null): void {
    if (at === null) {
      this.clockOffset = null;
      return;
    }
    const t = typeof at === 'number' ? at : new Date(at).getTime();
    if (Number.isNaN(t)) throw new RangeError('not a time');
    this.clockOffset = 0;
    this.clockOffset = t - this.now();
  }

  get connected(): boolean {
    return this.opts.management?.protocol === 'mqtt' ? Boolean(this.client?.connected) : this.server !== null;
  }

  /** The address its HTTP API listens on. */
  get httpHost(): string {
    return this.opts.httpHost ?? '127.0.0.1';
  }

  /** What `GET /api/info` answers. */
  info(): Record<string, unknown> {
    return {
      firmware_version: this.opts.firmwareVersion ?? '2.4.1-sim',
      framework_version: '1.0.0',
      frontend_version: '1.0.0',
      api_version: 'v1',
      device_name: this.opts.name ?? `Simulated ${this.opts.type ?? 'panel'} ${this.opts.serial}`,
      device_type: this.opts.type ?? 'panel',
      device_serial_number: this.opts.serial,
      hybrid_enable: false,
      hybrid_version: '',
      commit: 'sim',
    };
  }

  async start(): Promise<void> {
    await this.listen();
    const m = this.opts.management;
    if (!m) return;
    if (m.protocol === 'mqtt') {
      const t = deviceTopics(this.opts.serial);
      this.client = await mqtt.connectAsync(m.url, {
        clientId: this.opts.serial,
        username: m.login,
        password: m.password,
        clean: true,
        reconnectPeriod: 1000,
        will: { topic: t.status, payload: Buffer.from('offline'), qos: 1, retain: true },
      });
      // each packet leaves at once (TCP no-delay), as a panel's firmware answering requests should: Nagle's
      // algorithm would hold a small reply until the broker's delayed acknowledgement
      const client = this.client;
      const noDelay = () => (client.stream as Partial<Socket> | undefined)?.setNoDelay?.(true);
      noDelay();
      client.on('connect', noDelay);
      this.client.on('message', (topic, payload) => {
        if (topic === t.push_reply) this.onPushReply(payload);
        else void this.onRequest(topic, payload).catch(() => undefined); // a reply lost with the connection
      });
      this.client.on('connect', () => void this.announce().catch(() => undefined));
      await this.client.subscribeAsync([t.request, t.push_reply], { qos: 1 });
      await this.announce();
    }
    const every = this.opts.heartbeatMs ?? DeviceTiming.heartbeatS * 1000;
    if (every > 0) {
      this.timer = setInterval(() => void this.heartbeat().catch(() => undefined), every);
      this.timer.unref();
    }
  }

  private async announce(): Promise<void> {
    await this.client?.publishAsync(deviceTopics(this.opts.serial).status, 'online', {
      qos: 1,
      retain: true,
    });
  }

  /** One heartbeat now, over the device's protocol. */
  async heartbeat(): Promise<void> {
    const m = this.opts.management;
    if (!m) throw new Error('no platform to send heartbeats to');
    const body = { firmware_version: this.info().firmware_version, uptime: Math.round(process.uptime()) };
    if (m.protocol === 'mqtt') {
      if (!this.client) throw new Error('not started');
      await this.client.publishAsync(
        deviceTopics(this.opts.serial).push,
        JSON.stringify({ request_id: randomUUID(), method: 'POST', uri: '/heartbeat', body }),
        { qos: 1 },
      );
    } else {
      const res = await fetch(`${m.url.replace(/\/+$/, '')}/heartbeat`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Basic ${Buffer.from(`${m.login}:${m.password}`).toString('base64')}`,
        },
        body: JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`heartbeat refused: ${res.status}`);
    }
    this.heartbeats++;
    // logs whose push went unanswered go again with the heartbeat
    if (this.pendingLogs.length) void this.flushLogs().catch(() => undefined);
  }

  // ----- identifiers, locks and the log --------------------------------------------------------------

  /** Adds or replaces an identifier, as the platform's sync does (`POST /api/v1/access/identifier/item`). */
  addIdentifier(item: Omit<SimIdentifier, 'uid'> & { uid?: string }): string {
    const uid = item.uid ?? randomUUID();
    const before = this.identifiers.get(uid);
    // the pass counter is the device's: a change of the item does not reset it (only `passes reset` does)
    const passes_used = before?.passes_used ?? item.passes_used;
    this.identifiers.set(uid, { ...item, uid, ...(passes_used !== undefined ? { passes_used } : {}) });
    this.byNumber.set(`${item.identifier_type}:${item.identifier_number}`, uid);
    this.index = null;
    return uid;
  }

  /** The item held for a type and number, if any. */
  private held(type: string, number: string): SimIdentifier | undefined {
    const uid = this.byNumber.get(`${type}:${number}`);
    const found = uid === undefined ? undefined : this.identifiers.get(uid);
    if (found && found.identifier_type === type && found.identifier_number === number) return found;
    if (uid !== undefined) this.byNumber.delete(`${type}:${number}`);
    // the map changed behind the index (a test's hand): look it up the long way
    const any = [...this.identifiers.values()].find(
      (i) => i.identifier_type === type && i.identifier_number === number,
    );
    if (any) this.byNumber.set(`${type}:${number}`, any.uid);
    return any;
  }

  /**
   * The decision at the door from what the device holds alone, with the platform's own function (`decide` of
   * @lintel/core over `accessDataFromHolding`): the held identifier's period, passes, time profiles (their
   * zone and holidays) and deny profiles. Not held: `unknown`; held for the other lock: `other`.
   */
  decide(
    number: string,
    lock: 1 | 2 = 1,
    type: SimIdentifier['identifier_type'] = 'card',
    at = this.now(),
  ): { granted: boolean; reason: SimDecision['reason']; item: SimIdentifier | undefined } {
    const found = this.held(type, number);
    if (!found) return { granted: false, reason: 'unknown', item: undefined };
    if (found.lock !== 'all' && found.lock !== (lock === 1 ? 'first' : 'second'))
      return { granted: false, reason: 'other', item: found };
    if (!this.index) {
      const data = accessDataFromHolding(SELF, {
        identifiers: [...this.identifiers.values()].map((i) => ({
          ...i,
          identifier_owner: {
            name: i.identifier_owner?.name ?? '',
            type: i.identifier_owner?.type ?? 'owner',
          },
          valid: {
            time: {
              is_permanent: i.valid?.time?.is_permanent ?? true,
              from: i.valid?.time?.from,
              to: i.valid?.time?.to,
            },
            passes: {
              is_permanent: i.valid?.passes?.is_permanent ?? true,
              max_passes: i.valid?.passes?.max_passes,
            },
          },
          time_profiles: i.time_profiles ?? [],
          deny_time_profiles: i.deny_time_profiles ?? [],
        })) as Array<DeviceIdentifierItem & { passes_used?: number }>,
        time_profiles: [...this.timeProfiles.values()],
      });
      this.index = { access: new AccessIndex(data.data), data };
    }
    const { access, data } = this.index;
    const held = data.lookup(type, number)!;
    // the counter as it is now (the index was made before the last passes)
    const identifier = { ...held, passes_count: found.passes_used ?? 0 };
    const zone = [...this.timeProfiles.values()].find((p) => typeof p.time_zone === 'string')?.time_zone;
    const d = access.decide(identifier, SELF, at, {
      tz: typeof zone === 'string' ? zone : 'UTC',
      holidays: data.holidays,
    });
    return { granted: d.allowed, reason: d.reason, item: found };
  }

  /**
   * Presents an identifier at a lock ("present card 123 at lock 1"): the device decides from the identifiers
   * synced to it — known, for that lock, within its time and passes — opens the lock or refuses, logs the
   * event and pushes it to the platform. Resolves once the platform acknowledged it or the push failed (the
   * event then stays in `pendingLogs` and goes again).
   */
  async presentCard(
    number: string,
    lock: 1 | 2 = 1,
    type: SimIdentifier['identifier_type'] = 'card',
  ): Promise<PresentResult> {
    const now = this.now();
    const decision = this.decide(number, lock, type, now);
    const found = decision.item;
    const reason = decision.reason ?? undefined;
    const granted = reason === undefined;
    if (granted && found) {
      found.passes_used = (found.passes_used ?? 0) + 1;
      this.openLock(lock);
    }
    const entry: SimLogEntry = {
      event_id: `${this.opts.serial}-${++this.logSeq}-${now.toString(36)}`,
      time: new Date(now).toISOString(),
      kind: granted ? 'identifier_used' : 'identifier_refused',
      identifier_type: type,
      identifier_number: number,
      lock,
      result: granted ? 'granted' : 'denied',
      ...(reason ? { reason } : {}),
    };
    this.decisions.push({
      time: entry.time,
      identifier_type: type,
      identifier_number: number,
      lock,
      granted,
      reason: decision.reason,
    });
    this.pendingLogs.push(entry);
    const acknowledged = await this.flushLogs().catch(() => false);
    return {
      granted,
      reason: decision.reason,
      lock,
      event_id: entry.event_id,
      acknowledged: acknowledged && !this.pendingLogs.includes(entry),
    };
  }

  /**
   * Pushes the pending log events (up to 100 a push) until none is left or a push goes unanswered; true when
   * all were acknowledged. One push at a time.
   */
  async flushLogs(): Promise<boolean> {
    while (this.pushing) await this.pushing;
    if (!this.pendingLogs.length) return true;
    this.pushing = (async () => {
      while (this.pendingLogs.length) {
        const batch = this.pendingLogs.slice(0, 100);
        const reply = await this.push('/logs', { events: batch });
        // a refusal (4xx) would be refused again: dropped; anything else goes again later — and so does a
        // 429, which says "later" (the device over its push budget, or the platform's queue full)
        if (!reply || reply.status >= 500 || reply.status === 429) return false;
        const sent = new Set(batch.map((e) => e.event_id));
        for (let i = this.pendingLogs.length - 1; i >= 0; i--)
          if (sent.has(this.pendingLogs[i]!.event_id)) this.pendingLogs.splice(i, 1);
        if (reply.status < 300) this.logsAcknowledged += batch.length;
      }
      return true;
    })().finally(() => (this.pushing = null));
    return this.pushing;
  }

  /** A push to the platform, and its answer (null: none in time, or no connection). */
  private async push(uri: string, body: unknown): Promise<{ status: number; body: unknown } | null> {
    const m = this.opts.management;
    // a device not pointed at a platform keeps its logs
    if (!m) return null;
    if (m.protocol === 'mqtt') {
      const client = this.client;
      if (!client?.connected) return null;
      const request_id = randomUUID();
      const answered = new Promise<{ status: number; body: unknown } | null>((resolve) => {
        const timer = setTimeout(() => {
          this.pushWaiters.delete(request_id);
          resolve(null);
        }, this.opts.pushTimeoutMs ?? 5000);
        timer.unref();
        this.pushWaiters.set(request_id, (r) => {
          clearTimeout(timer);
          resolve(r);
        });
      });
      await client.publishAsync(
        deviceTopics(this.opts.serial).push,
        JSON.stringify({ request_id, method: 'POST', uri, body }),
        { qos: 1 },
      );
      return answered;
    }
    try {
      const res = await fetch(`${m.url.replace(/\/+$/, '')}${uri}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Basic ${Buffer.from(`${m.login}:${m.password}`).toString('base64')}`,
        },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.opts.pushTimeoutMs ?? 5000),
      });
      const text = await res.text();
      return { status: res.status, body: text ? (JSON.parse(text) as unknown) : null };
    } catch {
      return null;
    }
  }

  private onPushReply(payload: Buffer): void {
    try {
      const r = JSON.parse(payload.toString('utf8')) as {
        request_id?: unknown;
        status?: unknown;
        body?: unknown;
      };
      const waiter = typeof r.request_id === 'string' ? this.pushWaiters.get(r.request_id) : undefined;
      if (!waiter) return;
      this.pushWaiters.delete(r.request_id as string);
      waiter({ status: Number(r.status ?? 200), body: r.body ?? null });
    } catch {
      // not an answer of ours
    }
  }

  private async onRequest(topic: string, payload: Buffer): Promise<void> {
    const t = deviceTopics(this.opts.serial);
    if (topic !== t.request) return;
    let req: PlatformRequest;
    try {
      req = JSON.parse(payload.toString('utf8')) as PlatformRequest;
    } catch {
      return;
    }
    this.requests.push(req);
    if (this.fault === 'silent') return;
    const reply = this.handle(req.request_id, req.method, req.uri, req.body);
    if (this.fault === 'mute') return;
    await this.client?.publishAsync(
      t.response,
      JSON.stringify({ request_id: req.request_id, status: reply.status, body: reply.body }),
      { qos: 1 },
    );
  }

  /** A request with its id: one already applied is answered again without applying it twice. */
  private handle(
    requestId: string | undefined,
    method: string,
    uri: string,
    body: unknown,
  ): { status: number; body: unknown } {
    const seen = requestId ? this.done.get(requestId) : undefined;
    if (seen) return seen;
    const reply = this.answer(method, uri, body);
    if (requestId && method !== 'GET' && reply.status < 300) this.done.set(requestId, reply);
    return reply;
  }

  /** The device's API, whichever way the request came. */
  private answer(method: string, uri: string, body?: unknown): { status: number; body: unknown } {
    if (method === 'GET' && uri === '/api/info') return { status: 200, body: this.info() };
    if (method === 'GET' && uri === '/api/v1/settings') return { status: 200, body: this.settings ?? {} };
    if (method === 'PUT' && uri === '/api/v1/settings') {
      if (typeof body !== 'object' || body === null || Array.isArray(body))
        return { status: 400, body: { message: 'settings must be an object' } };
      const { replace, ...settings } = body as Record<string, unknown>;
      // reinit replaces what it held; a settings change merges section by section
      this.settings = replace ? settings : { ...(this.settings ?? {}), ...settings };
      this.applied[replace ? 'reinit' : 'settings']++;
      return { status: 200, body: { applied: true } };
    }
    const lockOpen = /^\/api\/v1\/access\/general\/lock\/open\/remote\/accepted\/(\d+)$/.exec(uri);
    if (method === 'GET' && lockOpen) {
      const opened = this.openLock(Number(lockOpen[1]));
      // a door opened from afar is in the device's log like any other (issue 25 item 8: it logged nothing)
      if (opened.status === 200) void this.logDoorOpened(Number(lockOpen[1]), 'remote');
      return opened;
    }
    if (method === 'GET' && uri === '/api/v1/access/general/lock/status')
      return {
        status: 200,
        body: { items: ([1, 2] as const).map((lock) => ({ lock, open: this.locks[lock].open })) },
      };
    const identifiers = this.identifierApi(method, uri, body);
    if (identifiers) return identifiers;
    if (method === 'POST' && uri === '/api/v1/system/reboot/run') {
      this.applied.restart++;
      return { status: 200, body: { rebooting: true } };
    }
    return { status: 404, body: { message: 'not found' } };
  }

  /**
   * Logs a door opened without an identifier (`door_opened`, its source: `button`, `remote`, `emergency`,
   * `call`) and pushes it; resolves as `flushLogs` does.
   */
  logDoorOpened(lock: number, source: 'button' | 'remote' | 'emergency' | 'call'): Promise<boolean> {
    const now = this.now();
    this.pendingLogs.push({
      event_id: `${this.opts.serial}-${++this.logSeq}-${now.toString(36)}`,
      time: new Date(now).toISOString(),
      kind: 'door_opened',
      lock,
      reason: source,
    });
    return this.flushLogs().catch(() => false);
  }

  /** The exit button inside the door: the lock opens and the log says so. */
  pressButton(lock: 1 | 2 = 1): Promise<boolean> {
    this.openLock(lock);
    return this.logDoorOpened(lock, 'button');
  }

  /** Opens a lock (1 or 2) for `lockOpenMs`, as the relay of a panel does; another opening restarts it. */
  private openLock(lock: number): { status: number; body: unknown } {
    if (lock !== 1 && lock !== 2) return { status: 404, body: { message: `no lock ${lock}` } };
    const state = this.locks[lock];
    state.open = true;
    state.opened++;
    clearTimeout(this.lockTimers.get(lock));
    const timer = setTimeout(() => {
      state.open = false;
      this.lockTimers.delete(lock);
    }, this.opts.lockOpenMs ?? 5000);
    timer.unref();
    this.lockTimers.set(lock, timer);
    return { status: 200, body: { lock, opened: true } };
  }

  /**
   * The identifiers' API of ../shared/DEVICES.md: `GET /api/v1/access/identifier/items?page&limit`, `POST`
   * (or `PUT`) `/api/v1/access/identifier/item` → `{uid}`, `GET|PUT|DELETE …/item/{uid}`. Null: not its path.
   */
  private identifierApi(
    method: string,
    uri: string,
    body: unknown,
  ): { status: number; body: unknown } | null {
    const url = new URL(uri, 'http://device');
    if (method === 'GET' && url.pathname === '/api/v1/access/identifier/items') {
      const page = Math.max(1, Number(url.searchParams.get('page') ?? 1) || 1);
      const limit = Math.min(500, Math.max(1, Number(url.searchParams.get('limit') ?? 100) || 100));
      const all = [...this.identifiers.values()];
      return {
        status: 200,
        body: { items: all.slice((page - 1) * limit, page * limit), total: all.length, page, limit },
      };
    }
    if (method === 'GET' && url.pathname === '/api/v1/access/identifier/time_profiles') {
      const page = Math.max(1, Number(url.searchParams.get('page') ?? 1) || 1);
      const limit = Math.min(500, Math.max(1, Number(url.searchParams.get('limit') ?? 100) || 100));
      const all = [...this.timeProfiles.values()];
      return {
        status: 200,
        body: { items: all.slice((page - 1) * limit, page * limit), total: all.length, page, limit },
      };
    }
    const p = /^\/api\/v1\/access\/identifier\/time_profile\/([A-Za-z0-9_-]{1,64})$/.exec(url.pathname);
    if (p) return this.timeProfileApi(method, p[1]!, body);
    const f = /^\/api\/v1\/access\/identifier\/item\/([A-Za-z0-9_-]{1,64})\/face$/.exec(url.pathname);
    if (f) return this.faceApi(method, f[1]!, body);
    const m = /^\/api\/v1\/access\/identifier\/item(?:\/([A-Za-z0-9_-]{1,64}))?$/.exec(url.pathname);
    if (!m) return null;
    const uid = m[1];
    if (uid && method === 'GET') {
      const found = this.identifiers.get(uid);
      return found ? { status: 200, body: found } : { status: 404, body: { message: 'not found' } };
    }
    if (uid && this.refuse.has(uid) && method !== 'GET')
      return { status: 422, body: { message: 'refused by the device' } };
    if (uid && method === 'DELETE') {
      // deleting what it does not hold leaves it as it is: a delete applied twice is a delete applied once
      if (this.identifiers.delete(uid)) {
        this.index = null;
        this.writes++;
      }
      this.facePhotos.delete(uid);
      return { status: 200, body: { uid } };
    }
    if (method === 'POST' || method === 'PUT') {
      const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
      const type = b.identifier_type;
      const number = b.identifier_number;
      const lock = b.lock ?? 'all';
      const profileKeys = (v: unknown) =>
        v === undefined || (Array.isArray(v) && v.every((k) => typeof k === 'string' && k.length <= 64));
      if (
        typeof type !== 'string' ||
        !IDENTIFIER_TYPES.includes(type) ||
        typeof number !== 'string' ||
        !number ||
        number.length > 100 ||
        typeof lock !== 'string' ||
        !LOCK_CHOICES.includes(lock) ||
        !profileKeys(b.time_profiles) ||
        !profileKeys(b.deny_time_profiles)
      )
        return { status: 400, body: { message: 'identifier_type, identifier_number and lock are required' } };
      // one number of a type is one item: another uid with the same number is refused, as a panel does
      const key = typeof b.uid === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(b.uid) ? b.uid : undefined;
      const target = uid ?? key;
      const holder = this.held(type, number);
      const clash = holder && holder.uid !== target ? holder : undefined;
      if (clash)
        return { status: 409, body: { message: 'identifier number held by another item', uid: clash.uid } };
      const { passes_used: _counter, ...rest } = b as Partial<SimIdentifier>;
      void _counter;
      const id = this.addIdentifier({
        ...rest,
        uid: target,
        identifier_type: type as SimIdentifier['identifier_type'],
        identifier_number: number,
        lock: lock as SimIdentifier['lock'],
      });
      this.writes++;
      this.applied.entities++;
      return { status: 200, body: { uid: id } };
    }
    return { status: 405, body: { message: 'method not allowed' } };
  }

  /**
   * A face identifier's photo (docs/decisions.md "Face photos"): `PUT …/item/{uid}/face` `{photo: base64
   * JPEG or PNG, sha256}` for a face item it holds (404 for none, 422 for another type, a picture that is no
   * JPEG or PNG or whose SHA-256 is not the one named); `GET` answers it, `DELETE` removes it.
   */
  private faceApi(method: string, uid: string, body: unknown): { status: number; body: unknown } {
    const item = this.identifiers.get(uid);
    if (method === 'GET') {
      const held = this.facePhotos.get(uid);
      return held && item
        ? { status: 200, body: { photo: held.photo.toString('base64'), sha256: held.sha256 } }
        : { status: 404, body: { message: 'no face photo' } };
    }
    if (!item) return { status: 404, body: { message: 'not found' } };
    if (this.refuse.has(uid)) return { status: 422, body: { message: 'refused by the device' } };
    if (method === 'DELETE') {
      this.facePhotos.delete(uid);
      return { status: 200, body: { uid } };
    }
    if (method !== 'PUT') return { status: 405, body: { message: 'method not allowed' } };
    if (item.identifier_type !== 'face_id')
      return { status: 422, body: { message: 'not a face identifier' } };
    const b = (typeof body === 'object' && body !== null ? body : {}) as {
      photo?: unknown;
      sha256?: unknown;
    };
    if (typeof b.photo !== 'string' || typeof b.sha256 !== 'string')
      return { status: 400, body: { message: 'photo and sha256 are required' } };
    const photo = Buffer.from(b.photo, 'base64');
    const jpeg = photo[0] === 0xff && photo[1] === 0xd8;
    const png = photo.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    if (!jpeg && !png) return { status: 422, body: { message: 'photo is no JPEG or PNG' } };
    if (createHash('sha256').update(photo).digest('hex') !== b.sha256)
      return { status: 422, body: { message: 'sha256 does not match the photo' } };
    this.facePhotos.set(uid, { photo, sha256: b.sha256 });
    return { status: 200, body: { uid, sha256: b.sha256 } };
  }

  /** A time profile: `GET|PUT|DELETE /api/v1/access/identifier/time_profile/{key}`. */
  private timeProfileApi(method: string, key: string, body: unknown): { status: number; body: unknown } {
    if (method === 'GET') {
      const found = this.timeProfiles.get(key);
      return found ? { status: 200, body: found } : { status: 404, body: { message: 'not found' } };
    }
    if (this.refuse.has(key)) return { status: 422, body: { message: 'refused by the device' } };
    if (method === 'DELETE') {
      if (this.timeProfiles.delete(key)) {
        this.index = null;
        this.writes++;
      }
      return { status: 200, body: { key } };
    }
    if (method === 'PUT') {
      if (typeof body !== 'object' || body === null || Array.isArray(body))
        return { status: 400, body: { message: 'a time profile is an object' } };
      this.timeProfiles.set(key, { ...(body as Record<string, unknown>), key });
      this.index = null;
      this.writes++;
      this.applied.entities++;
      return { status: 200, body: { key } };
    }
    return { status: 405, body: { message: 'method not allowed' } };
  }

  private listen(): Promise<void> {
    const server = http.createServer((req, res) => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const url = new URL(req.url ?? '/', 'http://device');
      // the control API of tests and the demo
      if (req.method === 'POST' && url.pathname === '/control/heartbeat')
        return void this.heartbeat().then(
          () => send(200, { heartbeats: this.heartbeats }),
          (e: Error) => send(502, { message: e.message }),
        );
      if (req.method === 'GET' && url.pathname === '/control/state')
        return send(200, {
          serial: this.opts.serial,
          connected: this.connected,
          heartbeats: this.heartbeats,
          requests: this.requests.length,
          applied: this.applied,
          locks: this.locks,
          identifiers: this.identifiers.size,
          time_profiles: this.timeProfiles.size,
          time: new Date(this.now()).toISOString(),
          pending_logs: this.pendingLogs.length,
          logs_acknowledged: this.logsAcknowledged,
        });
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        let body: unknown;
        try {
          body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
        } catch {
          return send(400, { message: 'not JSON' });
        }
        // the device's clock: {time: ISO or ms, or null for the machine's}
        if (req.method === 'POST' && url.pathname === '/control/clock') {
          const at = (body as { time?: unknown } | undefined)?.time;
          if (at !== null && typeof at !== 'string' && typeof at !== 'number')
            return send(400, { message: 'time: an ISO date, ms since the epoch, or null' });
          try {
            this.setClock(at);
          } catch {
            return send(400, { message: 'not a time' });
          }
          return send(200, { time: new Date(this.now()).toISOString() });
        }
        // "present card 123 at lock 1": {number, lock?, type?}
        if (req.method === 'POST' && url.pathname === '/control/present') {
          const b = (body ?? {}) as { number?: unknown; lock?: unknown; type?: unknown };
          const number = typeof b.number === 'number' ? String(b.number) : b.number;
          const lock = b.lock === undefined ? 1 : b.lock;
          const type = b.type ?? 'card';
          if (
            typeof number !== 'string' ||
            !number ||
            (lock !== 1 && lock !== 2) ||
            typeof type !== 'string' ||
            !IDENTIFIER_TYPES.includes(type)
          )
            return send(400, { message: 'number (text or digits), lock 1 or 2, type of an identifier' });
          return void this.presentCard(number, lock, type as SimIdentifier['identifier_type']).then(
            (r) => send(200, r),
            (e: Error) => send(502, { message: e.message }),
          );
        }
        const id = req.headers['x-request-id'];
        // the faults of tests: a request dropped unanswered, or applied and its reply lost
        if (this.fault === 'silent') return void res.destroy();
        const reply = this.handle(
          typeof id === 'string' ? id : undefined,
          req.method ?? 'GET',
          url.pathname,
          body,
        );
        if (this.fault === 'mute') return void res.destroy();
        send(reply.status, reply.body);
      });
    });
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.opts.httpPort ?? 0, this.httpHost, () => {
        this.httpPort = (server.address() as { port: number }).port;
        resolve();
      });
    });
  }

  /** Goes offline politely: says `offline` on its status topic, then disconnects. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const client = this.client;
    this.client = null;
    if (client?.connected)
      await client.publishAsync(deviceTopics(this.opts.serial).status, 'offline', { qos: 1, retain: true });
    if (client) await closeMqtt(client);
    await this.closeHttp();
  }

  /** Dies: the connection drops without a word, so the broker publishes its last will. */
  async kill(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const client = this.client;
    this.client = null;
    if (client) {
      client.options.reconnectPeriod = 0;
      (client.stream as { destroy?: () => void } | undefined)?.destroy?.();
      await client.endAsync(true).catch(() => undefined);
    }
    await this.closeHttp();
  }

  private async closeHttp(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server)
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        // a platform's kept-alive connections (its fetch pool) must not keep a stopped device listening
        server.closeAllConnections();
      });
  }
}
