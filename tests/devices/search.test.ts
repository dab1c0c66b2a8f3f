/**
 * Network search (issue 16 item 8) against simulated devices on addresses of their own (127.0.0.x, one port):
 * the devices in the range are found, progress and each device come live on the user's own topic keyed by
 * the request id, a device already registered is marked, an address that accepts a connection and never
 * answers is given up after the probe's time, and the search can be read again by its request id. Bad ranges
 * are 4xx with the catalogue's codes. Adding found devices is all or nothing.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand, type DeviceSearch } from '@lintel/commands';
import { DeviceSearchLimits, type ApiClient } from '@lintel/core';
import { SimulatedDevice } from '@lintel/device-sim';
import { startTestServer, type TestServer } from '../support/server';
import { admin, failure, raw, rootGroup, tokenOf, uid, userWith } from '../support/fixtures';
import { RawSocket } from '../support/ws';
import { until } from './mqtt-clients';

let ts: TestServer;
let api: ApiClient;
let root: number;
let port = 0;
const sims: SimulatedDevice[] = [];
let silent: net.Server;
const held: net.Socket[] = [];
/** the search events the server published, as the user's websocket gets them */
const events: Record<string, unknown>[] = [];
const tag = uid().toUpperCase();
/** the devices on 127.0.0.11, .13, .14 (a lift controller), .17; .15 accepts and never answers */
const placed = [
  { host: '127.0.0.11', type: 'panel' },
  { host: '127.0.0.13', type: 'panel' },
  { host: '127.0.0.14', type: 'liftcontroller' },
  { host: '127.0.0.17', type: 'accesscontroller' },
] as const;
const serialOf = (host: string) => `SRCH-${tag}-${host.split('.')[3]}`;

beforeAll(async () => {
  ts = await startTestServer({
    config: {
      modules: ['events', 'devices', 'http', 'websocket'],
      mqtt: {
        port: 0,
        host: '127.0.0.1',
        shared: false,
        requestTimeoutMs: 1000,
        sweepMs: 0,
        // long enough for a device on a loaded machine to answer; the silent address takes all of it
        searchProbeTimeoutMs: 2000,
      },
    },
  });
  ts.server.context.events.subscribe((m) => {
    if (m.data.type === 'DeviceSearchEvent') events.push(m.data);
  });
  api = await admin(ts);
  root = await rootGroup(api);
  // the first device takes a free port; the others share it, each on its own address
  for (const p of placed) {
    const sim = new SimulatedDevice({
      serial: serialOf(p.host),
      type: p.type,
      name: `Device at ${p.host}`,
      httpHost: p.host,
      httpPort: port,
    });
    await sim.start();
    port = sim.httpPort;
    sims.push(sim);
  }
  // an address that takes the connection and says nothing
  silent = net.createServer((socket) => held.push(socket));
  await new Promise<void>((resolve) => silent.listen(port, '127.0.0.15', resolve));
});
afterAll(async () => {
  await Promise.all(sims.map((s) => s.stop().catch(() => undefined)));
  for (const socket of held) socket.destroy();
  await new Promise((r) => silent?.close(r));
  await ts?.close();
});

const search = (args: { start_ip: string; end_ip: string; request_id?: string; port?: number }) =>
  getCommand('device.search').run({ api }, { port, ...args });
const resultOf = (request_id: string) => getCommand('device.search_result').run({ api }, { request_id });
const finished = (request_id: string) =>
  until(async () => {
    const r = await resultOf(request_id);
    return r.state === 'done' ? r : null;
  });

