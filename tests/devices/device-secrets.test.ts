/**
 * Issue 20 items 7 and 8. The pool of unregistered devices: an entry is bound to the password its first
 * heartbeat carried, so an anonymous heartbeat from elsewhere cannot move a waiting device's address; one
 * address fills at most its share of the pool; a waiting device's heartbeats are not written each time.
 * Device secrets are throttled like people's logins: over HTTP (Basic auth on /device-gateway), on an MQTT
 * connect to the embedded broker and when a remote-control session is opened with device credentials, past
 * the limit an attempt is refused (429 / not authorised) without checking the password — the right one
 * included. Callers come from different loopback addresses (127.0.0.x) so each test has its own counters.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import mqtt from 'mqtt';
import { sql } from 'kysely';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { ManualClock, POOL_NEW_PER_ADDRESS_HOUR, POOL_REFRESH_MS } from '@lintel/server';
import { startTestServer, type TestServer } from '../support/server';
import { admin, rootGroup, uid } from '../support/fixtures';

let ts: TestServer;
let api: ApiClient;
let root: number;
const clock = new ManualClock();
const BLOCK_AFTER = 10;

beforeAll(async () => {
  ts = await startTestServer({
    config: {
      clock,
      // no slowing down in this test: the limit itself is what it checks
      login: { slowAfter: 1000, blockAfter: BLOCK_AFTER, accountBlockAfter: 20, windowS: 900, maxDelayMs: 0 },
    },
  });
  api = await admin(ts);
  root = await rootGroup(api);
});
afterAll(async () => {
  await ts?.close();
});

/** `POST /device-gateway/heartbeat` with Basic auth, from a loopback address of the test's choice. */
function heartbeat(from: string, serial: string, password: string): Promise<number> {
  const u = new URL(`${ts.url}/api/v0/device-gateway/heartbeat`);
  const body = JSON.stringify({ firmware_version: '3.1.0' });
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        localAddress: from,
        headers: {
          authorization: `Basic ${Buffer.from(`${serial}:${password}`).toString('base64')}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const poolRow = async (serial: string) =>
  (
    await sql<{
      ip_address: string;
      contacts: number;
    }>`select ip_address, contacts from device_pool where serial_number = ${serial}`.execute(
      ts.server.context.db,
    )
  ).rows[0];

describe('the pool of unregistered devices', () => {
  it('an entry keeps the address of what announced it: a heartbeat with another password does not move it', async () => {
    const serial = `POOLB-${uid()}`;
    expect(await heartbeat('127.0.0.21', serial, 'the-device-own')).toBe(401);
    expect(await poolRow(serial)).toMatchObject({ ip_address: '127.0.0.21', contacts: 1 });
    clock.advance(POOL_REFRESH_MS);
    expect(await heartbeat('127.0.0.22', serial, 'an-attacker')).toBe(401);
    expect(await poolRow(serial)).toMatchObject({ ip_address: '127.0.0.21', contacts: 1 });
    // the device itself may move (DHCP): same password, new address
    expect(await heartbeat('127.0.0.23', serial, 'the-device-own')).toBe(401);
    expect(await poolRow(serial)).toMatchObject({ ip_address: '127.0.0.23', contacts: 2 });
  });

  it('a waiting device’s heartbeats are written once a minute, not each time', async () => {
    const serial = `POOLW-${uid()}`;
    for (let i = 0; i < 5; i++) expect(await heartbeat('127.0.0.24', serial, 'p')).toBe(401);
    expect(await poolRow(serial)).toMatchObject({ contacts: 1 });
    clock.advance(POOL_REFRESH_MS);
    expect(await heartbeat('127.0.0.24', serial, 'p')).toBe(401);
    expect(await poolRow(serial)).toMatchObject({ contacts: 2 });
  });

  it('one address adds at most its share of entries an hour', async () => {
    const tag = `FILL${uid()}`.toUpperCase();
    for (let i = 0; i < POOL_NEW_PER_ADDRESS_HOUR + 10; i++)
      expect(await heartbeat('127.0.0.25', `${tag}-${i}`, 'p')).toBe(401);
    const n = await sql<{ n: number }>`select count(*)::int as n from device_pool
      where serial_number like ${`${tag}-%`}`.execute(ts.server.context.db);
    expect(n.rows[0]!.n).toBe(POOL_NEW_PER_ADDRESS_HOUR);
    // another address is not held by it
    expect(await heartbeat('127.0.0.26', `${tag}-other`, 'p')).toBe(401);
    expect(await poolRow(`${tag}-other`)).toBeDefined();
  });
});

async function mqttDevice() {
  const serial = `SECR-${uid()}`;
  const { data } = await getCommand('device.create').run(
    { api },
    { name: `Panel ${serial}`, type: 'panel', serial_number: serial, domain_id: root, protocol: 'mqtt' },
  );
  const c = await getCommand('device.credentials').run({ api }, { id: data.id });
  return { id: data.id, serial, password: c.password, url: c.mqtt.url };
}

describe('device secrets are throttled like people’s logins', () => {
  it('over HTTP: past the limit the right password is refused too (429), unchecked', async () => {
    const d = await mqttDevice();
    for (let i = 0; i < BLOCK_AFTER; i++)
      expect(await heartbeat('127.0.0.31', d.serial, `guess-${i}`)).toBe(401);
    expect(await heartbeat('127.0.0.31', d.serial, 'guess-x')).toBe(429);
    expect(await heartbeat('127.0.0.31', d.serial, d.password)).toBe(429);
    // from elsewhere the device itself still gets in; once the window ends, so does the address
    expect(await heartbeat('127.0.0.32', d.serial, d.password)).toBe(200);
    clock.advance(900_000);
    expect(await heartbeat('127.0.0.31', d.serial, d.password)).toBe(200);
  });

  it('an MQTT connect: past the limit the right password is refused too', async () => {
    const d = await mqttDevice();
    const attempt = (password: string) =>
      mqtt
        .connectAsync(d.url, {
          username: d.serial,
          password,
          clientId: d.serial,
          reconnectPeriod: 0,
          connectTimeout: 10_000,
        })
        .then(
          async (c) => {
            await c.endAsync(true);
            return 0;
          },
          (err: { code?: number }) => err.code ?? -1,
        );
    for (let i = 0; i < BLOCK_AFTER; i++) expect(await attempt(`guess-${i}`)).toBe(4);
    expect(await attempt(d.password)).toBe(5);
    clock.advance(900_000);
    expect(await attempt(d.password)).toBe(0);
  });
});
