import type { FastifyInstance, FastifyRequest } from 'fastify';
import type * as Net from 'node:net';
import fastifyWebsocket from '@fastify/websocket';
import type { RawData, WebSocket } from 'ws';
import { sql } from 'kysely';
import {
  API_BASE,
  WS_PATH,
  WsClientMessage,
  WsClose,
  WsCloseReason,
  WsLimits,
  WsReply,
  errorBody,
  wsError,
  type WsServerMessage,
} from '@lintel/core';
import { z } from 'zod';
import type { AuthInfo, CallerInfo, ServerContext } from '../context';
import { dispatchOperation } from '../pipeline/dispatch';
import { signedIn } from '../pipeline/handler';
import { defaultWebsocketSettings, type WebsocketSettings } from '../config';
import { authenticateToken, sessionsAuth } from '../auth/sessions';
import { Caller } from '../engine/caller';
import { AppError, parseInput } from '../errors';
import { eventDefs, mayReceive, type EventDef } from '../events/define';
import type { RealtimeMessage } from './bus';
import { resolveTopic, topicDefs, type TopicDef } from './topics';

export const WS_ROUTE = `${API_BASE}${WS_PATH}`;

interface Subscription {
  def: TopicDef;
  params: Record<string, string>;
  /** while its backlog is read: the live events that arrived meanwhile, sent after it */
  held: RealtimeMessage[] | null;
}

/** What a publish carries (the protocol's limits were checked with the message). */
const PublishArgs = z.object({ text: z.string() });

interface Conn {
  ws: WebSocket;
  auth: AuthInfo;
  /** where the socket came from, for the pipeline (an audited denial names the address) */
  caller: CallerInfo;
  expiresAt: number;
  subs: Map<string, Subscription>;
  window: { start: number; count: number };
  alive: boolean;
  /** the socket's messages are handled one after the other */
  queue: Promise<void>;
}

interface OutboxRow {
  id: string | number;
  type: string;
  payload: Record<string, unknown>;
  audience: string;
}

/**
 * The application websocket (spec part 2 §7 "Real-time channels"), a module of the lifecycle. A socket
 * signs in with its access token, subscribes to declared topics (realtime/topics.ts) if it may read them,
 * and gets each event of the bus (realtime/bus.ts, fed by the outbox on every instance) whose audience
 * includes its caller. An expired token closes it with 4401; so does a revoked session.
 */
export class RealtimeSockets {
  private readonly conns = new Set<Conn>();
  private readonly byTopic = new Map<string, Set<Conn>>();
  private running = false;
  private offBus: (() => void) | null = null;
  private intervals: NodeJS.Timeout[] = [];

  /** Made with the way to the context it is part of (`context.sockets`, server.ts), read when it runs. */
  constructor(
    private readonly contextOf: () => ServerContext,
    private readonly settings: WebsocketSettings = defaultWebsocketSettings,
    private readonly topics: readonly TopicDef[] = topicDefs,
  ) {}

  private get app(): ServerContext {
    return this.contextOf();
  }

  /** Open sockets signed in on this instance. */
  get size(): number {
    return this.conns.size;
  }

  /** Sockets of this instance subscribed to a topic. */
  subscribers(topic: string): number {
    return this.byTopic.get(topic)?.size ?? 0;
  }

  /** The route `/api/v0/ws`; registered before the server listens, served once the module started. */
  async register(fastify: FastifyInstance): Promise<void> {
    await fastify.register(fastifyWebsocket, {
      options: { maxPayload: WsLimits.maxMessageBytes },
      // a socket's own errors (a frame over the limit): ws closes it with the right code; just note it
      errorHandler: (err, _socket, req) => req.log.info({ err: err.message }, 'websocket error'),
    });
    fastify.route({
      method: 'GET',
      url: WS_ROUTE,
      // a plain GET: this address speaks only websocket
      handler: (_req, reply) =>
        reply.status(426).send(errorBody('wrong_parameters', { upgrade: 'websocket' })),
      wsHandler: (socket, req) => this.accept(socket, req),
    });
  }

