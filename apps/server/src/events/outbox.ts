import { AsyncLocalStorage } from 'node:async_hooks';
import { AUTH_CHANGED_CHANNEL, ROUTES_CHANGED_CHANNEL } from '../engine/request-cache';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { z } from 'zod';
import pg from 'pg';
import { Redis } from 'ioredis';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { DB } from '../db/schema';
import type { Clock } from '../clock';
import type { EventBus } from '../realtime/bus';
import type { EventDef } from './define';

export const EVENTS_CHANNEL = 'lintel_events';

/**
 * How an event committed on one instance reaches the others: `local` (one instance, PGlite), `postgres`
 * (a NOTIFY in the event's transaction; the others read the row by id) or `redis` (the rows published to a
 * Redis channel of this installation once committed; REDIS_URL).
 */
export type Fanout = 'local' | 'postgres' | 'redis';

interface OutboxRow {
  id: number;
  topic: string;
  type: string;
  payload: Record<string, unknown>;
  /** the audience as JSON text, as stored */
  audience: string;
}

/** A NOTIFY payload must stay under 8000 bytes: the ids of one emit, comma-separated, in pieces under that. */
export function notifyPayloads(ids: readonly number[], max = 7000): string[] {
  const out: string[] = [];
  let cur = '';
  for (const id of ids) {
    const s = String(id);
    if (cur && cur.length + 1 + s.length > max) {
      out.push(cur);
      cur = '';
    }
    cur = cur ? `${cur},${s}` : s;
  }
  if (cur) out.push(cur);
  return out;
}

/** The ids a NOTIFY of the events channel names (`12` or `12,13,14`); anything else names none. */
export function idsOfNotification(payload: string | undefined): number[] {
  if (!payload || !/^\d+(,\d+)*$/.test(payload)) return [];
  return payload.split(',').map(Number);
}

/** The ids emitted within one unit of work (a dispatched command, a job), delivered when it ends. */
const scope = new AsyncLocalStorage<OutboxRow[]>();

/** An event about to be written: its row and its JSON. */
interface PendingRow {
  topic: string;
  type: string;
  payload: Record<string, unknown>;
  json: string;
  audience: string;
}

/** The events a `gathered` transaction emitted so far (written at its end). */
const gather = new AsyncLocalStorage<{ trx: Transaction<DB>; rows: PendingRow[] }>();

/**
 * Typed events through an outbox. `emit(trx, …)` writes the row in the caller's transaction (and, on
 * PostgreSQL, a NOTIFY, which PostgreSQL sends only on commit). When the unit of work ends, its committed
 * rows are delivered to this instance's bus; other instances LISTEN and read the row by id. A row of a
 * rolled-back transaction does not exist, so nobody receives it. Each instance delivers an id once.
 */
export class EventOutbox {
  private readonly delivered = new Set<number>();
  private readonly deliveredOrder: number[] = [];
  /**
   * Ids this instance wrote within a unit of work still running: the unit delivers them from memory once it
   * ends, so their NOTIFY (which this instance hears too, as soon as the commit is done, often before the
   * unit has ended) costs no statement reading them back.
   */
  private readonly own = new Set<number>();
  /** emitted outside any unit of work: delivered by the next flush */
  private loose: OutboxRow[] = [];
  /** the delivery in progress (and those queued behind it) */
  private deliveries: Promise<void> = Promise.resolve();
  private listener: pg.Client | null = null;
  private stopped = false;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private redisPub: Redis | null = null;
  private redisSub: Redis | null = null;
  private redisChannel = '';
  /** the key that signs what this installation's instances publish on Redis (table installation_secrets) */
  private redisKey: Buffer | null = null;
  /** events delivered here that came from other instances (tests and diagnostics) */
  readonly received = { postgres: 0, redis: 0, forged: 0 };

