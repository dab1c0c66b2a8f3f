/**
 * The application websocket on one real server (spec part 2 §7 "Real-time channels"), driven by a client
 * that is not ours (the `ws` package, tests/support/ws.ts): signing in by token, subscribe allowed and
 * refused, bad frames answered and never a crash, limits, events reaching the sockets their audience
 * names, publishing, the backlog a re-subscription asks for, and the tokens that close a socket.
 */
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { sql } from 'kysely';
import {
  ClientMessageEvent,
  defaultWebsocketSettings,
  defineTopic,
  ManualClock,
  registerFixtureTopic,
} from '@lintel/server';
import { startTestServer, type TestServer } from '../support/server';
import { admin, secondProject, tokenOf, userWith } from '../support/fixtures';
import { RawSocket } from '../support/ws';

const clock = new ManualClock();
let ts: TestServer;
let api: ApiClient;
let rootGroup: number;
const open: RawSocket[] = [];

const socket = async (token: string) => {
  const s = await RawSocket.signedIn(ts.url, token);
  open.push(s);
  return s;
};

beforeAll(async () => {
  ts = await startTestServer({
    config: {
      clock,
      // the sweep and the revalidation are called by the tests; the rest as shipped
      websocket: {
        ...defaultWebsocketSettings,
        sweepMs: 3_600_000,
        revalidateMs: 3_600_000,
        backlogLimit: 3,
      },
    },
  });
  api = await admin(ts);
  rootGroup = (await getCommand('profile.get').run({ api }, {})).domains[0]!.id;
});
afterAll(async () => {
  for (const s of open) s.close();
  await ts?.close();
});

const holder = (permissions: string[] = ['users.view']) =>
  userWith(ts, api, { permissions, domains: [rootGroup] });
const changeRole = (id: number, permissions: string[]) =>
  getCommand('role.update').run({ api }, { id, permissions });

describe('signing in', () => {
  it('a socket without a token, or with one that is not valid, is closed with 4401 invalid_token', async () => {
    for (const token of [null, '', 'not-a-token']) {
      const s = await RawSocket.open(ts.url, token);
      expect(await s.closed).toEqual({ code: 4401, reason: 'invalid_token' });
      expect(s.messages).toEqual([]);
    }
  });

  it('a valid token is answered `connected` with the user and the token’s expiry', async () => {
    const me = await getCommand('profile.get').run({ api }, {});
    const s = await socket(tokenOf(api));
    expect(s.messages[0]).toMatchObject({ topic: null, data: { type: 'connected', user_id: me.id } });
    expect(Date.parse(String(s.messages[0]!.data.expires_at))).toBeGreaterThan(clock.now().getTime());
  });

  it('a plain GET of the address is 426, naming the upgrade it needs', async () => {
    const r = await fetch(`${ts.url}/api/v0/ws`);
    expect(r.status).toBe(426);
    expect(await r.json()).toMatchObject({ error_code: 'wrong_parameters', data: { upgrade: 'websocket' } });
  });
});

