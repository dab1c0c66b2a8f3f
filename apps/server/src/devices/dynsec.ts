import { createHmac, randomUUID } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import mqtt, { type MqttClient } from 'mqtt';
import type { FastifyBaseLogger } from 'fastify';
import {
  closeMqtt,
  DeviceTopicAccess,
  deviceTopicFilter,
  deviceTopics,
  type DeviceTopicKind,
} from '@lintel/core';
import type { ServerContext } from '../context';
import { z } from 'zod';
import type { DB } from '../db/schema';
import { defineJob } from '../jobs/define';
import { PLATFORM_USER } from './embedded-broker';

/**
 * Mosquitto's dynamic-security plugin, driven through its MQTT control API (`$CONTROL/dynamic-security/v1`,
 * replies on `…/response`) with the plugin's admin account (MQTT_USERNAME / MQTT_PASSWORD, `MQTT_DYNSEC=1`).
 *
 * - Each device is a client of the plugin: username its serial number, password the one Lintel issued, and
 *   one role of its own, `lintel-device-{serial}`, allowing exactly its topics (../shared/DEVICES.md):
 *   publish on its push, response and status topics, subscribe to its request and status topics.
 * - The platform signs in as `$lintel` (no serial number has a `$`), with a password derived from the admin's
 *   and the role `lintel-platform`: publish requests to devices, subscribe (shared or not) to what they send.
 *   The admin account itself is never changed: the plugin disconnects a client whose roles change.
 * - Kept in step by durable jobs: `device.broker_account {serial}` makes the broker's account of one serial
 *   match the database (created, password set, or deleted when no device has it), retried until the broker
 *   answers; `device.broker_reconcile` compares every account with every device (at start, on every
 *   reconnection to the broker, and on demand) and makes the missing ones, deletes the orphans.
 */
export const BROKER_ACCOUNT_JOB = 'device.broker_account';
export const BROKER_RECONCILE_JOB = 'device.broker_reconcile';
export const DYNSEC_TOPIC = '$CONTROL/dynamic-security/v1';
export const PLATFORM_ROLE = 'lintel-platform';
const DEVICE_ROLE_PREFIX = 'lintel-device-';
export const deviceRole = (serial: string) => `${DEVICE_ROLE_PREFIX}${serial}`;

export interface DynsecAcl {
  acltype:
    | 'publishClientSend'
    | 'publishClientReceive'
    | 'subscribeLiteral'
    | 'subscribePattern'
    | 'unsubscribeLiteral'
    | 'unsubscribePattern';
  topic: string;
  allow: boolean;
  priority?: number;
}

export interface DynsecResponse {
  command: string;
  error?: string;
  data?: Record<string, unknown>;
}

/** A device's own topics, as the plugin's ACLs (the same rights the embedded broker gives it). */
export function deviceAcls(serial: string): DynsecAcl[] {
  const topics = deviceTopics(serial);
  const out: DynsecAcl[] = [];
  for (const [kind, topic] of Object.entries(topics) as Array<[DeviceTopicKind, string]>) {
    const access = DeviceTopicAccess[kind];
    if (access !== 'read') out.push({ acltype: 'publishClientSend', topic, allow: true });
    if (access !== 'write') out.push({ acltype: 'subscribeLiteral', topic, allow: true });
  }
  return out;
}

/** The platform's rights: requests to every device, and what every device sends (plain or shared). */
export function platformAcls(): DynsecAcl[] {
  const out: DynsecAcl[] = [
    { acltype: 'publishClientSend', topic: deviceTopicFilter('request'), allow: true },
  ];
  for (const kind of ['push', 'status', 'response'] as const) {
    out.push({ acltype: 'subscribePattern', topic: deviceTopicFilter(kind), allow: true });
    out.push({ acltype: 'subscribePattern', topic: `$share/+/${deviceTopicFilter(kind)}`, allow: true });
  }
  return out;
}

/** The platform's broker password: derived from the admin's, so every instance knows it and none stores it. */
export const platformPassword = (adminPassword: string) =>
  createHmac('sha256', adminPassword).update('lintel platform account').digest('base64url');

const notFound = (r: DynsecResponse) => /not found/i.test(r.error ?? '');
const exists = (r: DynsecResponse) => /already exists/i.test(r.error ?? '');

/** One connection to the plugin's control topic, as its admin; commands answered by correlation data. */
export class DynsecClient {
  private client: MqttClient | null = null;
  private readonly prefix = randomUUID();
  private seq = 0;
  private connectedOnce = false;
  private readonly pending = new Map<
    string,
    { resolve: (r: DynsecResponse) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }
  >();

  constructor(
    private readonly opts: {
      url: string;
      username: string;
      password: string;
      log: FastifyBaseLogger;
      timeoutMs: number;
      /** each reconnection after the first (the broker may have lost what was sent while it was away) */
      onReconnect(): void;
    },
  ) {}

  get connected(): boolean {
    return Boolean(this.client?.connected);
  }