  constructor(
    private readonly opts: {
      db: Kysely<DB>;
      kind: 'pglite' | 'postgres';
      databaseUrl?: string;
      fanout: Fanout;
      redisUrl?: string;
      /** PostgreSQL said the facts the auth cache holds changed (NOTIFY lintel_auth, migration 0028) */
      onAuthChanged?: () => void;
      /** PostgreSQL said the facts the routing of calls reads changed (NOTIFY lintel_sip_routes, migration 0079) */
      onRoutesChanged?: () => void;
      /** the PostgreSQL listener is connected (true) or lost (false): notifications may have been missed */
      onListening?: (on: boolean) => void;
      bus: EventBus;
      clock: Clock;
      log: FastifyBaseLogger;
      /** the `events` event log (logs/log-files.ts): one line per event delivered here, never its contents */
      eventLog?: Pick<FastifyBaseLogger, 'info'>;
    },
  ) {}

  /**
   * Writes the event in `trx`; it is delivered only if that transaction commits. Emit inside a unit of work
   * (every dispatched command and job is one); outside one, call `flush()` after the commit.
   */
  async emit<P extends z.ZodType>(
    trx: Transaction<DB> | Kysely<DB>,
    event: EventDef<P>,
    payload: z.input<P>,
  ): Promise<number> {
    const [id] = await this.emitMany(trx, event, [payload]);
    return id!;
  }

  /**
   * Writes several events of one kind in `trx` in a constant number of statements, however many they are:
   * one multi-row insert and (PostgreSQL) one `pg_notify` whose payload lists the ids (issue 26 item 1: a
   * push of 100 device events was 200 round trips). Delivered like `emit`'s, in the order given. Returns
   * the ids in that order.
   */
  async emitMany<P extends z.ZodType>(
    trx: Transaction<DB> | Kysely<DB>,
    event: EventDef<P>,
    payloads: readonly z.input<P>[],
  ): Promise<number[]> {
    if (!payloads.length) return [];
    const audience = JSON.stringify(event.audience);
    const rows = payloads.map((payload): PendingRow => {
      const parsed = event.payload.parse(payload) as Record<string, unknown>;
      const topic = typeof event.topic === 'function' ? event.topic(parsed as z.output<P>) : event.topic;
      const json = JSON.stringify(parsed);
      // delivered as a reader of the row would see it (JSON: dates as text)
      return {
        topic,
        type: event.type,
        payload: JSON.parse(json) as Record<string, unknown>,
        json,
        audience,
      };
    });
    // inside `gathered` for this transaction: written with the others at its end
    const gathering = gather.getStore();
    if (gathering && gathering.trx === trx) {
      gathering.rows.push(...rows);
      return [];
    }
    return this.write(trx, rows);
  }

  /**
   * Runs `work` with the events it emits in `trx` gathered, then writes them all in one multi-row insert with
   * ONE NOTIFY for the transaction (issue 26 item 1: the group commit of device events emits device events,
   * ACS events and notifications for many pushes; each `emitMany` would be an insert and a NOTIFY of its own,
   * and a NOTIFY serialises the commits of the transactions that send one). Inside, `emitMany` for `trx`
   * answers no ids (they are drawn at the end); the rows are delivered as `emitMany`'s, in the order emitted.
   */
  async gathered<T>(trx: Transaction<DB>, work: () => Promise<T>): Promise<T> {
    const store = { trx, rows: [] as PendingRow[] };
    const result = await gather.run(store, work);
    await this.write(trx, store.rows);
    return result;
  }

