import crypto from 'node:crypto';
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema';
import { z } from 'zod';
import type { AuthInfo, ServerContext } from '../context';
import { Caller } from '../engine/caller';
import { mayReceive } from '../events/define';
import { defineJob } from '../jobs/define';
import { refusedRange } from '../devices/outbound';

/**
 * Webhooks (docs/decisions.md "Webhooks"): the platform's events, as the outbox holds them, sent to the
 * project's HTTPS endpoints.
 * - The **pump** reads the outbox past a cursor kept in the database (`webhook_cursor`, locked with SKIP LOCKED:
 *   of several instances one reads at a time, and none twice) and, in one transaction with the cursor's move,
 *   writes a delivery for each active webhook of the event's project that lists its type (or none), was made
 *   before the event (its `from_event_id`), and whose maker may receive it now (the websocket's own check,
 *   `mayReceive`, with his role and groups read afresh) — and a `webhook.deliver` job for it. It runs every
 *   `pollMs`, and at each event while webhooks are active.
 * - The **job** posts the event signed with the webhook's secret (`X-Lintel-Signature: t=<unix>,v1=<hex
 *   HMAC-SHA256 of "t.body">`), follows no redirect, reads a bounded reply, and counts only a 2xx; anything
 *   else is retried with the jobs' back-off until `failed`. Each attempt is written to the delivery (the log).
 * - Where it may send: https only, and never to the server itself (loopback), the link (link-local: cloud
 *   metadata) or the unspecified address, checked on the address the name resolves to as it connects (so a
 *   name cannot be re-pointed between the check and the connection). `LINTEL_WEBHOOK_INSECURE` lifts both for
 *   tests and closed labs.
 */

/** How many outbox rows one pass of the pump reads. */
const PUMP_BATCH = 500;
/** The most of an endpoint's reply read (the status is what counts). */
const REPLY_MAX_BYTES = 64 * 1024;

export const WebhookDeliverJob = defineJob({
  kind: 'webhook.deliver',
  payload: z.object({ deliveryId: z.number().int() }),
  maxAttempts: 8,
  run: (ctx, payload, job) => ctx.app.webhooks.deliver(payload.deliveryId, job.attempts >= job.max_attempts),
});

interface Hook {
  id: number;
  project_id: number;
  events: string[];
  from_event_id: string;
  created_by: number | null;
}

/** A maker's identity as it is now, with his groups (the scoped audiences need them); null when he is gone. */
async function reach(q: Kysely<DB>, userId: number): Promise<AuthInfo | null> {
  const row = (
    await sql<{
      account_id: number;
      project_id: number;
      role_id: number;
      permissions: string[];
    }>`select u.account_id, u.project_id, u.role_id, r.permissions from users u join roles r on r.id = u.role_id
      where u.id = ${userId}`.execute(q)
  ).rows[0];
  if (!row) return null;
  const auth: AuthInfo = {
    sessionId: 0,
    userId,
    accountId: row.account_id,
    projectId: row.project_id,
    roleId: row.role_id,
    permissions: new Set(row.permissions),
  };
  const caller = new Caller(q, auth);
  const own = await caller.domains();
  const subtree = await caller.subtree();
  return { ...auth, groups: { own: new Set(own), subtree: new Set(subtree) } };
}

interface OutboxRow {
  id: number;
  type: string;
  payload: Record<string, unknown>;
  audience: string;
  created_at: Date;
}

export interface WebhookSettings {
  /** http and loopback addresses allowed (LINTEL_WEBHOOK_INSECURE; tests and closed labs) */
  insecure: boolean;
  /** how long an endpoint may take to answer (LINTEL_WEBHOOK_TIMEOUT_MS, default 10 s) */
  timeoutMs: number;
  /** how often the pump looks for events besides being woken by them (LINTEL_WEBHOOK_POLL_MS, default 5 s) */
  pollMs: number;
}

export class WebhookService {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;
  private again = false;
  private unsubscribe: (() => void) | null = null;
  /** the last pass found active webhooks: events wake the pump only then (the poll finds new ones) */
  private active = false;

  constructor(private readonly contextOf: () => ServerContext) {}

  private get app() {
    return this.contextOf();
  }

