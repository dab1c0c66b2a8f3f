/**
 * The websocket client of packages/core (spec part 1 §4 "Websocket", part 2 §9 "reconnect 4000 ms") against
 * real servers: its states, a token that expires (refresh, reconnect at once, re-subscribe), and a server
 * that restarts (reconnect after 4 s by the injected timers, re-subscribe, catch up on what was missed).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { getCommand } from '@lintel/commands';
import {
  ManualTimers,
  RealtimeClient,
  type ApiClient,
  type RealtimeState,
  type WebSocketLike,
  type WsServerMessage,
} from '@lintel/core';
import { defaultWebsocketSettings, ManualClock } from '@lintel/server';
import { freshDatabase, startTestServer, type TestServer } from '../support/server';
import { admin, userWith } from '../support/fixtures';

const socket = (url: string) => new WebSocket(url) as unknown as WebSocketLike;

/** A client with manual timers, recording its states and each topic's messages. */
function watch(api: ApiClient) {
  const timers = new ManualTimers();
  const client = new RealtimeClient({ api, socket, timers });
  const states: RealtimeState[] = [];
  const got: WsServerMessage[] = [];
  let wake: (() => void) | null = null;
  client.onState((s) => {
    states.push(s);
    wake?.();
  });
  const listen = (topic: string) =>
    client.subscribe(topic, (m) => {
      got.push(m);
      wake?.();
    });
  /** waits until `done()` holds, checked at each state change and message, and every 20 ms (a poll) */
  const until = async (done: () => boolean) => {
    while (!done())
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(r, 20);
      });
  };
  return { client, timers, states, got, listen, until };
}

const events = (got: WsServerMessage[], type: string) => got.filter((m) => m.data.type === type);

describe('the core client on one server', () => {
  const clock = new ManualClock();
  let ts: TestServer;
  let api: ApiClient;
  beforeAll(async () => {
    ts = await startTestServer({
      config: { clock, websocket: { ...defaultWebsocketSettings, sweepMs: 3_600_000 } },
    });
    api = await admin(ts);
  });
  afterAll(async () => {
    await ts?.close();
  });

  it('goes connecting then connected, subscribes, hears an event, and disconnects when asked', async () => {
    const rootGroup = (await getCommand('profile.get').run({ api }, {})).domains[0]!.id;
    const u = await userWith(ts, api, { permissions: ['users.view'], domains: [rootGroup] });
    const w = watch(await u.client());
    w.listen('private-app-changes');
    expect(w.client.state).toBe('disconnected');
    w.client.connect();
    await w.until(() => events(w.got, 'subscribed').length === 1);
    expect(w.states).toEqual(['connecting', 'connected']);
    await getCommand('role.update').run({ api }, { id: u.roleId, permissions: [] });
    await w.until(() => events(w.got, 'RoleChangedEvent').length === 1);
    expect(events(w.got, 'RoleChangedEvent')[0]!.data.roleId).toBe(u.roleId);
    w.client.disconnect();
    expect(w.states).toEqual(['connecting', 'connected', 'disconnected']);
    expect(w.timers.delays()).toEqual([]);
  });

  it('an expired token: the server closes with 4401, the client refreshes, reconnects at once and re-subscribes', async () => {
    const rootGroup = (await getCommand('profile.get').run({ api }, {})).domains[0]!.id;
    const u = await userWith(ts, api, { permissions: ['users.view'], domains: [rootGroup] });
    const userApi = await u.client();
    const w = watch(userApi);
    w.listen('private-app-changes');
    w.client.connect();
    await w.until(() => events(w.got, 'subscribed').length === 1);
    const before = userApi.store.get()!.token;

    clock.advance((ts.server.context.config.accessTtlS + 1) * 1000);
    ts.server.context.sockets!.sweep();
    await w.until(() => events(w.got, 'subscribed').length === 2);
    // refreshed, and back without waiting the reconnect delay
    expect(userApi.store.get()!.token).not.toBe(before);
    expect(w.states).toEqual(['connecting', 'connected', 'disconnected', 'connecting', 'connected']);
    expect(w.timers.delays()).toEqual([]);
    await getCommand('role.update').run({ api }, { id: u.roleId, permissions: [] });
    await w.until(() => events(w.got, 'RoleChangedEvent').length === 1);
    w.client.disconnect();
  });

  it('a refresh that fails signs out and stops reconnecting', async () => {
    const rootGroup = (await getCommand('profile.get').run({ api }, {})).domains[0]!.id;
    const u = await userWith(ts, api, { permissions: ['users.view'], domains: [rootGroup] });
    const userApi = await u.client();
    const w = watch(userApi);
    w.listen('private-app-changes');
    w.client.connect();
    await w.until(() => w.client.state === 'connected');
    // the refresh token is spent elsewhere (rotated), so this client's copy no longer works
    await getCommand('session.refresh').run({ api: ts.client() }, { token: userApi.store.get()!.refresh });
    clock.advance((ts.server.context.config.accessTtlS + 1) * 1000);
    ts.server.context.sockets!.sweep();
    await w.until(() => userApi.store.get() === null);
    expect(w.client.state).toBe('disconnected');
    expect(w.timers.delays()).toEqual([]);
  });
});

describe('the core client across a server restart', () => {
  let dataDir: string;
  let database: Awaited<ReturnType<typeof freshDatabase>> | null = null;
  let first: TestServer | null = null;
  let second: TestServer | null = null;
  afterAll(async () => {
    await second?.close();
    await first?.close().catch(() => undefined);
    await database?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('reconnects after 4 s, re-subscribes, and receives what it missed while the server was down', async () => {
    // the same database for both runs: a PGlite folder, or one PostgreSQL database
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-restart-'));
    database = process.env.DATABASE_URL ? await freshDatabase() : null;
    const where = database?.url ? { database: database.url } : {};
    first = await startTestServer({ ...where, config: { dataDir } });
    const port = Number(new URL(first.url).port);
    const adminApi = await admin(first);
    const rootGroup = (await getCommand('profile.get').run({ api: adminApi }, {})).domains[0]!.id;
    const u = await userWith(first, adminApi, { permissions: ['users.view'], domains: [rootGroup] });
    const w = watch(await u.client());
    w.listen('private-app-changes');
    w.client.connect();
    await w.until(() => events(w.got, 'subscribed').length === 1);

    await first.server.close();
    await w.until(() => w.client.state === 'disconnected');
    // the spec's delay, by the injected timers
    expect(w.timers.delays()).toEqual([4000]);

    second = await startTestServer({
      ...where,
      config: { dataDir, port, adminPassword: first.adminPassword },
    });
    // a change while the client is away: the backlog brings it
    await getCommand('role.update').run({ api: await admin(first) }, { id: u.roleId, permissions: [] });
    w.timers.advance(3999);
    expect(w.client.state).toBe('disconnected');
    w.timers.advance(1);
    await w.until(() => events(w.got, 'RoleChangedEvent').length === 1);
    expect(events(w.got, 'subscribed')).toHaveLength(2);
    expect(w.states).toEqual(['connecting', 'connected', 'disconnected', 'connecting', 'connected']);
    // and live again
    await getCommand('role.update').run(
      { api: await admin(first) },
      { id: u.roleId, permissions: ['users.view'] },
    );
    await w.until(() => events(w.got, 'RoleChangedEvent').length === 2);
    w.client.disconnect();
  });
});
