/**
 * Remote control (issue 16 item 9) against the real gateway (the embedded broker) with the simulator as the
 * device: a session for an online mqtt device, kept alive and ended by the server's clock (a ManualClock, no
 * sleeping); the lock opened on the device (its state changes, seen through its own control API too); reboot
 * and the device's state read through the gateway; refused with the catalogue codes when the device is
 * offline or on http; refused without `devices.edit` or out of the caller's scope; another's session is not
 * the caller's; the actions are in the audit log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { ManualClock } from '@lintel/server';
import { SimulatedDevice } from '@lintel/device-sim';
import { startTestServer, type TestServer } from '../support/server';
import { admin, failure, group, raw, rootGroup, uid, userWith } from '../support/fixtures';
import { until } from './mqtt-clients';

const clock = new ManualClock();
let ts: TestServer;
let api: ApiClient;
let root: number;
const sims: SimulatedDevice[] = [];

beforeAll(async () => {
  ts = await startTestServer({
    config: {
      clock,
      modules: ['events', 'devices', 'http'],
      mqtt: { port: 0, host: '127.0.0.1', shared: false, requestTimeoutMs: 2000, sweepMs: 0 },
    },
  });
  api = await admin(ts);
  root = await rootGroup(api);
});
afterAll(async () => {
  await Promise.all(sims.map((s) => s.stop().catch(() => undefined)));
  await ts?.close();
});

/** A device registered in `domain` on `protocol`, and its simulator (started: online, for mqtt). */
async function device(opts: { protocol?: 'mqtt' | 'http'; domain?: number; start?: boolean } = {}) {
  const serial = `RC-${uid()}`;
  const protocol = opts.protocol ?? 'mqtt';
  const { data } = await getCommand('device.create').run(
    { api },
    {
      name: `Panel ${serial}`,
      type: 'panel',
      serial_number: serial,
      domain_id: opts.domain ?? root,
      protocol,
      device_login: 'admin',
      device_password: 'panel-secret',
    },
  );
  const c = await getCommand('device.credentials').run({ api }, { id: data.id });
  const sim = new SimulatedDevice({
    serial,
    management: {
      protocol,
      url: protocol === 'mqtt' ? c.mqtt.url : c.http_url,
      login: c.login,
      password: c.password,
    },
    heartbeatMs: 0,
  });
  sims.push(sim);
  if (opts.start !== false) {
    await sim.start();
    if (protocol === 'mqtt')
      await until(
        async () => (await getCommand('device.get').run({ api }, { id: data.id })).status === 'online',
      );
  }
  return { id: data.id, serial, sim };
}

const session = (client: ApiClient, serial_number: string, extra: Record<string, string> = {}) =>
  getCommand('device.remote_session').run({ api: client }, { serial_number, ...extra });
const keepalive = (client: ApiClient, s: string) =>
  getCommand('device.remote_session_keepalive').run({ api: client }, { session: s });