  async start(): Promise<void> {
    const client = await mqtt.connectAsync(this.opts.url, {
      username: this.opts.username,
      password: this.opts.password,
      clientId: `lintel-dynsec-${randomUUID()}`,
      clean: true,
      reconnectPeriod: 2000,
      connectTimeout: 10_000,
    });
    this.client = client;
    client.on('message', (_topic, payload) => this.onMessage(payload));
    client.on('error', (err) =>
      this.opts.log.warn({ err: err.message }, 'dynsec: the broker connection failed'),
    );
    client.on('connect', () => {
      void client
        .subscribeAsync(`${DYNSEC_TOPIC}/response`, { qos: 1 })
        .then(() => {
          if (this.connectedOnce) this.opts.onReconnect();
        })
        .catch((err: Error) => this.opts.log.warn({ err: err.message }, 'dynsec: subscribing failed'));
    });
    const [granted] = await client.subscribeAsync(`${DYNSEC_TOPIC}/response`, { qos: 1 });
    if (granted?.qos === 128)
      throw new Error(`the broker refused ${DYNSEC_TOPIC}/response to ${this.opts.username}: not its admin?`);
    this.connectedOnce = true;
  }

  async stop(): Promise<void> {
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new Error('dynsec: stopped'));
      this.pending.delete(id);
    }
    const client = this.client;
    this.client = null;
    if (client) await closeMqtt(client);
  }

  private onMessage(payload: Buffer): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(payload.toString('utf8'));
    } catch {
      return;
    }
    const responses = (parsed as { responses?: unknown }).responses;
    if (!Array.isArray(responses)) return;
    for (const r of responses as Array<DynsecResponse & { correlationData?: unknown }>) {
      if (typeof r.correlationData !== 'string') continue;
      const waiting = this.pending.get(r.correlationData);
      if (!waiting) continue;
      this.pending.delete(r.correlationData);
      clearTimeout(waiting.timer);
      waiting.resolve({ command: r.command, error: r.error, data: r.data });
    }
  }

  /** Sends commands in one message; their answers in order. Throws when the broker does not answer in time. */
  async run(commands: Array<Record<string, unknown> & { command: string }>): Promise<DynsecResponse[]> {
    const client = this.client;
    if (!client?.connected) throw new Error('dynsec: the broker is not reachable');
    const ids = commands.map(() => `${this.prefix}:${++this.seq}`);
    const answers = ids.map(
      (id) =>
        new Promise<DynsecResponse>((resolve, reject) => {
          const timer = setTimeout(() => {
            this.pending.delete(id);
            reject(new Error('dynsec: the broker did not answer'));
          }, this.opts.timeoutMs);
          this.pending.set(id, { resolve, reject, timer });
        }),
    );
    // every answer is awaited below; none may reject unhandled meanwhile
    for (const a of answers) a.catch(() => undefined);
    await client.publishAsync(
      DYNSEC_TOPIC,
      JSON.stringify({ commands: commands.map((c, i) => ({ ...c, correlationData: ids[i] })) }),
      { qos: 1 },
    );
    return Promise.all(answers);
  }

  /** Like `run`, but an error other than the ones `tolerated` lets through is thrown. */
  async must(
    commands: Array<Record<string, unknown> & { command: string }>,
    tolerated: (r: DynsecResponse) => boolean = () => false,
  ): Promise<DynsecResponse[]> {
    const out = await this.run(commands);
    for (const r of out) if (r.error && !tolerated(r)) throw new Error(`dynsec: ${r.command}: ${r.error}`);
    return out;
  }

  /** The platform's role and account (created, or completed when a role's ACL is missing). */
  async ensurePlatform(adminPassword: string): Promise<void> {
    const wanted = platformAcls();
    const [role] = await this.run([{ command: 'getRole', rolename: PLATFORM_ROLE }]);
    if (role && notFound(role)) {
      await this.must([{ command: 'createRole', rolename: PLATFORM_ROLE, acls: wanted }], exists);
    } else {
      const have = ((role?.data?.role as { acls?: DynsecAcl[] } | undefined)?.acls ?? []).map(
        (a) => `${a.acltype} ${a.topic}`,
      );
      const missing = wanted.filter((a) => !have.includes(`${a.acltype} ${a.topic}`));
      if (missing.length)
        await this.must(
          missing.map((a) => ({ command: 'addRoleACL', rolename: PLATFORM_ROLE, ...a })),
          exists,
        );
    }
    const [client] = await this.run([{ command: 'getClient', username: PLATFORM_USER }]);
    if (client && notFound(client)) {
      await this.must([
        {
          command: 'createClient',
          username: PLATFORM_USER,
          password: platformPassword(adminPassword),
          textname: 'Lintel (the platform)',
          roles: [{ rolename: PLATFORM_ROLE }],
        },
      ]);
      return;
    }
    const roles = (client?.data?.client as { roles?: Array<{ rolename: string }> } | undefined)?.roles ?? [];
    if (!roles.some((r) => r.rolename === PLATFORM_ROLE))
      await this.must([{ command: 'addClientRole', username: PLATFORM_USER, rolename: PLATFORM_ROLE }]);
  }

  /** The platform's password set again (the admin's changed since the account was made). */
  async resetPlatformPassword(adminPassword: string): Promise<void> {
    await this.must([
      { command: 'setClientPassword', username: PLATFORM_USER, password: platformPassword(adminPassword) },
    ]);
  }

  /** One device's account as the database has it: made or updated with `password`, or deleted (null). */
  async syncDevice(serial: string, password: string | null): Promise<void> {
    const role = deviceRole(serial);
    if (password === null) {
      await this.must(
        [
          { command: 'deleteClient', username: serial },
          { command: 'deleteRole', rolename: role },
        ],
        notFound,
      );
      return;
    }
    await this.must([{ command: 'createRole', rolename: role, acls: deviceAcls(serial) }], exists);
    const [created] = await this.must(
      [
        {
          command: 'createClient',
          username: serial,
          password,
          // the account signs in only under its own client id: no device can end another's connection
          // by connecting with its client id (issue 20 item 5)
          clientid: serial,
          textname: 'Lintel device',
          roles: [{ rolename: role }],
        },
      ],
      exists,
    );
    if (created && exists(created))
      // it was there: its password is set (which ends its connections), its role given back if it lost it
      await this.must(
        [
          { command: 'setClientPassword', username: serial, password },
          { command: 'setClientId', username: serial, clientid: serial },
          { command: 'addClientRole', username: serial, rolename: role },
        ],
        exists,
      );
  }

  /**
   * The accounts of devices the broker has (username → whether it is complete: its role, and its client id
   * pinned to its serial number).
   */
  async deviceAccounts(): Promise<Map<string, boolean>> {
    const [r] = await this.must([{ command: 'listClients', verbose: true, count: -1 }]);
    const clients = (r?.data?.clients ?? []) as Array<{
      username: string;
      clientid?: string;
      roles?: Array<{ rolename: string }>;
    }>;
    return new Map(
      clients
        .filter((c) => (c.roles ?? []).some((x) => x.rolename === deviceRole(c.username)))
        .map((c) => [c.username, c.clientid === c.username]),
    );
  }
}