  private async write(trx: Transaction<DB> | Kysely<DB>, rows: readonly PendingRow[]): Promise<number[]> {
    if (!rows.length) return [];
    const now = this.opts.clock.now();
    // the rows as four arrays (issue 26 item 1): one statement of five parameters however many rows, in the
    // order given (ordinality), so the identities are drawn in that order
    const insert = sql`insert into event_outbox (topic, type, payload, audience, created_at)
      select r.topic, r.type, r.payload::jsonb, r.audience, ${now}
      from unnest(${rows.map((r) => r.topic)}::text[], ${rows.map((r) => r.type)}::text[],
        ${rows.map((r) => r.json)}::text[], ${rows.map((r) => r.audience)}::text[])
        with ordinality as r(topic, type, payload, audience, n)
      order by r.n
      returning id`;
    let ids: number[];
    // with PostgreSQL the NOTIFY goes in the same statement as the insert when its ids fit one payload (ids
    // of up to 10 digits: 600 of them stay under the 8000-byte limit); more take a second statement
    if (this.opts.fanout === 'postgres' && rows.length <= 600) {
      const r = await sql<{ ids: number[] }>`
        with o as (${insert})
        select array_agg(id order by id) as ids,
          pg_notify(${EVENTS_CHANNEL}, string_agg(id::text, ',' order by id)) as sent
        from o`.execute(trx);
      ids = (r.rows[0]?.ids ?? []).map(Number);
    } else {
      const r = await sql<{ id: number }>`${insert}`.execute(trx);
      ids = r.rows.map((x) => Number(x.id)).sort((a, b) => a - b);
      if (this.opts.fanout === 'postgres')
        await sql`select pg_notify(${EVENTS_CHANNEL}, p) from (values ${sql.join(
          notifyPayloads(ids).map((c) => sql`(${c}::text)`),
        )}) v(p)`.execute(trx);
    }
    // identities are drawn row after row in the order of the values: ascending ids are that order. The
    // unit of work keeps the rows it wrote, so delivering them here costs no statement to read them back.
    const written = ids.map((id, i) => {
      const r = rows[i]!;
      return { id, topic: r.topic, type: r.type, payload: r.payload, audience: r.audience };
    });
    const unit = scope.getStore();
    if (unit) {
      unit.push(...written);
      for (const id of ids) this.own.add(id);
    } else this.loose.push(...written);
    return ids;
  }

  /** Runs a unit of work and then delivers the events it committed. */
  async unit<T>(work: () => Promise<T>): Promise<T> {
    const rows: OutboxRow[] = [];
    try {
      return await scope.run(rows, work);
    } finally {
      if (rows.length) await this.deliverWritten(rows);
    }
  }

  /**
   * One transaction as a unit of work: `work` runs in it, and its events are delivered once it is over. When it
   * resolved, it committed, and so did every row it wrote: they are delivered without the statement that reads
   * back which ids exist (issue 26 item 1: one of a device-log batch's statements). When it failed, whatever
   * was written elsewhere meanwhile is checked as a unit's rows are.
   */
  async transaction<T>(db: Kysely<DB>, work: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
    const rows: OutboxRow[] = [];
    let committed = false;
    try {
      const result = await scope.run(rows, () => db.transaction().execute(work));
      committed = true;
      return result;
    } finally {
      if (rows.length) await this.deliverWritten(rows, committed);
    }
  }

  /** Delivers what was emitted outside a unit of work; the transactions are over by now. */
  async flush(): Promise<void> {
    const rows = this.loose;
    this.loose = [];
    if (rows.length) await this.deliverWritten(rows);
  }

  /**
   * The rows this instance wrote, once their unit of work is over: those whose transaction committed are
   * delivered from memory. Whether it committed is read once for them all (an id that exists committed): a
   * unit whose transactions all committed — the usual case — is told by one short statement over the ids;
   * `committed`: they are known to have (`transaction`), and nothing is read.
   */
  private deliverWritten(rows: readonly OutboxRow[], committed = false): Promise<void> {
    const run = this.deliveries.then(async () => {
      try {
        const todo = rows.filter((r) => !this.delivered.has(r.id));
        if (!todo.length) return;
        let sent = todo;
        if (!committed) {
          const exist = await sql<{ id: number }>`
          select id from event_outbox where id in (${sql.join(todo.map((r) => r.id))})`.execute(this.opts.db);
          const ids = new Set(exist.rows.map((r) => Number(r.id)));
          sent = todo.filter((r) => ids.has(r.id));
        }
        for (const row of sent) this.deliver(row);
        if (this.redisPub && sent.length)
          this.redisPub.publish(this.redisChannel, this.sign(JSON.stringify(sent))).catch((err: Error) => {
            this.opts.log.error({ err: err.message }, 'events could not be published to Redis');
          });
      } finally {
        for (const r of rows) this.own.delete(r.id);
      }
    });
    this.deliveries = run.catch(() => undefined);
    return run;
  }