describe('subscribing', () => {
  it('to the own topic and the app changes is allowed; another user’s topic and unknown topics are refused', async () => {
    const u = await holder();
    const other = await holder();
    const s = await socket(tokenOf(await u.client()));
    const own = await s.subscribe(`private-users.${u.id}`);
    expect(own).toMatchObject({ topic: `private-users.${u.id}`, data: { type: 'subscribed' } });
    expect(typeof own.data.last_id).toBe('number');
    expect(await s.subscribe('private-app-changes')).toMatchObject({ data: { type: 'subscribed' } });
    expect(await s.subscribe(`private-users.${other.id}`)).toEqual({
      topic: `private-users.${other.id}`,
      data: {
        type: 'error',
        message: 'method_prohibited',
        error_code: 'method_prohibited',
        data: { topic: `private-users.${other.id}` },
      },
    });
    for (const topic of ['private-elevators', 'private-users.', 'private-users.1.2', 'private-app-changes.x'])
      expect(await s.subscribe(topic)).toMatchObject({
        topic,
        data: { type: 'error', error_code: 'item_not_found', data: { topic } },
      });
  });

  it('bad frames get an error naming what is wrong, and the socket goes on working', async () => {
    const u = await holder();
    const s = await socket(tokenOf(await u.client()));
    const error = () => s.next((m) => m.data.type === 'error');
    s.send('{not json');
    expect(await error()).toMatchObject({
      topic: null,
      data: { error_code: 'invalid_data_sent', data: { reason: 'not_json' } },
    });
    s.ws.send(Buffer.from([1, 2, 3]), { binary: true });
    expect(await error()).toMatchObject({ topic: null, data: { error_code: 'invalid_data_sent' } });
    for (const frame of ['null', '[]', '42', '"subscribe"'])
      expect(await (s.send(frame), error())).toMatchObject({ data: { error_code: 'check_fields_data' } });
    s.send({ type: 'shout', topic: 'private-app-changes' });
    expect(await error()).toMatchObject({
      topic: 'private-app-changes',
      data: {
        error_code: 'check_fields_data',
        data: { fields: [expect.objectContaining({ field: 'type' })] },
      },
    });
    s.send({ type: 'subscribe' });
    expect(await error()).toMatchObject({
      topic: null,
      data: {
        error_code: 'check_fields_data',
        data: { fields: [expect.objectContaining({ field: 'topic' })] },
      },
    });
    s.send({ type: 'subscribe', topic: 'private-app-changes', since: -1 });
    expect(await error()).toMatchObject({ data: { error_code: 'check_fields_data' } });
    s.send({ type: 'subscribe', topic: 'x'.repeat(201) });
    expect(await error()).toMatchObject({ topic: null, data: { error_code: 'check_fields_data' } });
    s.send({ type: 'publish', topic: `private-users.${u.id}`, text: 'x'.repeat(4001) });
    expect(await error()).toMatchObject({ data: { error_code: 'check_fields_data' } });
    // still signed in and working
    expect(await s.subscribe('private-app-changes')).toMatchObject({ data: { type: 'subscribed' } });
  });

  it('a frame over 16 KiB closes the socket with 1009; the server goes on', async () => {
    const u = await holder();
    const s = await socket(tokenOf(await u.client()));
    s.send({ type: 'publish', topic: `private-users.${u.id}`, text: 'x'.repeat(17 * 1024) });
    expect((await s.closed).code).toBe(1009);
    const again = await socket(tokenOf(await u.client()));
    expect(await again.subscribe('private-app-changes')).toMatchObject({ data: { type: 'subscribed' } });
  });

  it('a socket sending too fast is refused past 60 messages in 10 s, and closed with 1008 past twice that', async () => {
    const u = await holder();
    const s = await socket(tokenOf(await u.client()));
    for (let i = 0; i < 61; i++) s.send({ type: 'unsubscribe', topic: 'private-app-changes' });
    const refused = await s.next((m) => m.data.type === 'error');
    expect(refused).toMatchObject({ topic: null, data: { error_code: 'too_many_requests' } });
    expect(Number((refused.data.data as { seconds: number }).seconds)).toBeGreaterThan(0);
    // the 60 within the limit are each answered
    await s.until(() => s.messages.filter((m) => m.data.type === 'unsubscribed').length === 60);
    for (let i = 0; i < 60; i++) s.send({ type: 'unsubscribe', topic: 'private-app-changes' });
    expect(await s.closed).toEqual({ code: 1008, reason: 'too_many_messages' });
  });
});