describe('network search', () => {
  let first: DeviceSearch;
  const requestId = `req-${uid()}`;

  it('finds the devices in the range, reporting progress and each device on the user topic', async () => {
    // one of them is registered already
    await getCommand('device.create').run(
      { api },
      { name: 'Known', type: 'panel', serial_number: serialOf('127.0.0.13'), domain_id: root },
    );
    const started = await search({ start_ip: '127.0.0.10', end_ip: '127.0.0.20', request_id: requestId });
    expect(started).toMatchObject({ request_id: requestId, total: 11, port, state: 'running' });
    first = await finished(requestId);
    expect(first).toMatchObject({ total: 11, probed: 11, timed_out: 1, state: 'done' });
    expect(first.found.map((f) => f.ip_address).sort()).toEqual(placed.map((p) => p.host));
    const lift = first.found.find((f) => f.ip_address === '127.0.0.14')!;
    expect(lift).toMatchObject({
      serial_number: serialOf('127.0.0.14'),
      device_type: 'liftcontroller',
      device_name: 'Device at 127.0.0.14',
      port,
      registered: false,
      device_id: null,
    });
    const known = first.found.find((f) => f.ip_address === '127.0.0.13')!;
    expect(known.registered).toBe(true);
    expect(known.device_id).toEqual(expect.any(Number));

    // live: each device found, progress up to the end, and the end, keyed by the request id
    await until(async () => events.some((e) => e.requestId === requestId && e.phase === 'done'));
    const mine = events.filter((e) => e.requestId === requestId);
    expect(
      mine
        .filter((e) => e.phase === 'found')
        .map((e) => (e.device as { ip_address: string }).ip_address)
        .sort(),
    ).toEqual(placed.map((p) => p.host));
    expect(mine.at(-1)).toMatchObject({ phase: 'done', probed: 11, total: 11, found: 4, timedOut: 1 });
    expect(mine.some((e) => e.phase === 'progress')).toBe(true);
    const probed = mine.map((e) => e.probed as number);
    expect(probed).toEqual([...probed].sort((a, b) => a - b));
    expect(new Set(mine.map((e) => e.userId)).size).toBe(1);
  });

  it("comes on the websocket of the user who started it, on that user's own topic", async () => {
    const me = await getCommand('profile.get').run({ api }, {});
    const socket = await RawSocket.signedIn(ts.url, tokenOf(api));
    try {
      const topic = `private-users.${me.id}`;
      expect((await socket.subscribe(topic)).data.type).toBe('subscribed');
      const id = `ws-${uid()}`;
      await search({ start_ip: '127.0.0.13', end_ip: '127.0.0.14', request_id: id });
      const done = await socket.next(
        (m) => m.topic === topic && m.data.type === 'DeviceSearchEvent' && m.data.phase === 'done',
      );
      expect(done.data).toMatchObject({ requestId: id, probed: 2, total: 2, found: 2 });
      const found = socket
        .events(topic)
        .filter((m) => m.data.type === 'DeviceSearchEvent' && m.data.phase === 'found')
        .map((m) => m.data.device as { serial_number: string; registered: boolean });
      expect(found.map((f) => f.serial_number).sort()).toEqual([
        serialOf('127.0.0.13'),
        serialOf('127.0.0.14'),
      ]);
      expect(found.find((f) => f.serial_number === serialOf('127.0.0.13'))?.registered).toBe(true);
    } finally {
      socket.close();
    }
  });

  it('the same request id answers the search it named; another user cannot read it', async () => {
    const again = await search({ start_ip: '127.0.0.10', end_ip: '127.0.0.20', request_id: requestId });
    expect(again).toEqual(first);
    const other = await userWith(ts, api, { permissions: ['devices.create'], domains: [root] });
    const e = await failure(
      getCommand('device.search_result').run({ api: await other.client() }, { request_id: requestId }),
    );
    expect(e.status).toBe(404);
    expect(e.body?.message).toBe('item_not_found');
  });

  it('refuses bad ranges with the catalogue codes', async () => {
    const bad = async (body: Record<string, unknown>) => raw(ts, api, 'POST', '/devices/search', { body });
    const reversed = await bad({ start_ip: '127.0.0.20', end_ip: '127.0.0.10', request_id: 'r1' });
    expect(reversed.status).toBe(422);
    expect(reversed.body).toMatchObject({
      message: 'ip_range_invalid',
      data: { start_ip: '127.0.0.20', end_ip: '127.0.0.10' },
    });
    const large = await bad({ start_ip: '10.0.0.0', end_ip: '10.0.4.0', request_id: 'r2' });
    expect(large.status).toBe(422);
    expect(large.body).toMatchObject({
      message: 'ip_range_too_large',
      data: { count: 1025, max: DeviceSearchLimits.maxAddresses },
    });
    for (const [field, body] of [
      ['start_ip', { start_ip: '127.0.0.256', end_ip: '127.0.0.10' }],
      ['end_ip', { start_ip: '127.0.0.1', end_ip: 'example.com' }],
      ['start_ip', { start_ip: '::1', end_ip: '127.0.0.1' }],
      ['end_ip', { start_ip: '127.0.0.1', end_ip: 12 }],
      ['port', { start_ip: '127.0.0.1', end_ip: '127.0.0.1', port: 70_000 }],
      ['request_id', { start_ip: '127.0.0.1', end_ip: '127.0.0.1', request_id: 'a/b' }],
    ] as const) {
      const r = await bad(body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.message).toBe('check_fields_data');
      expect(r.body.data.fields.map((f: { field: string }) => f.field)).toContain(field);
    }
    // nothing was started by them
    expect((await failure(resultOf('r1'))).status).toBe(404);
    // the limit itself is allowed
    const edge = await search({
      start_ip: '127.0.1.0',
      end_ip: '127.0.4.255',
      request_id: `edge-${uid()}`,
      port: 9,
    });
    expect(edge.total).toBe(DeviceSearchLimits.maxAddresses);
  });

  it('needs the device create permission', async () => {
    const viewer = await userWith(ts, api, { permissions: ['devices.view_all'], domains: [root] });
    const e = await failure(
      getCommand('device.search').run(
        { api: await viewer.client() },
        { start_ip: '127.0.0.10', end_ip: '127.0.0.11', port },
      ),
    );
    expect(e.status).toBe(403);
  });
});