  start(): void {
    // every event delivered on this instance wakes the pump (one pass at a time; the next one catches up)
    this.unsubscribe = this.app.events.subscribe(() => {
      if (this.active) void this.pump().catch(() => undefined);
    });
    const poll = () => {
      this.timer = setTimeout(() => {
        void this.pump()
          .catch((err: Error) => this.app.log.warn({ err: err.message }, 'webhooks: the pump failed'))
          .finally(() => this.timer && poll());
      }, this.app.config.webhooks.pollMs);
      this.timer.unref();
    };
    poll();
  }

  async stop(): Promise<void> {
    this.unsubscribe?.();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
  }

  /** Reads the outbox on to its end, writing the deliveries it owes; how many it wrote. */
  pump(): Promise<number> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      let written = 0;
      do {
        this.again = false;
        for (;;) {
          const pass = await this.pumpOnce();
          written += pass.written;
          if (pass.read < PUMP_BATCH) break;
        }
      } while (this.again);
      return written;
    })().finally(() => (this.running = null));
    return this.running;
  }

  private async pumpOnce(): Promise<{ read: number; written: number }> {
    // all in one transaction (PGlite has one connection): the cursor locked first, so a webhook committed
    // before the lock is read with it, and one committed after starts past what this pass reads
    return this.app.db.transaction().execute(async (trx) => {
      const cursor = (
        await sql<{
          last_event_id: string;
        }>`select last_event_id from webhook_cursor where id = 1 for update skip locked`.execute(trx)
      ).rows[0];
      // another instance is reading: it will write what is owed
      if (!cursor) return { read: 0, written: 0 };
      const last = Number(cursor.last_event_id);
      const hooks = (
        await sql<Hook>`select id, project_id, events, from_event_id, created_by from webhooks
          where is_active`.execute(trx)
      ).rows;
      this.active = hooks.length > 0;
      if (!hooks.length) {
        // nothing to send: the cursor follows the outbox
        await sql`update webhook_cursor set last_event_id = greatest(last_event_id, coalesce((select max(id) from event_outbox), 0)) where id = 1`.execute(
          trx,
        );
        return { read: 0, written: 0 };
      }
      const rows = (
        await sql<OutboxRow>`select id, type, payload, audience, created_at from event_outbox
          where id > ${last} order by id limit ${PUMP_BATCH}`.execute(trx)
      ).rows;
      const makers = new Map<number, AuthInfo | null>();
      let written = 0;
      for (const row of rows) {
        const id = Number(row.id);
        for (const h of hooks) {
          if (h.project_id !== row.payload.projectId || id <= Number(h.from_event_id)) continue;
          if (h.events.length && !h.events.includes(row.type)) continue;
          if (h.created_by === null) continue;
          if (!makers.has(h.created_by)) makers.set(h.created_by, await reach(trx, h.created_by));
          const maker = makers.get(h.created_by);
          if (!maker || !mayReceive(maker, JSON.parse(row.audience), row.payload)) continue;
          written += await this.owe(trx, h, id, row.type, row.payload, new Date(row.created_at));
        }
      }
      if (rows.length)
        await sql`update webhook_cursor set last_event_id = ${Number(rows[rows.length - 1]!.id)} where id = 1`.execute(
          trx,
        );
      return { read: rows.length, written };
    });
  }

  /** Writes one delivery and its job (once per webhook and event); 1 when it was new. */
  private async owe(
    trx: Kysely<DB>,
    hook: Pick<Hook, 'id' | 'project_id'>,
    eventId: number | null,
    type: string,
    data: Record<string, unknown>,
    at: Date,
  ): Promise<number> {
    const body = JSON.stringify({ id: eventId, type, created_at: at.toISOString(), data });
    const r = await sql<{ id: string }>`insert into webhook_deliveries
        (project_id, webhook_id, event_id, event_type, body, created_at)
      values (${hook.project_id}, ${hook.id}, ${eventId}, ${type}, ${body}, ${this.app.clock.now()})
      on conflict (webhook_id, event_id) do nothing returning id`.execute(trx);
    const id = r.rows[0]?.id;
    if (id === undefined) return 0;
    await this.app.jobs.enqueue(trx, WebhookDeliverJob, { deliveryId: Number(id) });
    return 1;
  }

  /** `webhook.test`: a `WebhookTest` event to one webhook, now. */
  async test(hook: { id: number; project_id: number }): Promise<number> {
    return this.app.db.transaction().execute(async (trx) => {
      await this.owe(trx, hook, null, 'WebhookTest', { webhookId: hook.id }, this.app.clock.now());
      const r = await sql<{
        id: string;
      }>`select max(id) as id from webhook_deliveries where webhook_id = ${hook.id} and event_id is null`.execute(
        trx,
      );
      return Number(r.rows[0]!.id);
    });
  }

  /** One attempt of a delivery; throws (so the job tries again later) unless the endpoint took it. */
  async deliver(deliveryId: number, last: boolean): Promise<void> {
    const db = this.app.db;
    const row = (
      await sql<{
        state: string;
        body: string;
        url: string;
        secret: string;
        event_type: string;
      }>`select d.state, d.body, d.event_type, w.url, w.secret from webhook_deliveries d
        join webhooks w on w.id = d.webhook_id where d.id = ${deliveryId}`.execute(db)
    ).rows[0];
    // the webhook was deleted, or the delivery already went
    if (!row || row.state === 'delivered') return;
    const now = this.app.clock.now();
    const t = Math.floor(now.getTime() / 1000);
    const signature = crypto.createHmac('sha256', row.secret).update(`${t}.${row.body}`).digest('hex');
    let status: number | null = null;
    let error: string | null = null;
    try {
      status = await this.post(row.url, row.body, {
        'content-type': 'application/json',
        'user-agent': 'Lintel-Webhooks/1',
        'x-lintel-event': row.event_type,
        'x-lintel-delivery': String(deliveryId),
        'x-lintel-signature': `t=${t},v1=${signature}`,
      });
      if (status < 200 || status >= 300) error = `HTTP ${status}`;
    } catch (err) {
      error = (err as Error).message;
    }
    const state = error === null ? 'delivered' : last ? 'failed' : 'pending';
    await sql`update webhook_deliveries set state = ${state}, attempts = attempts + 1,
        response_status = ${status}, error = ${error},
        delivered_at = ${state === 'delivered' ? now : null} where id = ${deliveryId}`.execute(db);
    if (error !== null) throw new Error(`webhook delivery ${deliveryId}: ${error}`);
  }

  /** POSTs the body; the endpoint's status. No redirect is followed, the reply is read up to a bound. */
  private post(url: string, body: string, headers: Record<string, string>): Promise<number> {
    const { insecure, timeoutMs } = this.app.config.webhooks;
    const target = new URL(url);
    if (target.protocol !== 'https:' && !insecure) return Promise.reject(new Error('https is required'));
    const lib = target.protocol === 'https:' ? https : http;
    // an address written in the URL is never looked up (Node connects to it at once): checked here
    const literal = target.hostname.replace(/^\[|\]$/g, '');
    if (net.isIP(literal) && refusedRange(literal, insecure))
      return Promise.reject(new Error(`refused address ${literal}`));
    // the address is checked as the connection is made: a name re-pointed after a check gains nothing
    const lookup: typeof dns.lookup = ((
      host: string,
      options: dns.LookupOptions,
      done: (err: Error | null, address: string | dns.LookupAddress[], family?: number) => void,
    ) => {
      dns.lookup(host, { ...options, all: true }, (err, addresses) => {
        if (err) return done(err, '');
        const list = addresses as dns.LookupAddress[];
        const bad = list.find((a) => refusedRange(a.address, insecure));
        if (bad) return done(new Error(`refused address ${bad.address}`), '');
        if (options.all) return done(null, list);
        done(null, list[0]!.address, list[0]!.family);
      });
    }) as typeof dns.lookup;
    return new Promise((resolve, reject) => {
      const req = lib.request(
        target,
        {
          method: 'POST',
          headers: { ...headers, 'content-length': Buffer.byteLength(body) },
          lookup,
          timeout: timeoutMs,
        },
        (res) => {
          let read = 0;
          res.on('data', (chunk: Buffer) => {
            read += chunk.length;
            if (read > REPLY_MAX_BYTES) res.destroy();
          });
          res.on('close', () => resolve(res.statusCode ?? 0));
          res.on('error', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', reject);
      req.end(body);
    });
  }
}
