import type { ApiClient } from './api-client';
import { Realtime } from './constants';
import {
  WS_PATH,
  WsClose,
  WsReply,
  WsServerMessage,
  type WsClientMessage,
  type WsServerMessage as WsServerMessageType,
} from './realtime';
import { systemTimers, type Timers } from './timers';

/** Spec part 1 §4 "Websocket". */
export type RealtimeState = 'disconnected' | 'connecting' | 'connected';

/** The part of a WebSocket the client uses: the browser's, Node's, or the `ws` package's. */
export interface WebSocketLike {
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}

export type WebSocketFactory = (url: string) => WebSocketLike;

export interface RealtimeClientOptions {
  /** the session's client: its server, its access token, and its one shared refresh */
  api: ApiClient;
  /** how to open a socket; default the platform's WebSocket (the CLI passes the `ws` package) */
  socket?: WebSocketFactory;
  /** default the platform's timers; tests pass ManualTimers */
  timers?: Timers;
  /** default the spec's 4000 ms */
  reconnectMs?: number;
}

export type TopicListener = (message: WsServerMessageType) => void;

interface TopicState {
  listeners: Set<TopicListener>;
  /** the newest event id held of this topic: a re-subscription asks the server for what came after */
  lastId?: number;
  /**
   * The last id when this topic was first subscribed. The backlog also replays a little from before the
   * last id (transactions commit out of id order); what it brings from before this floor is history the
   * client never subscribed to, or had live already, so it is dropped.
   */
  floor?: number;
}

const SEEN_KEPT = 2000;

/** The websocket URL of the client's server (the page's own origin when it has none). */
export function realtimeUrl(api: ApiClient, token: string): string {
  const relative = api.url(WS_PATH, { access_token: token });
  const base = (globalThis as { location?: { href: string } }).location?.href ?? 'http://localhost/';
  const url = new URL(relative, base);
  url.protocol = url.protocol === 'https:' ? 'wss:' : url.protocol === 'http:' ? 'ws:' : url.protocol;
  return url.toString();
}

/**
 * The application websocket's client (spec part 1 §4, part 2 §7 and §9): disconnected, connecting,
 * connected; while a connection is wanted it reconnects every 4 s after a loss, re-subscribes every topic it
 * holds, and asks the server for the events it missed (each topic's last event id; the server replays them
 * or says `resync`). A close for an expired token refreshes the session once and connects again at once; a
 * refresh that fails signs out, as a 401 does.
 */
export class RealtimeClient {
  private socket: WebSocketLike | null = null;
  private wanted = false;
  private timer: unknown = null;
  private current: RealtimeState = 'disconnected';
  private readonly topics = new Map<string, TopicState>();
  private readonly seen = new Set<number>();
  private readonly stateListeners = new Set<(s: RealtimeState) => void>();
  private readonly errorListeners = new Set<TopicListener>();
  private readonly signedOutListeners = new Set<() => void>();
  /** 4401 closes since the last connection: past two, fall back to the reconnect delay */
  private authRetries = 0;
  private readonly timers: Timers;
  private readonly reconnectMs: number;
  private readonly open: WebSocketFactory;

  constructor(private readonly options: RealtimeClientOptions) {
    this.timers = options.timers ?? systemTimers;
    this.reconnectMs = options.reconnectMs ?? Realtime.websocketReconnectMs;
    this.open =
      options.socket ??
      ((url) => {
        const Ctor = (globalThis as { WebSocket?: new (url: string) => WebSocketLike }).WebSocket;
        if (!Ctor) throw new Error('no WebSocket in this environment: pass `socket`');
        return new Ctor(url);
      });
  }

  get state(): RealtimeState {
    return this.current;
  }

