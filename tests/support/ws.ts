/**
 * A websocket client that is not ours: the `ws` package speaking the protocol of spec part 2 §7 by hand,
 * so the tests prove the wire format rather than our client's reading of it.
 */
import WebSocket from 'ws';
import type { WsServerMessage } from '@lintel/core';

export interface Closed {
  code: number;
  reason: string;
}

export class RawSocket {
  readonly messages: WsServerMessage[] = [];
  readonly closed: Promise<Closed>;
  private cursor = 0;
  private waiters: (() => void)[] = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.messages.push(JSON.parse(String(data)) as WsServerMessage);
      for (const w of this.waiters.splice(0)) w();
    });
    this.closed = new Promise((resolve) =>
      ws.on('close', (code, reason) => {
        resolve({ code, reason: reason.toString() });
        for (const w of this.waiters.splice(0)) w();
      }),
    );
  }

  /** Opens `/api/v0/ws` with this access token (none: no query parameter). */
  static async open(baseUrl: string, token: string | null): Promise<RawSocket> {
    const url = new URL('/api/v0/ws', baseUrl.replace(/^http/, 'ws'));
    if (token !== null) url.searchParams.set('access_token', token);
    const ws = new WebSocket(url);
    const socket = new RawSocket(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return socket;
  }

  /** Opens a socket and waits for the server's `connected`. */
  static async signedIn(baseUrl: string, token: string): Promise<RawSocket> {
    const s = await RawSocket.open(baseUrl, token);
    await s.next((m) => m.topic === null && m.data.type === 'connected');
    return s;
  }

  send(message: unknown): void {
    this.ws.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  /** The next message (after those already taken) that matches; fails if the socket closes first. */
  async next(match: (m: WsServerMessage) => boolean = () => true): Promise<WsServerMessage> {
    for (;;) {
      while (this.cursor < this.messages.length) {
        const m = this.messages[this.cursor++]!;
        if (match(m)) return m;
      }
      if (this.ws.readyState === WebSocket.CLOSED)
        throw new Error(`socket closed while waiting; got ${JSON.stringify(this.messages)}`);
      await new Promise<void>((r) => this.waiters.push(r));
    }
  }

  /** Waits until `done()` holds, checked at each message; fails if the socket closes first. */
  async until(done: () => boolean): Promise<void> {
    while (!done()) {
      if (this.ws.readyState === WebSocket.CLOSED) throw new Error('socket closed while waiting');
      await new Promise<void>((r) => this.waiters.push(r));
    }
  }

  /** Subscribes and returns the server's answer on that topic (`subscribed` or `error`). */
  async subscribe(topic: string, since?: number): Promise<WsServerMessage> {
    this.send(since === undefined ? { type: 'subscribe', topic } : { type: 'subscribe', topic, since });
    return this.next((m) => m.topic === topic && (m.data.type === 'subscribed' || m.data.type === 'error'));
  }

  /** Every event (a message with an id) received so far on a topic. */
  events(topic: string): WsServerMessage[] {
    return this.messages.filter((m) => m.topic === topic && m.id !== undefined);
  }

  close(): void {
    this.ws.close();
  }
}