describe('adding found devices', () => {
  it('adds the chosen ones as http devices in the group', async () => {
    const r = await search({ start_ip: '127.0.0.11', end_ip: '127.0.0.17', request_id: `add-${uid()}` });
    const done = await finished(r.request_id);
    const chosen = done.found.filter((f) => !f.registered && f.ip_address !== '127.0.0.17');
    expect(chosen).toHaveLength(2);
    const added = await getCommand('device.add_found').run(
      { api },
      {
        domain_id: root,
        items: chosen.map((f) => ({
          serial_number: f.serial_number,
          device_type: f.device_type as 'panel',
          ip_address: f.ip_address,
          port: f.port,
          name: f.device_name,
        })),
      },
    );
    expect(added.data.map((d) => d.serial_number).sort()).toEqual(chosen.map((f) => f.serial_number).sort());
    const lift = await getCommand('device.get').run(
      { api },
      { id: added.data.find((d) => d.serial_number === serialOf('127.0.0.14'))!.id },
    );
    expect(lift).toMatchObject({
      type: 'liftcontroller',
      ip_address: '127.0.0.14',
      port,
      protocol: 'http',
      domain_id: root,
      name: 'Device at 127.0.0.14',
    });
    // searched again, they are marked registered
    const again = await finished(
      (await search({ start_ip: '127.0.0.11', end_ip: '127.0.0.14', request_id: `re-${uid()}` })).request_id,
    );
    expect(again.found.filter((f) => f.ip_address !== '127.0.0.17').every((f) => f.registered)).toBe(true);
  });

  it('is all or nothing: a serial number in use adds none', async () => {
    const fresh = `SRCH-${tag}-NEW`;
    const before = (await getCommand('device.list').run({ api }, { limit: 100 })).meta.total;
    const item = (serial_number: string) => ({
      serial_number,
      device_type: 'panel' as const,
      ip_address: '127.0.0.17',
      port,
    });
    const e = await failure(
      getCommand('device.add_found').run(
        { api },
        { domain_id: root, items: [item(fresh), item(serialOf('127.0.0.13'))] },
      ),
    );
    expect(e.status).toBe(409);
    expect(e.body).toMatchObject({
      message: 'serial_number_in_use',
      data: { serial_number: serialOf('127.0.0.13') },
    });
    const twice = await failure(
      getCommand('device.add_found').run({ api }, { domain_id: root, items: [item(fresh), item(fresh)] }),
    );
    expect(twice.body).toMatchObject({ message: 'serial_number_in_use', data: { serial_number: fresh } });
    expect((await getCommand('device.list').run({ api }, { limit: 100 })).meta.total).toBe(before);
    // unknown kinds and bad addresses name the item's field
    const bad = await raw(ts, api, 'PUT', '/devices/found', {
      body: { domain_id: root, items: [{ ...item(fresh), device_type: 'toaster', ip_address: '1.2.3' }] },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.data.fields.map((f: { field: string }) => f.field).sort()).toEqual([
      'items.0.device_type',
      'items.0.ip_address',
    ]);
    // a group outside the caller's reach
    const outsider = await failure(
      getCommand('device.add_found').run({ api }, { domain_id: 2_000_000_000, items: [item(fresh)] }),
    );
    expect(outsider.status).toBeGreaterThanOrEqual(400);
    expect(outsider.status).toBeLessThan(500);
    expect((await getCommand('device.list').run({ api }, { limit: 100 })).meta.total).toBe(before);
  });
});