  async start(): Promise<void> {
    this.offBus = this.app.events.subscribe((m) => this.fromBus(m));
    const every = (ms: number, fn: () => void) => {
      const t = setInterval(fn, ms);
      t.unref();
      this.intervals.push(t);
    };
    every(this.settings.sweepMs, () => this.sweep());
    every(this.settings.pingMs, () => this.ping());
    every(this.settings.revalidateMs, () => void this.revalidateAll());
    this.running = true;
  }

  /** Closes every socket with 1001 (clients reconnect, here after a restart or to another instance). */
  async stop(): Promise<void> {
    this.running = false;
    for (const t of this.intervals) clearInterval(t);
    this.intervals = [];
    this.offBus?.();
    this.offBus = null;
    const open = [...this.conns];
    const closed = open.map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.ws.readyState === c.ws.CLOSED) return resolve();
          c.ws.once('close', () => resolve());
        }),
    );
    for (const c of open) c.ws.close(WsClose.goingAway, WsCloseReason.serverStopping);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(closed), new Promise<void>((r) => (timer = setTimeout(r, 2000)))]);
    clearTimeout(timer);
    for (const c of open) if (c.ws.readyState !== c.ws.CLOSED) c.ws.terminate();
  }

  /** Closes the sockets whose access token has expired by the server's clock. */
  sweep(): void {
    const now = this.app.clock.now().getTime();
    for (const c of this.conns)
      if (c.expiresAt <= now) this.close(c, WsClose.unauthenticated, WsCloseReason.tokenExpired);
  }

  private ping(): void {
    for (const c of this.conns) {
      if (!c.alive) {
        c.ws.terminate();
        continue;
      }
      c.alive = false;
      c.ws.ping();
    }
  }

  /** Reads the callers of every open socket again (on a timer; tests call it). */
  revalidateAll(): Promise<void> {
    return this.revalidate([...this.conns]);
  }

  /**
   * Reads the callers of these sockets again: a revoked session closes its socket; a changed role keeps
   * only the subscriptions the caller may still read (each dropped one is answered `method_prohibited`).
   */
  private async revalidate(conns: readonly Conn[]): Promise<void> {
    if (!conns.length) return;
    let now: Map<number, AuthInfo>;
    try {
      now = await sessionsAuth(
        this.app,
        conns.map((c) => c.auth.sessionId),
      );
    } catch (err) {
      this.app.log.warn({ err: (err as Error).message }, 'websocket callers could not be read again');
      return;
    }
    for (const c of conns) {
      if (!this.conns.has(c)) continue;
      const auth = now.get(c.auth.sessionId);
      if (!auth) {
        this.close(c, WsClose.unauthenticated, WsCloseReason.invalidToken);
        continue;
      }
      // the groups as they were until read again (a group added or moved reaches the socket here)
      c.auth = { ...auth, groups: c.auth.groups };
      if ([...c.subs.values()].some((sub) => sub.def.groups))
        await this.readGroups(c).catch((err: Error) =>
          this.app.log.warn({ err: err.message }, 'websocket caller groups could not be read again'),
        );
      for (const [topic, sub] of c.subs)
        if (!sub.def.read(auth, sub.params)) {
          this.removeSub(c, topic);
          this.send(c, wsError(topic, 'method_prohibited', { topic }));
        }
    }
  }

  private close(c: Conn, code: number, reason: string): void {
    this.drop(c);
    c.ws.close(code, reason);
  }

  private drop(c: Conn): void {
    if (!this.conns.delete(c)) return;
    for (const topic of c.subs.keys()) this.removeSub(c, topic);
  }

  private removeSub(c: Conn, topic: string): void {
    c.subs.delete(topic);
    const set = this.byTopic.get(topic);
    set?.delete(c);
    if (set && !set.size) this.byTopic.delete(topic);
  }

  private async accept(ws: WebSocket, req: FastifyRequest): Promise<void> {
    if (!this.running) {
      ws.close(WsClose.tryAgainLater, WsCloseReason.notServed);
      return;
    }
    // messages sent before the token is checked wait for it (bounded by the message rate)
    const early: { raw: RawData; binary: boolean }[] = [];
    let conn: Conn | null = null;
    let gone = false;
    ws.on('message', (raw, binary) => {
      if (conn) this.onMessage(conn, raw, binary);
      else if (early.length < this.settings.messagesPerWindow) early.push({ raw, binary });
    });
    ws.on('close', () => {
      gone = true;
      if (conn) this.drop(conn);
    });
    const token = (req.query as { access_token?: unknown }).access_token;
    let checked: Awaited<ReturnType<typeof authenticateToken>>;
    try {
      checked =
        typeof token === 'string' && token
          ? await authenticateToken(this.app, token)
          : { refused: 'invalid_token' };
    } catch (err) {
      req.log.error({ err: (err as Error).message }, 'websocket sign-in failed');
      if (!gone) ws.close(WsClose.tryAgainLater, 'internal_error');
      return;
    }
    if (gone) return;
    if (!this.running) {
      ws.close(WsClose.goingAway, WsCloseReason.serverStopping);
      return;
    }
    if ('refused' in checked) {
      ws.close(WsClose.unauthenticated, checked.refused);
      return;
    }
    // a user's sockets are bounded: a stolen or scripted token cannot hold thousands open (issue 20)
    let held = 0;
    for (const other of this.conns) if (other.auth.userId === checked.auth.userId) held++;
    if (held >= this.settings.maxSocketsPerUser) {
      ws.close(WsClose.policy, WsCloseReason.tooManySockets);
      return;
    }
    const c: Conn = {
      ws,
      auth: checked.auth,
      caller: {
        ip: req.ip,
        userAgent: typeof req.headers['user-agent'] === 'string' ? req.headers['user-agent'] : null,
        locale: String(req.headers['accept-language'] ?? '')
          .toLowerCase()
          .startsWith('ru')
          ? 'ru'
          : 'en',
      },
      expiresAt: checked.expiresAt.getTime(),
      subs: new Map(),
      window: { start: Date.now(), count: 0 },
      alive: true,
      queue: Promise.resolve(),
    };
    ws.on('pong', () => (c.alive = true));
    this.conns.add(c);
    conn = c;
    this.send(c, {
      topic: null,
      data: {
        type: WsReply.connected,
        user_id: c.auth.userId,
        expires_at: checked.expiresAt.toISOString(),
      },
    });
    for (const m of early) this.onMessage(c, m.raw, m.binary);
  }

  private onMessage(c: Conn, raw: RawData, binary: boolean): void {
    const now = Date.now();
    if (now - c.window.start >= this.settings.windowS * 1000) c.window = { start: now, count: 0 };
    c.window.count++;
    if (c.window.count > 2 * this.settings.messagesPerWindow) {
      this.close(c, WsClose.policy, WsCloseReason.tooManyMessages);
      return;
    }
    if (c.window.count > this.settings.messagesPerWindow) {
      const seconds = Math.max(1, Math.ceil((c.window.start + this.settings.windowS * 1000 - now) / 1000));
      this.send(c, wsError(null, 'too_many_requests', { seconds }));
      return;
    }
    const text = binary
      ? null
      : Buffer.isBuffer(raw)
        ? raw.toString('utf8')
        : Buffer.from(raw as ArrayBuffer).toString('utf8');
    c.queue = c.queue
      .then(() => this.handle(c, text))
      .catch((err: unknown) => {
        this.app.log.error({ err: (err as Error)?.message }, 'websocket message failed');
        this.send(c, wsError(null, 'internal_error'));
      });
  }

  private async handle(c: Conn, text: string | null): Promise<void> {
    if (!this.conns.has(c)) return;
    let json: unknown;
    try {
      if (text === null) throw new Error('binary');
      json = JSON.parse(text);
    } catch {
      this.send(c, wsError(null, 'invalid_data_sent', { reason: 'not_json' }));
      return;
    }
    const claimed = (json as { topic?: unknown } | null)?.topic;
    const topicOf = typeof claimed === 'string' && claimed.length <= WsLimits.maxTopicLength ? claimed : null;
    try {
      const msg = parseInput(WsClientMessage, json);
      if (msg.type === 'subscribe') await this.subscribe(c, msg.topic, msg.since);
      else if (msg.type === 'unsubscribe') {
        this.removeSub(c, msg.topic);
        this.send(c, { topic: msg.topic, data: { type: WsReply.unsubscribed } });
      } else await this.publish(c, msg.topic, msg.text);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      this.send(c, wsError(topicOf, err.key, err.data));
    }
  }

  private resolve(c: Conn, topic: string): { def: TopicDef; params: Record<string, string> } {
    const resolved = resolveTopic(topic, this.topics);
    if (!resolved) throw new AppError('item_not_found', { topic });
    if (!resolved.def.read(c.auth, resolved.params)) throw new AppError('method_prohibited', { topic });
    return resolved;
  }

  /** The caller's groups, for the events scoped by group (`AuthInfo.groups`). */
  private async readGroups(c: Conn): Promise<void> {
    const caller = new Caller(this.app.db, c.auth);
    const [own, subtree] = await Promise.all([caller.domains(), caller.subtree()]);
    c.auth = { ...c.auth, groups: { own: new Set(own), subtree: new Set(subtree) } };
  }

  private async subscribe(c: Conn, topic: string, since: number | undefined): Promise<void> {
    const { def, params } = this.resolve(c, topic);
    if (def.groups && !c.auth.groups) await this.readGroups(c);
    let sub = c.subs.get(topic);
    if (!sub) {
      if (c.subs.size >= this.settings.maxSubscriptions)
        throw new AppError('limit_exceeded', { used: c.subs.size, max: this.settings.maxSubscriptions });
      sub = { def, params, held: null };
      c.subs.set(topic, sub);
      let set = this.byTopic.get(topic);
      if (!set) this.byTopic.set(topic, (set = new Set()));
      set.add(c);
    }
    // live events from here on are held while the backlog is read, then sent after it
    if (since !== undefined) sub.held ??= [];
    const last = await this.lastId();
    this.send(c, { topic, data: { type: WsReply.subscribed, last_id: last } });
    if (since === undefined) return;
    const sent = new Set<number>();
    try {
      const backlog = await this.backlog(c, topic, since);
      if (backlog === 'resync') this.send(c, { topic, data: { type: WsReply.resync, last_id: last } });
      else
        for (const m of backlog) {
          sent.add(m.id!);
          this.send(c, m);
        }
    } finally {
      const held = sub.held ?? [];
      sub.held = null;
      if (c.subs.get(topic) === sub)
        for (const m of held) if (m.id === undefined || !sent.has(m.id)) this.deliver(c, m);
    }
  }

  private async lastId(): Promise<number> {
    const r = await sql<{ id: string | null }>`select max(id) as id from event_outbox`.execute(this.app.db);
    return Number(r.rows[0]?.id ?? 0);
  }

  /**
   * The events of a topic after `since` that the caller may receive, oldest first; `resync` when more were
   * missed than the backlog gives, or `since` is no longer (or never was) in the outbox. Ids are given in
   * insert order but transactions commit in their own: the events of the topic inserted up to
   * `backlogOverlapS` before `since` come again too (at most as many), and the client drops those it holds.
   */
  private async backlog(c: Conn, topic: string, since: number): Promise<WsServerMessage[] | 'resync'> {
    const limit = this.settings.backlogLimit;
    const columns = sql`id, type, payload, audience`;
    let older: OutboxRow[] = [];
    if (since > 0) {
      const r = await sql<{
        created_at: Date;
      }>`select created_at from event_outbox where id = ${since}`.execute(this.app.db);
      if (!r.rows[0]) return 'resync';
      const from = new Date(new Date(r.rows[0].created_at).getTime() - this.settings.backlogOverlapS * 1000);
      older = (
        await sql<OutboxRow>`select ${columns} from event_outbox
          where topic = ${topic} and id <= ${since} and created_at >= ${from}
          order by id desc limit ${limit}`.execute(this.app.db)
      ).rows.reverse();
    }
    const newer = (
      await sql<OutboxRow>`select ${columns} from event_outbox where topic = ${topic} and id > ${since}
        order by id limit ${limit + 1}`.execute(this.app.db)
    ).rows;
    if (newer.length > limit) return 'resync';
    const out: WsServerMessage[] = [];
    for (const row of [...older, ...newer]) {
      if (!mayReceive(c.auth, JSON.parse(row.audience), row.payload)) continue;
      out.push({ topic, id: Number(row.id), data: { type: row.type, ...row.payload } });
    }
    return out;
  }

  /** A publish: through `dispatch` as the socket's session, gated by the topic's `publishGate`. */
  private async publish(c: Conn, topic: string, text: string): Promise<void> {
    const { def, params } = this.resolve(c, topic);
    const op = {
      id: `realtime.publish:${def.pattern}`,
      access: 'session',
      args: PublishArgs,
      gates: def.publishGate ?? {},
      changes: false,
    } as const;
    const id = await dispatchOperation(
      this.app,
      op,
      async (ctx, args) => {
        const publication = def.publish?.(signedIn(ctx), params, args.text);
        if (!publication) throw new AppError('method_prohibited', { topic });
        return ctx.app.db
          .transaction()
          .execute((trx) => ctx.app.outbox.emit(trx, publication.event, publication.payload));
      },
      { text },
      { kind: 'session', auth: c.auth },
      { caller: c.caller },
    );
    this.send(c, { topic, data: { type: WsReply.published, id: id as number } });
  }

  /** An event of the bus: to each subscriber its audience includes; a change of role re-reads callers. */
  private fromBus(m: RealtimeMessage): void {
    const subscribers = this.byTopic.get(m.topic);
    if (subscribers) {
      let text: string | undefined;
      for (const c of subscribers) {
        if (!mayReceive(c.auth, m.audience, m.data)) continue;
        const sub = c.subs.get(m.topic);
        if (sub?.held) {
          sub.held.push(m);
          continue;
        }
        text ??= JSON.stringify({ topic: m.topic, id: m.id, data: m.data });
        this.sendText(c, text);
      }
    }
    const affects = (eventDefs as Record<string, Pick<EventDef, 'affects'>>)[m.data.type]?.affects;
    if (affects) {
      const touched = [...this.conns].filter((c) => affects(m.data, c.auth));
      if (touched.length) void this.revalidate(touched);
    }
  }

  private deliver(c: Conn, m: RealtimeMessage): void {
    if (mayReceive(c.auth, m.audience, m.data)) this.send(c, { topic: m.topic, id: m.id, data: m.data });
  }

  private send(c: Conn, message: WsServerMessage): void {
    this.sendText(c, JSON.stringify(message));
  }

  private sendText(c: Conn, text: string): void {
    if (c.ws.readyState !== c.ws.OPEN) return;
    if (c.ws.bufferedAmount > this.settings.sendBufferBytes) {
      this.close(c, WsClose.tooSlow, WsCloseReason.tooSlow);
      return;
    }
    this.cork(c, text.length);
    c.ws.send(text);
  }

  /** the sockets corked in this turn of the event loop, with the bytes queued on each since */
  private readonly corked = new Map<Net.Socket, number>();

  /**
   * The frames sent to a socket in one turn of the event loop leave in one write (issue 26 item 1): a commit
   * of device events delivers hundreds of events at once, and a write a frame was a system call each — a
   * quarter of the server's time at 2,000 events a second with 5 consoles. The socket is corked at its first
   * frame of the turn and uncorked once the turn's work is done (a microtask), or every 64 KiB, so the send
   * buffer's bound above still sees what waits. The frames are the same, one an event.
   */
  private cork(c: Conn, bytes: number): void {
    const socket = (c.ws as unknown as { _socket?: Net.Socket })._socket;
    if (!socket || socket.destroyed) return;
    const queued = this.corked.get(socket);
    if (queued === undefined) {
      if (!this.corked.size) queueMicrotask(() => this.uncorkAll());
      socket.cork();
      this.corked.set(socket, bytes);
    } else if (queued > 64 * 1024) {
      socket.uncork();
      socket.cork();
      this.corked.set(socket, bytes);
    } else this.corked.set(socket, queued + bytes);
  }

  private uncorkAll(): void {
    const sockets = [...this.corked.keys()];
    this.corked.clear();
    for (const s of sockets) s.uncork();
  }
}