describe('remote control', () => {
  it('opens the locks of an online mqtt device through the gateway, reboots it and reads its state', async () => {
    const d = await device();
    const s = await session(api, d.serial, { login: 'admin', password: 'panel-secret' });
    expect(s.device).toMatchObject({ id: d.id, serial_number: d.serial, protocol: 'mqtt', status: 'online' });
    expect(s.session.length).toBeGreaterThanOrEqual(32);

    expect(d.sim.locks[1]).toEqual({ open: false, opened: 0 });
    expect(await getCommand('device.remote_open_lock').run({ api }, { id: d.id, lock: 1 })).toEqual({
      lock: 1,
      opened: true,
    });
    expect(d.sim.locks[1]).toEqual({ open: true, opened: 1 });
    expect(d.sim.locks[2]).toEqual({ open: false, opened: 0 });
    // the device's own control API says the same
    const state = (await (await fetch(`http://127.0.0.1:${d.sim.httpPort}/control/state`)).json()) as {
      locks: Record<string, { open: boolean; opened: number }>;
    };
    expect(state.locks).toEqual({ 1: { open: true, opened: 1 }, 2: { open: false, opened: 0 } });
    // the request went over the device's request topic, in the HTTP model of DEVICES.md
    expect(d.sim.requests.at(-1)).toMatchObject({
      method: 'GET',
      uri: '/api/v1/access/general/lock/open/remote/accepted/1',
    });

    await getCommand('device.remote_open_lock').run({ api }, { id: d.id, lock: 2 });
    expect(d.sim.locks[2]).toEqual({ open: true, opened: 1 });
    // each opening is in the device's log, and reaches the platform's events (issue 25 item 8)
    await d.sim.flushLogs();
    const opened = await getCommand('device_event.list').run(
      { api },
      { filters: [{ field: 'device', rule: 'equals', value: d.id }] },
    );
    expect(opened.data.map((e) => [e.kind, e.lock, e.reason]).sort()).toEqual([
      ['door_opened', 1, 'remote'],
      ['door_opened', 2, 'remote'],
    ]);

    const read = await getCommand('device.remote_state').run({ api }, { id: d.id });
    expect(read.info).toMatchObject({ device_serial_number: d.serial, device_type: 'panel' });
    expect(read.locks).toEqual([
      { lock: 1, open: true },
      { lock: 2, open: true },
    ]);
    expect(read.device.status).toBe('online');

    expect(await getCommand('device.remote_reboot').run({ api }, { id: d.id })).toEqual({ rebooting: true });
    expect(d.sim.applied.restart).toBe(1);

    // a lock that does not exist is bad input, not a request to the device
    const bad = await raw(ts, api, 'POST', `/devices/${d.id}/remote/open-lock`, { body: { lock: 3 } });
    expect([bad.status, bad.body.message]).toEqual([422, 'check_fields_data']);
    expect(d.sim.requests.filter((r) => r.uri.endsWith('/accepted/3'))).toEqual([]);

    // audited like other commands, without the device's password
    const audit = await getCommand('audit_event.list').run(
      { api },
      { filters: [{ field: 'entity_id', rule: 'equals', value: String(d.id) }], limit: 20 },
    );
    const actions = audit.data.map((e) => e.action);
    expect(actions).toEqual(
      expect.arrayContaining(['remote_session_opened', 'remote_lock_opened', 'remote_reboot']),
    );
    expect(JSON.stringify(audit.data)).not.toContain('panel-secret');
  });

  it('a session lives 60 s by the server clock unless kept alive', async () => {
    const d = await device();
    const s = await session(api, d.serial);
    clock.advance(59_000);
    const kept = await keepalive(api, s.session);
    expect(new Date(kept.expires_at).getTime()).toBe(clock.now().getTime() + 60_000);
    expect(kept.device).toMatchObject({ id: d.id, status: 'online' });
    clock.advance(59_000);
    await keepalive(api, s.session);
    // not kept alive for more than 60 s: ended
    clock.advance(60_001);
    const ended = await failure(keepalive(api, s.session));
    expect([ended.status, ended.message]).toEqual([410, 'remote_session_expired']);
    // an unknown id is the same
    const unknown = await failure(keepalive(api, 'not-a-session'));
    expect(unknown.message).toBe('remote_session_expired');
  });

  it('refuses a device on http and an mqtt device that is offline, with the catalogue codes', async () => {
    const http = await device({ protocol: 'http' });
    for (const call of [
      () => session(api, http.serial),
      () => getCommand('device.remote_open_lock').run({ api }, { id: http.id, lock: 1 }),
      () => getCommand('device.remote_state').run({ api }, { id: http.id }),
    ]) {
      const e = await failure(call());
      expect([e.status, e.message]).toEqual([409, 'device_protocol_not_mqtt']);
    }
    expect(http.sim.locks[1].opened).toBe(0);

    const off = await device({ start: false });
    for (const call of [
      () => session(api, off.serial),
      () => getCommand('device.remote_open_lock').run({ api }, { id: off.id, lock: 1 }),
      () => getCommand('device.remote_reboot').run({ api }, { id: off.id }),
    ]) {
      const e = await failure(call());
      expect([e.status, e.message]).toEqual([409, 'device_offline']);
    }

    // a session held while the device goes offline: keeping it alive says so
    const d = await device();
    const s = await session(api, d.serial);
    await d.sim.stop();
    await until(async () => (await getCommand('device.get').run({ api }, { id: d.id })).status === 'offline');
    const e = await failure(keepalive(api, s.session));
    expect(e.message).toBe('device_offline');
  });

  it('refuses wrong device credentials, callers without devices.edit, and devices out of scope', async () => {
    const a = await group(api, `A ${uid()}`, root);
    const b = await group(api, `B ${uid()}`, root);
    const d = await device({ domain: a });
    const wrong = await failure(session(api, d.serial, { login: 'admin', password: 'guess' }));
    expect([wrong.status, wrong.message]).toEqual([400, 'invalid_credentials']);

    // may see the device, may not edit devices
    const viewer = await (
      await userWith(ts, api, { permissions: ['devices.view_descendant'], domains: [a] })
    ).client();
    for (const call of [
      () => session(viewer, d.serial),
      () => getCommand('device.remote_open_lock').run({ api: viewer }, { id: d.id, lock: 1 }),
      () => getCommand('device.remote_reboot').run({ api: viewer }, { id: d.id }),
      () => getCommand('device.remote_state').run({ api: viewer }, { id: d.id }),
      () => keepalive(viewer, 'any-session'),
    ]) {
      const e = await failure(call());
      expect([e.status, e.message]).toEqual([403, 'method_prohibited']);
    }
    // an editor of another subtree does not reach it
    const other = await (
      await userWith(ts, api, { permissions: ['devices.view_descendant', 'devices.edit'], domains: [b] })
    ).client();
    for (const call of [
      () => session(other, d.serial),
      () => getCommand('device.remote_open_lock').run({ api: other }, { id: d.id, lock: 1 }),
      () => getCommand('device.remote_reboot').run({ api: other }, { id: d.id }),
      () => getCommand('device.remote_state').run({ api: other }, { id: d.id }),
    ]) {
      const e = await failure(call());
      expect([e.status, e.message]).toEqual([404, 'item_not_found']);
    }
    expect(d.sim.locks[1].opened).toBe(0);
    expect(d.sim.applied.restart).toBe(0);

    // an editor of its subtree does; another person cannot use his session
    const editor = await (
      await userWith(ts, api, { permissions: ['devices.view_descendant', 'devices.edit'], domains: [a] })
    ).client();
    const s = await session(editor, d.serial);
    await getCommand('device.remote_open_lock').run({ api: editor }, { id: d.id, lock: 1 });
    expect(d.sim.locks[1].opened).toBe(1);
    const stolen = await failure(keepalive(api, s.session));
    expect(stolen.message).toBe('remote_session_expired');
    expect((await keepalive(editor, s.session)).device.id).toBe(d.id);
  });

  it('throttles guesses at the device credentials like people’s logins: past the limit the right ones too (issue 20 item 8)', async () => {
    const d = await device();
    // a fresh window (the tests above guessed once)
    clock.advance(900_000);
    // the address's limit (LINTEL_LOGIN_BLOCK_AFTER, 10) comes first; each failure is answered 400
    for (let i = 0; i < 10; i++) {
      const e = await failure(session(api, d.serial, { login: 'admin', password: `guess-${i}` }));
      expect([e.status, e.message]).toEqual([400, 'invalid_credentials']);
    }
    const locked = await failure(session(api, d.serial, { login: 'admin', password: 'panel-secret' }));
    expect([locked.status, locked.message]).toEqual([429, 'too_many_attempts']);
    // the window ends by the server's clock: the right credentials open a session again
    clock.advance(900_000);
    const s = await session(api, d.serial, { login: 'admin', password: 'panel-secret' });
    expect(s.session).toBeTruthy();
  }, 60_000);
});
