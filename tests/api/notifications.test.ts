/**
 * Notifications (spec part 1 §3 Notification, §4; part 2 §7): stored per recipient by `notify`, listed by tab
 * with offset and limit, marked read one at a time or all at once, the settings `{acs}`, and nobody reading
 * or marking another user's. Then the device offline path end to end: a device of a group that misses three
 * heartbeats (the server's clock moved, the sweep called) notifies the users its group chain names in
 * `device_status_notify` with the offline flag, and no one else, live on their websocket.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import type { ApiClient, NotificationType } from '@lintel/core';
import { ManualClock, notify } from '@lintel/server';
import { startTestServer, type TestServer } from '../support/server';
import { admin, failure, group, raw, rootGroup, tokenOf, uid, userWith } from '../support/fixtures';
import { RawSocket } from '../support/ws';

const clock = new ManualClock();
let ts: TestServer;
let api: ApiClient;
let root: number;

beforeAll(async () => {
  ts = await startTestServer({ config: { clock } });
  api = await admin(ts);
  root = await rootGroup(api);
});
afterAll(async () => {
  await ts?.close();
});

const run = <I extends Parameters<typeof getCommand>[0]>(client: ApiClient, id: I, args: object = {}) =>
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  getCommand(id).run({ api: client }, args as any) as Promise<any>;

async function send(recipients: number[], type: NotificationType, name: string) {
  const ctx = ts.server.context;
  const projectId = (await getCommand('profile.get').run({ api }, {})).project.id;
  return ctx.outbox.unit(() =>
    ctx.db.transaction().execute((trx) => notify(ctx, trx, { projectId, recipients, type, data: { name } })),
  );
}

describe('the notifications of one user', () => {
  let a: { id: number; client: () => Promise<ApiClient> };
  let b: { id: number; client: () => Promise<ApiClient> };
  let ca: ApiClient;
  let cb: ApiClient;

  beforeAll(async () => {
    a = await userWith(ts, api, { permissions: [], domains: [root] });
    b = await userWith(ts, api, { permissions: [], domains: [root] });
    ca = await a.client();
    cb = await b.client();
  });

  it('are stored with their type’s significance, icon, colour, popup action and sound, newest first', async () => {
    await send([a.id], 'device_offline', 'Panel 1');
    await send([a.id], 'alarm_enabled', 'Smoke 3');
    const list = await run(ca, 'notification.list');
    expect(list.data.map((n: { type: string }) => n.type)).toEqual(['alarm_enabled', 'device_offline']);
    expect(list.data[0]).toMatchObject({
      significance: 'important',
      icon: 'alarm',
      color: '#dc2626',
      popup_action: 'notifications_alarm',
      sound: 'alarm',
      read_at: null,
      data: { name: 'Smoke 3' },
    });
    expect(list.data[1]).toMatchObject({ significance: 'important', icon: 'device', sound: null });
    expect(list.meta).toMatchObject({ total: 2, unread: 2, offset: 0, limit: 20 });
    // b has none of them
    expect((await run(cb, 'notification.list')).meta.total).toBe(0);
    expect((await run(cb, 'notification.unread')).meta.total).toBe(0);
  });

  it('list by tab with offset and limit (20 by default)', async () => {
    for (let i = 0; i < 22; i++) await send([a.id], 'device_broker_settings_sent', `Panel ${i}`);
    const all = await run(ca, 'notification.list', { type: 'all' });
    expect(all.data).toHaveLength(20);
    expect(all.meta.total).toBe(24);
    const rest = await run(ca, 'notification.list', { type: 'all', offset: 20 });
    expect(rest.data).toHaveLength(4);
    // pages do not overlap and cover every row
    const ids = [...all.data, ...rest.data].map((n: { id: number }) => n.id);
    expect(new Set(ids).size).toBe(24);
    expect((await run(ca, 'notification.list', { type: 'normal', limit: 5 })).data).toHaveLength(5);
    expect((await run(ca, 'notification.list', { type: 'normal' })).meta.total).toBe(22);
    expect((await run(ca, 'notification.list', { type: 'important' })).meta.total).toBe(2);
    expect((await run(ca, 'notification.list', { type: 'alarm' })).meta.total).toBe(1);
    expect((await run(ca, 'notification.list', { type: 'acs' })).meta.total).toBe(0);
    // bad input, past the client's own check: the catalogue's answer, never a crash
    const bad = await raw(ts, ca, 'GET', '/notifications', { query: { type: 'loud', limit: 1000 } });
    expect(bad.status).toBe(422);
    expect(bad.body).toMatchObject({ error_code: 'check_fields_data' });
  });

  it('ACS notifications reach only those whose settings ask for them', async () => {
    expect(await run(ca, 'notification.settings_get')).toEqual({ acs: false });
    await send([a.id], 'identifier_used', 'Door 1');
    expect((await run(ca, 'notification.list', { type: 'acs' })).meta.total).toBe(0);
    expect(await run(ca, 'notification.settings_update', { acs: true })).toEqual({ acs: true });
    expect(await run(ca, 'notification.settings_get')).toEqual({ acs: true });
    for (const body of [{ acs: 'yes' }, {}, { acs: true, extra: 1 }]) {
      const bad = await raw(ts, ca, 'PUT', '/notifications/settings', { body });
      if (bad.status === 200) expect(bad.body).toEqual({ acs: true });
      else expect(bad.body).toMatchObject({ error_code: 'check_fields_data' });
    }
    expect((await raw(ts, ca, 'PUT', '/notifications/settings', { body: { acs: 'yes' } })).status).toBe(422);
    expect((await getCommand('profile.get').run({ api: ca }, {})).profile.notification_settings).toEqual({
      acs: true,
    });
    await send([a.id, b.id], 'identifier_used', 'Door 1');
    expect((await run(ca, 'notification.list', { type: 'acs' })).meta.total).toBe(1);
    expect((await run(cb, 'notification.list', { type: 'acs' })).meta.total).toBe(0);
  });

  it('marked read one at a time, then all at once; the unread list follows', async () => {
    const before = await run(ca, 'notification.unread', { limit: 5 });
    expect(before.data).toHaveLength(5);
    expect(before.meta.total).toBe(25);
    const one = before.data[0];
    clock.advance(1000);
    const read = await run(ca, 'notification.read', { id: one.id });
    expect(read).toMatchObject({ id: one.id, read_at: clock.now().toISOString() });
    // again: unchanged
    clock.advance(1000);
    expect((await run(ca, 'notification.read', { id: one.id })).read_at).toBe(read.read_at);
    const after = await run(ca, 'notification.unread');
    expect(after.meta.total).toBe(24);
    expect(after.data.map((n: { id: number }) => n.id)).not.toContain(one.id);
    expect(await run(ca, 'notification.read_all')).toEqual({ count: 24 });
    expect((await run(ca, 'notification.unread')).meta.total).toBe(0);
    expect((await run(ca, 'notification.list')).meta.unread).toBe(0);
    expect(await run(ca, 'notification.read_all')).toEqual({ count: 0 });
  });

  it('lists the unread important ones apart, so newer ordinary ones never push them out (the popups)', async () => {
    await run(ca, 'notification.read_all');
    await send([a.id], 'alarm_enabled', 'Smoke 7');
    // 25 ordinary ones after it: the first page of unread holds none of the important one
    for (let i = 0; i < 25; i++) await send([a.id], 'alarm_processed', `Smoke ${i}`);
    const unread = await run(ca, 'notification.unread', { limit: 5 });
    expect(unread.data.map((n: { type: string }) => n.type)).not.toContain('alarm_enabled');
    expect(unread.meta).toEqual({ total: 26, important: 1 });
    expect(unread.important).toHaveLength(1);
    expect(unread.important[0]).toMatchObject({
      type: 'alarm_enabled',
      sound: 'alarm',
      data: { name: 'Smoke 7' },
    });
    await run(ca, 'notification.read', { id: unread.important[0].id });
    const after = await run(ca, 'notification.unread', { limit: 5 });
    expect(after.important).toEqual([]);
    expect(after.meta).toEqual({ total: 25, important: 0 });
    await run(ca, 'notification.read_all');
  });

  it('another user’s notification can be neither read nor marked: 404 item_not_found', async () => {
    await send([a.id], 'device_offline', 'Panel 9');
    const mine = (await run(ca, 'notification.unread')).data[0];
    const err = await failure(run(cb, 'notification.read', { id: mine.id }));
    expect(err.status).toBe(404);
    expect(err.code).toBe('item_not_found');
    // b's read-all leaves a's unread
    await run(cb, 'notification.read_all');
    expect((await run(ca, 'notification.unread')).meta.total).toBe(1);
    expect((await failure(run(cb, 'notification.read', { id: 2_000_000_000 }))).code).toBe('item_not_found');
    const badId = await raw(ts, cb, 'PATCH', '/notifications/abc/read', { body: {} });
    expect(badId.status).toBe(422);
    expect(badId.body).toMatchObject({ error_code: 'check_fields_data' });
  });
});

describe('device offline', () => {
  it('a device missing three heartbeats notifies its group chain’s device_status_notify users, live, and no one else', async () => {
    const g = await group(api, `Building ${uid()}`, root);
    const sibling = await group(api, `Other ${uid()}`, root);
    const told = await userWith(ts, api, { permissions: [], domains: [g] });
    const notFlagged = await userWith(ts, api, { permissions: [], domains: [g] });
    const otherGroup = await userWith(ts, api, { permissions: [], domains: [sibling] });
    const above = await userWith(ts, api, { permissions: [], domains: [root] });
    const entry = (id: number, offline: boolean) => ({
      user_id: id,
      notify_about_offline_device: offline,
      notify_about_device_task_failed: !offline,
    });
    await getCommand('group.update').run(
      { api },
      { id: g, device_status_notify: [entry(told.id, true), entry(notFlagged.id, false)] },
    );
    await getCommand('group.update').run(
      { api },
      { id: sibling, device_status_notify: [entry(otherGroup.id, true)] },
    );
    const rootBefore = (await getCommand('group.get').run({ api }, { id: root })).device_status_notify;
    await getCommand('group.update').run(
      { api },
      { id: root, device_status_notify: [...rootBefore, entry(above.id, true)] },
    );

    const serial = `OFF-${uid()}`;
    const { data: device } = await getCommand('device.create').run(
      { api },
      { name: `Panel ${serial}`, type: 'panel', serial_number: serial, domain_id: g },
    );
    const c = await getCommand('device.credentials').run({ api }, { id: device.id });
    const beat = await fetch(`${c.http_url}/heartbeat`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Basic ${Buffer.from(`${c.login}:${c.password}`).toString('base64')}`,
      },
      body: '{}',
    });
    expect(beat.status).toBe(200);

    const clients = {
      told: await told.client(),
      notFlagged: await notFlagged.client(),
      otherGroup: await otherGroup.client(),
      above: await above.client(),
    };
    const socket = await RawSocket.signedIn(ts.url, tokenOf(clients.told));
    try {
      expect(await socket.subscribe(`private-users.${told.id}`)).toMatchObject({
        data: { type: 'subscribed' },
      });
      // 30 s of silence is not yet three missed heartbeats
      clock.advance(30_000);
      await ts.server.context.devices.sweep();
      expect((await run(clients.told, 'notification.unread')).meta.total).toBe(0);
      clock.advance(1_000);
      expect(await ts.server.context.devices.sweep()).toBeGreaterThanOrEqual(1);

      const live = await socket.next((m) => m.data.type === 'NotificationCreatedEvent');
      expect(live).toMatchObject({
        topic: `private-users.${told.id}`,
        data: {
          userId: told.id,
          notification: {
            type: 'device_offline',
            significance: 'important',
            data: { device: { id: device.id, serial_number: serial }, group: { id: g } },
          },
        },
      });
      const stored = await run(clients.told, 'notification.unread');
      expect(stored.meta.total).toBe(1);
      expect(stored.data[0].id).toBe(
        (live.data as unknown as { notification: { id: number } }).notification.id,
      );
      expect((await run(clients.above, 'notification.unread')).meta.total).toBe(1);
      expect((await run(clients.notFlagged, 'notification.unread')).meta.total).toBe(0);
      expect((await run(clients.otherGroup, 'notification.unread')).meta.total).toBe(0);
      // a second sweep turns nothing and tells no one again
      await ts.server.context.devices.sweep();
      expect((await run(clients.told, 'notification.unread')).meta.total).toBe(1);
    } finally {
      socket.ws.close();
    }
  });
});