type Q = Kysely<DB> | Transaction<DB>;

/** Queues one serial's account to be brought in step with the database (in the caller's transaction). */
export async function queueBrokerAccount(app: ServerContext, q: Q, serial: string): Promise<void> {
  if (!app.config.mqtt.url || !app.config.mqtt.dynsec) return;
  await app.jobs.enqueue(q, BROKER_ACCOUNT_JOB, { serial });
}

/** Queues a comparison of every account with every device. */
export async function queueBrokerReconcile(app: ServerContext, q: Q = app.db): Promise<number | null> {
  if (!app.config.mqtt.url || !app.config.mqtt.dynsec) return null;
  return app.jobs.enqueue(q, BROKER_RECONCILE_JOB, {});
}

const passwordOf = async (app: ServerContext, serial: string): Promise<string | null> => {
  const r = await sql<{
    password: string;
  }>`select password from devices where serial_number = ${serial}`.execute(app.db);
  return r.rows[0]?.password || null;
};

/** What the broker lacks is made, what no device has any more is deleted; how many of each. */
export async function reconcileBroker(
  app: ServerContext,
  dynsec: DynsecClient,
): Promise<{ created: number; deleted: number }> {
  const accounts = await dynsec.deviceAccounts();
  const r = await sql<{
    serial_number: string;
    password: string;
  }>`select serial_number, password from devices where password <> ''`.execute(app.db);
  const serials = new Set(r.rows.map((d) => d.serial_number));
  let created = 0;
  let deleted = 0;
  for (const d of r.rows)
    if (!accounts.get(d.serial_number)) {
      await dynsec.syncDevice(d.serial_number, d.password);
      created++;
    }
  for (const serial of accounts.keys())
    if (!serials.has(serial)) {
      await dynsec.syncDevice(serial, null);
      deleted++;
    }
  if (created || deleted) app.log.info({ created, deleted }, 'dynsec: broker accounts reconciled');
  return { created, deleted };
}

/** The jobs that keep the broker's accounts in step (defined on every instance; they run where the gateway does). */
export function defineBrokerAccountJobs(app: ServerContext): void {
  const dynsec = () => {
    const d = app.devices.dynsec;
    if (!d?.connected) throw new Error('dynsec: this instance has no connection to the broker control API');
    return d;
  };
  app.jobs.define(
    defineJob({
      kind: BROKER_ACCOUNT_JOB,
      payload: z.object({ serial: z.string() }),
      maxAttempts: 30,
      run: async (_ctx, { serial }) => dynsec().syncDevice(serial, await passwordOf(app, serial)),
    }),
  );
  app.jobs.define(
    defineJob({
      kind: BROKER_RECONCILE_JOB,
      payload: z.object({}),
      maxAttempts: 30,
      run: async () => void (await reconcileBroker(app, dynsec())),
    }),
  );
}