describe('events', () => {
  it('a role change reaches the sockets of the project, its holder’s included, and no other project’s', async () => {
    const u = await holder();
    const s = await socket(tokenOf(await u.client()));
    await s.subscribe('private-app-changes');
    const other = await secondProject(ts);
    const o = await socket(tokenOf(other.api));
    await o.subscribe('private-app-changes');

    await changeRole(u.roleId, ['users.view', 'devices.view']);
    const got = await s.next((m) => m.data.type === 'RoleChangedEvent');
    expect(got).toMatchObject({ topic: 'private-app-changes', data: { roleId: u.roleId } });
    expect(typeof got.id).toBe('number');

    // then a change in the other project: its socket gets that one, and had nothing before it
    const otherRole = await getCommand('role.create').run(
      { api: other.api },
      { name: 'Other role', permissions: ['users.view'], available_roles: [] },
    );
    await getCommand('role.update').run({ api: other.api }, { id: otherRole.data.id, permissions: [] });
    const theirs = await o.next((m) => m.data.type === 'RoleChangedEvent');
    expect(theirs.data.roleId).toBe(otherRole.data.id);
    expect(o.events('private-app-changes')).toHaveLength(1);
    expect(s.events('private-app-changes').map((m) => m.data.roleId)).toEqual([u.roleId]);
  });

  it('a user given another role hears of it on their own topic, and nobody else does', async () => {
    const u = await holder();
    const v = await holder();
    const s = await socket(tokenOf(await u.client()));
    await s.subscribe(`private-users.${u.id}`);
    const t = await socket(tokenOf(await v.client()));
    await t.subscribe(`private-users.${v.id}`);
    await getCommand('user.update').run({ api }, { id: u.id, role: v.roleId });
    expect(await s.next((m) => m.id !== undefined)).toMatchObject({
      topic: `private-users.${u.id}`,
      data: { type: 'ProfileChangedEvent', userId: u.id },
    });
    await getCommand('user.update').run({ api }, { id: v.id, role: u.roleId });
    await t.next((m) => m.id !== undefined);
    expect(s.events(`private-users.${u.id}`)).toHaveLength(1);
    expect(t.events(`private-users.${v.id}`)).toHaveLength(1);
  });

  it('a text published on the own topic reaches the user’s other sockets; the app changes refuse it', async () => {
    const u = await holder();
    const a = await socket(tokenOf(await u.client()));
    const b = await socket(tokenOf(await u.client()));
    const topic = `private-users.${u.id}`;
    await b.subscribe(topic);
    a.send({ type: 'publish', topic, text: 'hello from tab one' });
    const ack = await a.next((m) => m.topic === topic);
    expect(ack.data).toMatchObject({ type: 'published' });
    expect(await b.next((m) => m.id !== undefined)).toEqual({
      topic,
      id: ack.data.id,
      data: {
        type: 'ClientMessage',
        userId: u.id,
        projectId: expect.any(Number),
        text: 'hello from tab one',
      },
    });
    a.send({ type: 'publish', topic: 'private-app-changes', text: 'everyone, look' });
    expect(await a.next((m) => m.topic === 'private-app-changes')).toMatchObject({
      data: { type: 'error', error_code: 'method_prohibited' },
    });
    const v = await holder();
    a.send({ type: 'publish', topic: `private-users.${v.id}`, text: 'psst' });
    expect(await a.next((m) => m.topic === `private-users.${v.id}`)).toMatchObject({
      data: { type: 'error', error_code: 'method_prohibited' },
    });
  });
});

describe('publishing through the pipeline', () => {
  it('a publish passes the topic’s gates as a command does: refused and audited without the permission', async () => {
    // a topic whose publishers need a permission; each publishes on their own
    const unregister = registerFixtureTopic(
      defineTopic({
        pattern: 'test-gated.{userId}',
        read: (auth, p) => p.userId === String(auth.userId),
        publishGate: { anyPermission: ['markers.create'] },
        publish: (auth, p, text) =>
          p.userId === String(auth.userId)
            ? { event: ClientMessageEvent, payload: { userId: auth.userId, projectId: auth.projectId, text } }
            : null,
      }),
    );
    onTestFinished(unregister);
    const allowed = await holder(['markers.view', 'markers.create']);
    const refused = await holder(['markers.view']);
    const a = await socket(tokenOf(await allowed.client()));
    a.send({ type: 'publish', topic: `test-gated.${allowed.id}`, text: 'allowed' });
    expect(await a.next((m) => m.topic === `test-gated.${allowed.id}`)).toMatchObject({
      data: { type: 'published' },
    });
    const r = await socket(tokenOf(await refused.client()));
    r.send({ type: 'publish', topic: `test-gated.${refused.id}`, text: 'refused' });
    expect(await r.next((m) => m.topic === `test-gated.${refused.id}`)).toMatchObject({
      data: { type: 'error', error_code: 'method_prohibited' },
    });
    // the denial is audited as any command's is, under the publish's name
    const denied = await sql<{ entity: string }>`select entity from audit_events
      where action = 'permission_denied' and user_id = ${refused.id}`.execute(ts.server.context.db);
    expect(denied.rows.map((d) => d.entity)).toEqual(['realtime.publish:test-gated.{userId}']);
  });
});