  /**
   * Deliveries run one after another, whatever asked for them (this instance's units of work, another
   * instance's notifications): each reads its rows by id, and reads run side by side on the pool would
   * finish out of order, so a console would see a topic's events shuffled.
   */
  private deliverIds(ids: readonly number[], from: 'here' | 'postgres' = 'here'): Promise<void> {
    const run = this.deliveries.then(() => this.deliverNow(ids, from));
    this.deliveries = run.catch(() => undefined);
    return run;
  }

  private async deliverNow(ids: readonly number[], from: 'here' | 'postgres'): Promise<void> {
    // this instance's own ids are its units' to deliver, from memory
    const todo = ids.filter((id) => !this.delivered.has(id) && !this.own.has(id));
    if (!todo.length) return;
    const rows =
      await sql<OutboxRow>`select id, topic, type, payload, audience from event_outbox where id in (${sql.join(todo)}) order by id`.execute(
        this.opts.db,
      );
    if (from === 'postgres') this.received.postgres += rows.rows.length;
    for (const row of rows.rows) this.deliver(row);
    // with Redis, the instance that committed the rows tells the others, rows and all
    if (from === 'here' && this.redisPub && rows.rows.length)
      this.redisPub.publish(this.redisChannel, this.sign(JSON.stringify(rows.rows))).catch((err: Error) => {
        this.opts.log.error({ err: err.message }, 'events could not be published to Redis');
      });
  }

  /** `<hex HMAC-SHA256 of the body>.<body>`: what the instances of this installation publish on Redis. */
  private sign(body: string): string {
    return `${createHmac('sha256', this.redisKey!).update(body).digest('hex')}.${body}`;
  }

  /** The body of a message signed with the installation's key, else null (anyone who can reach Redis can publish). */
  private verify(message: string): string | null {
    const dot = message.indexOf('.');
    if (dot !== 64 || !this.redisKey) return null;
    const body = message.slice(dot + 1);
    const expected = createHmac('sha256', this.redisKey).update(body).digest();
    const given = Buffer.from(message.slice(0, dot), 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected) ? body : null;
  }

  /** Rows another instance published on Redis; a message not signed with the installation's key is dropped. */
  private receiveRedis(message: string): void {
    const body = this.verify(message);
    if (body === null) {
      // counted, and logged now and then (a flood of forgeries must not flood the log)
      if (this.received.forged++ % 1000 === 0)
        this.opts.log.warn(
          { forged: this.received.forged },
          'a message on the Redis channel was not signed by an instance: dropped',
        );
      return;
    }
    let rows: OutboxRow[];
    try {
      rows = JSON.parse(body) as OutboxRow[];
      if (!Array.isArray(rows)) return;
    } catch {
      return;
    }
    for (const row of rows) {
      if (!this.delivered.has(Number(row.id))) this.received.redis++;
      this.deliver(row);
    }
  }

  private deliver(row: OutboxRow): void {
    const id = Number(row.id);
    if (this.delivered.has(id)) return;
    this.delivered.add(id);
    this.deliveredOrder.push(id);
    if (this.deliveredOrder.length > 10_000) this.delivered.delete(this.deliveredOrder.shift()!);
    this.opts.eventLog?.info({ id, topic: row.topic, type: row.type }, 'event');
    this.opts.bus.publish(
      row.topic,
      { type: row.type, ...row.payload },
      JSON.parse(row.audience) as unknown,
      id,
    );
  }

  /**
   * Listens for the other instances' events: with PostgreSQL on a connection of its own (reconnecting), with
   * Redis on the installation's channel (ioredis reconnects and subscribes again by itself).
   */
  async start(): Promise<void> {
    this.stopped = false;
    if (this.opts.fanout === 'redis' && this.opts.redisUrl) await this.startRedis(this.opts.redisUrl);
    // on PostgreSQL the listener also hears the auth cache's invalidations, whatever carries the events
    if (this.opts.databaseUrl) await this.connect();
  }