  /** Calls `listener` on every change of state; returns how to stop. */
  onState(listener: (s: RealtimeState) => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  /** Errors about the connection itself (a message the server could not read). */
  onError(listener: TopicListener): () => void {
    this.errorListeners.add(listener);
    return () => this.errorListeners.delete(listener);
  }

  /** Called when the session ended (a refresh after a 4401 failed): the client stopped for good. */
  onSignedOut(listener: () => void): () => void {
    this.signedOutListeners.add(listener);
    return () => this.signedOutListeners.delete(listener);
  }

  /** Wants a connection: opens one now, and again after every loss, until `disconnect()`. */
  connect(): void {
    this.wanted = true;
    if (!this.socket && this.timer === null) this.openSocket();
  }

  /** No connection wanted any more: closes it and stops reconnecting. Topics are kept for a later connect(). */
  disconnect(): void {
    this.wanted = false;
    this.clearTimer();
    const socket = this.socket;
    this.socket = null;
    socket?.close(WsClose.normal);
    this.setState('disconnected');
  }

  /**
   * Listens to a topic: every message of it (events, and the protocol's `subscribed`, `resync`, `error`)
   * reaches `listener`. Subscribed on the server now if connected, else on connecting. Returns how to stop.
   */
  subscribe(topic: string, listener: TopicListener): () => void {
    let state = this.topics.get(topic);
    if (!state) {
      state = { listeners: new Set() };
      this.topics.set(topic, state);
      if (this.current === 'connected') this.sendSubscribe(topic, state);
    }
    state.listeners.add(listener);
    return () => {
      const s = this.topics.get(topic);
      if (!s) return;
      s.listeners.delete(listener);
      if (s.listeners.size) return;
      this.topics.delete(topic);
      if (this.current === 'connected') this.send({ type: 'unsubscribe', topic });
    };
  }

  /** Publishes a text on a topic (if the topic allows it, the server answers `published`). False when not connected. */
  publish(topic: string, text: string): boolean {
    if (this.current !== 'connected') return false;
    this.send({ type: 'publish', topic, text });
    return true;
  }

  private setState(next: RealtimeState): void {
    if (next === this.current) return;
    this.current = next;
    for (const l of [...this.stateListeners]) l(next);
  }

  private clearTimer(): void {
    if (this.timer !== null) this.timers.clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(ms: number): void {
    this.clearTimer();
    this.timer = this.timers.setTimeout(() => {
      this.timer = null;
      if (this.wanted && !this.socket) this.openSocket();
    }, ms);
  }

  private openSocket(): void {
    if (this.socket) return;
    const session = this.options.api.store.get();
    if (!session) {
      // signed out: nothing to connect as
      this.wanted = false;
      this.setState('disconnected');
      return;
    }
    const token = session.token;
    let socket: WebSocketLike;
    this.setState('connecting');
    try {
      socket = this.open(realtimeUrl(this.options.api, token));
    } catch {
      this.setState('disconnected');
      this.schedule(this.reconnectMs);
      return;
    }
    this.socket = socket;
    socket.onmessage = (ev) => {
      if (this.socket === socket) this.receive(ev.data);
    };
    socket.onerror = () => undefined; // a close follows
    socket.onclose = (ev) => {
      if (this.socket === socket) this.closed(ev.code, token);
    };
  }

  private closed(code: number, usedToken: string): void {
    this.socket = null;
    this.setState('disconnected');
    if (!this.wanted) return;
    if (code === WsClose.unauthenticated) void this.reauthenticate(usedToken);
    else this.schedule(this.reconnectMs);
  }

  /** The server said the token is expired or not valid: refresh once (shared with the HTTP calls) and reconnect. */
  private async reauthenticate(usedToken: string): Promise<void> {
    this.authRetries++;
    if (this.authRetries > 2) {
      this.authRetries = 0;
      this.schedule(this.reconnectMs);
      return;
    }
    const api = this.options.api;
    // another call may have refreshed already
    const fresh = api.store.get()?.token !== usedToken || (await api.refresh());
    // stopped meanwhile, or connected again by connect(): nothing more to do
    if (!this.wanted || this.socket) return;
    if (!fresh || !api.store.get()) {
      this.wanted = false;
      api.signOut();
      for (const l of [...this.signedOutListeners]) l();
      return;
    }
    this.openSocket();
  }

  private receive(raw: unknown): void {
    let parsed: ReturnType<typeof WsServerMessage.safeParse>;
    try {
      parsed = WsServerMessage.safeParse(JSON.parse(String(raw)));
    } catch {
      return;
    }
    if (!parsed.success) return;
    const message = parsed.data as WsServerMessageType;
    const { topic, data } = message;
    if (topic === null) {
      if (data.type === WsReply.connected) {
        this.authRetries = 0;
        this.setState('connected');
        for (const [t, s] of this.topics) this.sendSubscribe(t, s);
      } else if (data.type === WsReply.error) for (const l of [...this.errorListeners]) l(message);
      return;
    }
    const state = this.topics.get(topic);
    if (!state) return;
    if (message.id !== undefined) {
      // an event: the backlog and the live stream may both bring it once
      if (this.seen.has(message.id) || message.id <= (state.floor ?? 0)) return;
      this.seen.add(message.id);
      if (this.seen.size > SEEN_KEPT) this.seen.delete(this.seen.values().next().value!);
      state.lastId = Math.max(state.lastId ?? 0, message.id);
    } else if (data.type === WsReply.subscribed || data.type === WsReply.resync) {
      const last = data.last_id;
      if (typeof last === 'number') {
        if (state.floor === undefined && data.type === WsReply.subscribed) state.floor = last;
        if (state.lastId === undefined || data.type === WsReply.resync)
          state.lastId = Math.max(state.lastId ?? 0, last);
      }
    }
    for (const l of [...state.listeners]) l(message);
  }

  private sendSubscribe(topic: string, state: TopicState): void {
    this.send(
      state.lastId === undefined
        ? { type: 'subscribe', topic }
        : { type: 'subscribe', topic, since: state.lastId },
    );
  }

  private send(message: WsClientMessage): void {
    try {
      this.socket?.send(JSON.stringify(message));
    } catch {
      // the socket is closing; its close reconnects and re-subscribes
    }
  }
}