describe('the backlog', () => {
  it('a re-subscription with the last id held replays what came after it, to those who may read it', async () => {
    const u = await holder();
    const s = await socket(tokenOf(await u.client()));
    const first = await s.subscribe('private-app-changes');
    const since = Number(first.data.last_id);
    s.close();
    await changeRole(u.roleId, []);
    await changeRole(u.roleId, ['users.view']);
    // an event of another project in between: not for this socket
    const other = await secondProject(ts);
    const otherRole = await getCommand('role.create').run(
      { api: other.api },
      { name: 'Backlog role', permissions: ['users.view'], available_roles: [] },
    );
    await getCommand('role.update').run({ api: other.api }, { id: otherRole.data.id, permissions: [] });

    const again = await socket(tokenOf(await u.client()));
    expect(await again.subscribe('private-app-changes', since)).toMatchObject({
      data: { type: 'subscribed' },
    });
    const after = () => again.events('private-app-changes').filter((m) => m.id! > since);
    await again.until(() => after().length === 2);
    // a live event after the replay; the other project's never comes
    await changeRole(u.roleId, ['devices.view']);
    await again.until(() => after().length === 3);
    const events = after();
    expect(events.map((m) => m.data.roleId)).toEqual([u.roleId, u.roleId, u.roleId]);
    expect(events.map((m) => m.id)).toEqual([...events.map((m) => m.id!)].sort((x, y) => x - y));
    // what came again from before `since` (commit order is not id order) is only what this caller may read
    for (const m of again.events('private-app-changes'))
      expect(m.data.projectId).toBe(events[0]!.data.projectId);
  });

  it('more missed than the backlog holds, or an id the server does not know, is answered `resync`', async () => {
    const u = await holder();
    const s = await socket(tokenOf(await u.client()));
    const since = Number((await s.subscribe('private-app-changes')).data.last_id);
    for (const p of [[], ['users.view'], [], ['users.view']]) await changeRole(u.roleId, p);
    await s.subscribe('private-app-changes', since);
    const resync = await s.next((m) => m.data.type === 'resync');
    expect(resync.topic).toBe('private-app-changes');
    expect(Number(resync.data.last_id)).toBeGreaterThan(since);
    await s.subscribe('private-app-changes', 10_000_000);
    expect(await s.next((m) => m.data.type === 'resync')).toMatchObject({ topic: 'private-app-changes' });
  });
});

describe('limits', () => {
  it('a socket holds at most the configured number of topics', async () => {
    const small = await startTestServer({
      config: { websocket: { ...defaultWebsocketSettings, maxSubscriptions: 1 } },
    });
    try {
      const s = await RawSocket.signedIn(small.url, tokenOf(await admin(small)));
      expect(await s.subscribe('private-app-changes')).toMatchObject({ data: { type: 'subscribed' } });
      const me = await getCommand('profile.get').run({ api: await admin(small) }, {});
      expect(await s.subscribe(`private-users.${me.id}`)).toMatchObject({
        data: { type: 'error', error_code: 'limit_exceeded', data: { used: 1, max: 1 } },
      });
      // unsubscribing makes room
      s.send({ type: 'unsubscribe', topic: 'private-app-changes' });
      expect(await s.subscribe(`private-users.${me.id}`)).toMatchObject({ data: { type: 'subscribed' } });
      s.close();
    } finally {
      await small.close();
    }
  });
});

describe('the module', () => {
  it('closing the server closes its sockets with 1001 server_stopping, and a socket of a stopped module is told 1013', async () => {
    const other = await startTestServer({ config: { modules: ['events', 'jobs', 'http'] } });
    try {
      // an instance that does not run the websocket module
      const refused = await RawSocket.open(other.url, tokenOf(await admin(other)));
      expect(await refused.closed).toEqual({ code: 1013, reason: 'not_served' });
    } finally {
      await other.close();
    }
    const own = await startTestServer();
    const s = await RawSocket.signedIn(own.url, tokenOf(await admin(own)));
    await s.subscribe('private-app-changes');
    expect(own.server.context.sockets!.size).toBe(1);
    await own.close();
    expect(await s.closed).toEqual({ code: 1001, reason: 'server_stopping' });
    expect(own.server.context.sockets!.size).toBe(0);
  });
});

describe('tokens and sessions', () => {
  it('a token that expires closes its socket with 4401 token_expired, and cannot open another', async () => {
    const u = await holder();
    const token = tokenOf(await u.client());
    const s = await socket(token);
    ts.server.context.sockets!.sweep();
    expect(s.ws.readyState).toBe(s.ws.OPEN);
    clock.advance((ts.server.context.config.accessTtlS + 1) * 1000);
    ts.server.context.sockets!.sweep();
    expect(await s.closed).toEqual({ code: 4401, reason: 'token_expired' });
    const late = await RawSocket.open(ts.url, token);
    expect(await late.closed).toEqual({ code: 4401, reason: 'token_expired' });
  });

  it('signing out closes the session’s sockets with 4401 invalid_token when the callers are read again', async () => {
    const u = await holder();
    const client = await u.client();
    const s = await socket(tokenOf(client));
    const kept = await socket(tokenOf(await u.client()));
    await s.subscribe('private-app-changes');
    await getCommand('session.logout').run({ api: client }, {});
    await ts.server.context.sockets!.revalidateAll();
    expect(await s.closed).toEqual({ code: 4401, reason: 'invalid_token' });
    // the user's other session is untouched
    expect(await kept.subscribe('private-app-changes')).toMatchObject({ data: { type: 'subscribed' } });
  });
});