  private async startRedis(url: string): Promise<void> {
    // one installation's channel: several Lintels (and test databases) may share one Redis
    const first = await sql<{
      instance_id: string;
    }>`select instance_id from projects order by id limit 1`.execute(this.opts.db);
    this.redisChannel = `lintel:events:${first.rows[0]?.instance_id ?? 'default'}`;
    // the signing key: made by the first instance that needs it, read by the others from the same database
    await sql`insert into installation_secrets (name, value) values ('redis_signing_key', ${randomBytes(32).toString('hex')})
      on conflict (name) do nothing`.execute(this.opts.db);
    const key = await sql<{
      value: string;
    }>`select value from installation_secrets where name = 'redis_signing_key'`.execute(this.opts.db);
    this.redisKey = Buffer.from(key.rows[0]!.value, 'hex');
    const log = (role: string) => (err: Error) =>
      this.opts.log.warn({ err: err.message, role }, 'Redis connection error; reconnecting');
    const pub = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 3 });
    const sub = new Redis(url, { lazyConnect: true });
    pub.on('error', log('publish'));
    sub.on('error', log('subscribe'));
    sub.on('message', (channel: string, message: string) => {
      if (channel === this.redisChannel) this.receiveRedis(message);
    });
    this.redisPub = pub;
    this.redisSub = sub;
    try {
      await Promise.all([pub.connect(), sub.connect()]);
      await sub.subscribe(this.redisChannel);
    } catch (err) {
      pub.disconnect();
      sub.disconnect();
      this.redisPub = this.redisSub = null;
      // a start without it would keep this instance's events from the others: say so and stop
      throw new Error(
        `REDIS_URL is set but Redis does not answer (${(err as Error).message}): events between instances go through it`,
      );
    }
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.opts.databaseUrl });
    const retry = (err: Error) => {
      if (this.stopped || this.listener !== client) return;
      this.opts.log.warn({ err: err.message }, 'event listener lost its connection; reconnecting');
      this.listener = null;
      this.opts.onListening?.(false);
      client.end().catch(() => undefined);
      this.reconnectTimer = setTimeout(() => void this.connect().catch(retry), 1000);
    };
    client.on('error', retry);
    // the notifications of one commit arrive together: read their rows in one statement
    let batch: number[] = [];
    client.on('notification', (n) => {
      if (n.channel === AUTH_CHANGED_CHANNEL) return this.opts.onAuthChanged?.();
      if (n.channel === ROUTES_CHANGED_CHANNEL) return this.opts.onRoutesChanged?.();
      if (n.channel !== EVENTS_CHANNEL) return;
      // a commit's ids, comma-separated (emitMany); an id alone from an older instance is the same
      const ids = idsOfNotification(n.payload);
      if (!ids.length) return;
      const first = batch.length === 0;
      batch.push(...ids);
      if (!first) return;
      setImmediate(() => {
        const ids = batch;
        batch = [];
        this.deliverIds(ids, 'postgres').catch((err: Error) =>
          this.opts.log.error({ err: err.message }, 'event delivery failed'),
        );
      });
    });
    this.listener = client;
    await client.connect();
    await client.query(`listen ${AUTH_CHANGED_CHANNEL}`);
    await client.query(`listen ${ROUTES_CHANGED_CHANNEL}`);
    if (this.opts.fanout === 'postgres') await client.query(`listen ${EVENTS_CHANNEL}`);
    if (this.listener === client) this.opts.onListening?.(true);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.opts.onListening?.(false);
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    const client = this.listener;
    this.listener = null;
    await client?.end().catch(() => undefined);
    await this.flush().catch(() => undefined);
    const redis = [this.redisSub, this.redisPub];
    this.redisSub = this.redisPub = null;
    await Promise.all(redis.map((r) => r?.quit().catch(() => r.disconnect())));
  }

  /** Forgets delivered rows older than `maxAgeS` (a job runs it now and then). */
  async prune(maxAgeS = 24 * 3600): Promise<number> {
    const before = new Date(this.opts.clock.now().getTime() - maxAgeS * 1000);
    const r = await sql`delete from event_outbox where created_at < ${before}`.execute(this.opts.db);
    return Number(r.numAffectedRows ?? 0);
  }
}
