/**
 * Issue 20 item 3: a device's address is whatever an installer typed, so what the server sends there must not
 * become a way to read the server's own network. A device that answers `302` to an internal service on
 * loopback, one that answers 50 MB, and one whose info carries more than the documented fields: nothing of
 * the internal service or the 50 MB reaches the caller (the server stops reading early), only the documented
 * `/api/info` fields do. Without the operator's LINTEL_DEVICE_ALLOW_LOOPBACK, loopback, link-local and
 * unspecified addresses (IPv4, IPv6 and IPv4-mapped) are refused for requests and network searches alike.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { defaultDeviceLimits, loadConfig } from '@lintel/server';
import { startTestServer, type TestServer } from '../support/server';
import { admin, failure, raw, rootGroup, uid } from '../support/fixtures';

const SECRET = `internal-${uid()}`;
let internalHits = 0;
let bigSent = 0;
const servers: http.Server[] = [];

async function serve(handler: http.RequestListener): Promise<number> {
  const s = http.createServer(handler);
  servers.push(s);
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return (s.address() as AddressInfo).port;
}

let internalPort = 0;
let redirectPort = 0;
let bigPort = 0;
let chattyPort = 0;

beforeAll(async () => {
  // a service only the server's own host can reach
  internalPort = await serve((_req, res) => {
    internalHits++;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ device_serial_number: 'X', secret: SECRET, device_name: SECRET }));
  });
  // a "device" that sends every request there
  redirectPort = await serve((_req, res) => {
    res.writeHead(302, { location: `http://127.0.0.1:${internalPort}/latest/meta-data` });
    res.end();
  });
  // a "device" whose info is 50 MB, written as fast as the reader takes it
  bigPort = await serve((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const total = 50 * 1024 * 1024;
    const pump = () => {
      while (bigSent < total) {
        bigSent += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      res.end();
    };
    res.on('close', () => res.removeAllListeners('drain'));
    pump();
  });
  // a device whose info has more than the documented fields
  chattyPort = await serve((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({
        device_serial_number: 'CHATTY-1',
        firmware_version: '2.4.1',
        device_name: 'Panel',
        hybrid_enable: 'not a boolean',
        secret: SECRET,
        nested: { secret: SECRET },
      }),
    );
  });
});
afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

async function httpDevice(api: ApiClient, root: number, ip: string, port: number): Promise<number> {
  const serial = `OUT-${uid()}`;
  const { data } = await getCommand('device.create').run(
    { api },
    {
      name: `Device ${serial}`,
      type: 'panel',
      serial_number: serial,
      domain_id: root,
      protocol: 'http',
      ip_address: ip,
      port,
    },
  );
  return data.id;
}

describe('requests to a device’s address (loopback allowed, as in the demo)', () => {
  let ts: TestServer;
  let api: ApiClient;
  let root: number;

  beforeAll(async () => {
    ts = await startTestServer();
    api = await admin(ts);
    root = await rootGroup(api);
  });
  afterAll(async () => {
    await ts?.close();
  });

  it('a 302 to an internal service is not followed: the caller gets an error, the service is never asked', async () => {
    const id = await httpDevice(api, root, '127.0.0.1', redirectPort);
    const reply = await raw(ts, api, 'GET', `/devices/${id}/info`);
    expect(reply.status).toBe(503);
    expect(reply.body.message).toBe('device_not_available');
    expect(JSON.stringify(reply.body)).not.toContain(SECRET);
    expect(internalHits).toBe(0);
  });

  it('a 50 MB reply is cut at the cap: not read to its end, nothing of it reaches the caller', async () => {
    const id = await httpDevice(api, root, '127.0.0.1', bigPort);
    const before = process.memoryUsage().rss;
    const reply = await raw(ts, api, 'GET', `/devices/${id}/info`);
    expect(reply.status).toBe(503);
    expect(reply.body.message).toBe('device_not_available');
    expect(JSON.stringify(reply.body).length).toBeLessThan(2000);
    // the server stopped reading after its cap (1 MiB) and what the sockets buffer: far from 50 MB
    expect(bigSent).toBeLessThan(16 * 1024 * 1024);
    expect(process.memoryUsage().rss - before).toBeLessThan(40 * 1024 * 1024);
  });

  it('only the documented /api/info fields reach the caller, each of its documented type', async () => {
    const id = await httpDevice(api, root, '127.0.0.1', chattyPort);
    const info = await getCommand('device.info').run({ api }, { id });
    expect(info).toEqual({
      device_serial_number: 'CHATTY-1',
      firmware_version: '2.4.1',
      device_name: 'Panel',
    });
    const reply = await raw(ts, api, 'GET', `/devices/${id}/info`);
    expect(reply.status).toBe(200);
    expect(JSON.stringify(reply.body)).not.toContain(SECRET);
  });
});

describe('requests to a device’s address (the default: loopback, link-local, unspecified refused)', () => {
  let ts: TestServer;
  let api: ApiClient;
  let root: number;

  beforeAll(async () => {
    ts = await startTestServer({ config: { devices: { ...defaultDeviceLimits, allowLoopback: false } } });
    api = await admin(ts);
    root = await rootGroup(api);
  });
  afterAll(async () => {
    await ts?.close();
  });

  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.9.9.9', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['0:0:0:0:0:ffff:7f00:1', 'loopback'],
    ['169.254.169.254', 'link_local'],
    ['::ffff:169.254.169.254', 'link_local'],
    ['fe80::1', 'link_local'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
  ])('%s is refused (%s), and nothing is sent there', async (ip, range) => {
    const hits = internalHits;
    const id = await httpDevice(api, root, ip, internalPort);
    const e = await failure(getCommand('device.info').run({ api }, { id }));
    expect([e.status, e.code]).toEqual([503, 'device_not_available']);
    const reply = await raw(ts, api, 'GET', `/devices/${id}/info`);
    expect(reply.body.data).toMatchObject({ reason: 'address_refused', range });
    expect(internalHits).toBe(hits);
  });

  it('a network search over loopback is refused with the catalogue’s code', async () => {
    const e = await failure(
      getCommand('device.search').run(
        { api },
        { start_ip: '127.0.0.1', end_ip: '127.0.0.4', port: internalPort, request_id: uid() },
      ),
    );
    expect([e.status, e.code]).toEqual([422, 'ip_range_invalid']);
    expect(internalHits).toBe(0);
  });
});

describe('a fresh install’s defaults', () => {
  it('refuses loopback device addresses and keeps self-registration (as installer) closed', () => {
    const config = loadConfig({});
    expect(config.devices.allowLoopback).toBe(false);
    expect(config.selfRegistrationOpen).toBe(false);
    expect(loadConfig({ LINTEL_DEVICE_ALLOW_LOOPBACK: '1' }).devices.allowLoopback).toBe(true);
    expect(loadConfig({ LINTEL_SELF_REGISTRATION_OPEN: '1' }).selfRegistrationOpen).toBe(true);
  });
});
