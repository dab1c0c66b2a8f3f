/**
 * Issue 20, item 10 (the people's side): a device log dated year 0000, look-alike names, a scoped
 * administrator emptying the system role Private client. Each refused with a catalogue error.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { defaultWebsocketSettings } from '../../apps/server/src/config';
import { startTestServer, type TestServer } from '../support/server';
import { RawSocket } from '../support/ws';
import { admin, failure, raw, rootGroup, tokenOf, uid, userWith } from '../support/fixtures';

let ts: TestServer;
let api: ApiClient;
let root: number;
beforeAll(async () => {
  ts = await startTestServer({
    config: { websocket: { ...defaultWebsocketSettings, maxSocketsPerUser: 3 } },
  });
  api = await admin(ts);
  root = await rootGroup(api);
}, 120_000);
afterAll(async () => {
  await ts?.close();
});

describe('a device log dated year 0000', () => {
  it('is a catalogue 4xx (check_fields_data), not a 500', async () => {
    const serial = `Y0-${uid()}`;
    const { data } = await getCommand('device.create').run(
      { api },
      { name: `Panel ${serial}`, type: 'panel', serial_number: serial, domain_id: root, protocol: 'http' },
    );
    const c = await getCommand('device.credentials').run({ api }, { id: data.id });
    const push = (time: string) =>
      fetch(`${ts.url}/api/v0/device-gateway/logs`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Basic ${Buffer.from(`${c.login}:${c.password}`).toString('base64')}`,
        },
        body: JSON.stringify({ events: [{ event_id: `e-${uid()}`, kind: 'identifier_used', time }] }),
      });
    for (const time of ['0000-01-01T00:00:00Z', '0001-01-01T00:00:00+14:00']) {
      const res = await push(time);
      expect({ time, status: res.status }).toEqual({ time, status: 422 });
      expect(((await res.json()) as { error_code: string }).error_code).toBe('check_fields_data');
    }
    // a sane date is stored
    expect((await push('2026-01-01T00:00:00Z')).status).toBe(200);
  });
});

describe('look-alike names', () => {
  const hidden = [
    'Admini\u200bstrator',
    'Administrator\u2060',
    '\u202eAdministrator',
    'Adm\u00adinistrator',
    'Admin\u200distrator',
  ];

  it('are refused for roles and users (zero-width, word joiner, direction override, soft hyphen)', async () => {
    const roles = await getCommand('role.list').run({ api }, { limit: 1, sort: 'id' });
    // sent raw: the commands' own argument check would refuse them before the server sees them
    for (const name of hidden) {
      const role = await raw(ts, api, 'PUT', getCommand('role.create').http.path, {
        body: { name, permissions: [], available_roles: [] },
      });
      expect({ name, status: role.status, code: role.body.error_code }).toEqual({
        name,
        status: 422,
        code: 'check_fields_data',
      });
      const user = await raw(ts, api, 'PUT', getCommand('user.create').http.path, {
        body: {
          login: `la${uid()}`,
          name,
          role: roles.data[0]!.id,
          domains: [root],
          send_registration_link: false,
        },
      });
      expect({ name, status: user.status, code: user.body.error_code }).toEqual({
        name,
        status: 422,
        code: 'check_fields_data',
      });
    }
    // names of scripts that need a joiner, and emoji sequences, are kept
    for (const name of ['\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645', 'Team \u{1F468}\u200d\u{1F469}'])
      expect(
        (
          await getCommand('role.create').run(
            { api },
            { name: `${name} ${uid()}`, permissions: [], available_roles: [] },
          )
        ).data.id,
      ).toBeGreaterThan(0);
  });
});

describe('the system role Private client', () => {
  it('cannot be emptied or changed by a scoped administrator', async () => {
    const roles = await getCommand('role.list').run({ api }, { limit: 100 });
    const privateClient = roles.data.find((r) => r.name === 'Private client')!;
    const scoped = await userWith(ts, api, {
      permissions: ['roles.view', 'roles.edit_available', 'users.edit_profile'],
      domains: [root],
      available: [privateClient.id],
    });
    const client = await scoped.client();
    const err = await failure(
      getCommand('role.update').run({ api: client }, { id: privateClient.id, permissions: [] }),
    );
    expect(err.message).toBe('method_prohibited');
    const after = await getCommand('role.get').run({ api }, { id: privateClient.id });
    expect(after.permissions).toEqual(['users.edit_profile']);
    // the project's administrator may change it, but not empty it either
    expect(
      (await failure(getCommand('role.update').run({ api }, { id: privateClient.id, permissions: [] })))
        .message,
    ).toBe('method_prohibited');
  });
});

describe('websockets per user', () => {
  it('are bounded: the socket over the limit is closed with 1008 too_many_requests; another user is not affected', async () => {
    const token = tokenOf(api);
    const open: RawSocket[] = [];
    try {
      for (let i = 0; i < 3; i++) open.push(await RawSocket.signedIn(ts.url, token));
      const over = await RawSocket.open(ts.url, token);
      const [code, reason] = await new Promise<[number, string]>((resolve) =>
        over.ws.once('close', (c, r) => resolve([c, r.toString()])),
      );
      expect([code, reason]).toEqual([1008, 'too_many_requests']);
      const other = await userWith(ts, api, { permissions: ['users.edit_profile'], domains: [root] });
      open.push(await RawSocket.signedIn(ts.url, tokenOf(await other.client())));
      // closing one makes room again
      const closed = new Promise((r) => open[0]!.ws.once('close', r));
      open[0]!.close();
      await closed;
      await until(() => ts.server.context.sockets!.size === 3);
      open.push(await RawSocket.signedIn(ts.url, token));
    } finally {
      for (const s of open) s.close();
    }
  });
});

describe('network searches per user', () => {
  it('at most two run at once; a third is limit_exceeded until one ends', async () => {
    // an address that takes connections and never answers: each search waits on its probe
    const held = new Set<net.Socket>();
    const silent = net.createServer((socket) => void held.add(socket));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as net.AddressInfo).port;
    const config = ts.server.context.config.mqtt;
    const saved = config.searchProbeTimeoutMs;
    config.searchProbeTimeoutMs = 600_000;
    const search = (request_id: string) =>
      raw(ts, api, 'POST', getCommand('device.search').http.path, {
        body: { start_ip: '127.0.0.1', end_ip: '127.0.0.1', port, request_id },
      });
    try {
      const ids = [`s1-${uid()}`, `s2-${uid()}`];
      const first = await search(ids[0]!);
      const second = await search(ids[1]!);
      expect([first.status, second.status]).toEqual([200, 200]);
      const third = await search(`s3-${uid()}`);
      expect([third.status, third.body.error_code, third.body.data]).toEqual([
        422,
        'limit_exceeded',
        { used: 2, max: 2 },
      ]);
      // the address closes its connections: the probes fail, the searches end, and a new one may start
      silent.close();
      await until(() => held.size >= 2);
      for (const socket of held) socket.destroy();
      for (const id of ids) {
        let state = 'running';
        while (state === 'running') {
          state = (await getCommand('device.search_result').run({ api }, { request_id: id })).state;
          if (state === 'running') await new Promise((r) => setTimeout(r, 20));
        }
      }
      expect((await search(`s4-${uid()}`)).status).toBe(200);
    } finally {
      config.searchProbeTimeoutMs = saved;
      silent.close();
      for (const socket of held) socket.destroy();
    }
  });
});

/** Polls a condition (never a fixed sleep), with a generous bound. */
async function until(check: () => boolean): Promise<void> {
  const end = Date.now() + 60_000;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition never held');
    await new Promise((r) => setTimeout(r, 10));
  }
}
