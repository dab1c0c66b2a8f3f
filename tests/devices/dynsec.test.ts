/**
 * Issue 16 item 5, an external broker: Lintel keeps the devices' Mosquitto accounts through the
 * dynamic-security plugin (MQTT_DYNSEC). A Mosquitto of the test's own (the Debian binary on a free port, the
 * plugin loaded, its config made by `mosquitto_ctrl dynsec init`) and clients that are not ours
 * (`mosquitto_pub`/`mosquitto_sub`) acting as devices: a device Lintel made signs in with the credentials Lintel
 * issued and goes online by its heartbeat; it is refused another serial's topics, a wrong password, its old
 * password after a reset, its old serial after a change, and everything once deleted; accounts made while the
 * broker was down are made when it is back (the reconciliation on reconnection).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync, spawn } from 'node:child_process';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import { deviceTopics, type ApiClient } from '@lintel/core';
import { ManualClock } from '@lintel/server';
import { startTestServer, type TestServer } from '../support/server';
import { admin, rootGroup, uid } from '../support/fixtures';
import { PrivateMosquitto, mosquittoPub, until, type BrokerAddress } from './mqtt-clients';
import { buildCli, freshConfigDir, lintel, removeConfigDirs } from '../cli/support';

const PLUGIN = '/usr/lib/x86_64-linux-gnu/mosquitto_dynamic_security.so';
if (!fs.existsSync(PLUGIN))
  throw new Error('the dynamic-security plugin of mosquitto is needed (Debian: apt-get install mosquitto)');

const clock = new ManualClock();
const ADMIN = 'dynsec-admin';
const ADMIN_PASSWORD = `admin-${uid()}`;
let ts: TestServer;
let api: ApiClient;
let root = 0;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-dynsec-'));
const broker = new PrivateMosquitto([
  'allow_anonymous false',
  'persistence false',
  `plugin ${PLUGIN}`,
  `plugin_opt_config_file ${path.join(dir, 'dynsec.json')}`,
]);

beforeAll(async () => {
  const built = buildCli();
  expect(built.status, built.stderr).toBe(0);
  // the plugin's config with its admin, as the README tells an administrator; writable by the broker, which
  // started as root runs as the `mosquitto` user
  execFileSync('mosquitto_ctrl', ['dynsec', 'init', path.join(dir, 'dynsec.json'), ADMIN, ADMIN_PASSWORD]);
  fs.chmodSync(dir, 0o777);
  fs.chmodSync(path.join(dir, 'dynsec.json'), 0o666);
  await broker.start();
  ts = await startTestServer({
    config: {
      clock,
      modules: ['events', 'devices', 'http'],
      mqtt: {
        url: broker.url,
        dynsec: true,
        username: ADMIN,
        password: ADMIN_PASSWORD,
        shared: true,
        port: 0,
        host: '127.0.0.1',
        requestTimeoutMs: 2000,
        sweepMs: 0,
      },
    },
  });
  api = await admin(ts);
  root = await rootGroup(api);
  // the reconciliation the start queued
  await drain();
}, 60_000);
afterAll(async () => {
  await ts?.close();
  removeConfigDirs();
  await broker.dispose();
  fs.rmSync(dir, { recursive: true, force: true });
});

const drain = () => ts.server.context.jobs.drain();
const statusOf = async (id: number) => (await getCommand('device.get').run({ api }, { id })).status;
const as = (username: string, password: string): BrokerAddress => ({
  host: '127.0.0.1',
  port: broker.port,
  username,
  password,
});
const heartbeat = (b: BrokerAddress, serial: string, clientId?: string) =>
  mosquittoPub(
    b,
    deviceTopics(serial).push,
    JSON.stringify({ request_id: uid(), method: 'POST', uri: '/heartbeat', body: {} }),
    // a device's account signs in only under its own client id, its serial number
    { v5: true, clientId: clientId ?? b.username },
  );
const refusedLogin = (r: { code: number; stderr: string }) =>
  r.code !== 0 && /not authori[sz]ed|bad user name|refused/i.test(r.stderr);

/** `mosquitto_sub` on one topic: whether the broker granted the subscription. */
const mayRead = (b: BrokerAddress, topic: string) =>
  new Promise<boolean>((resolve, reject) => {
    const p = spawn(
      'mosquitto_sub',
      [
        ...['-h', b.host, '-p', String(b.port), '-u', b.username!, '-P', b.password!, '-i', b.username!],
        ...['-t', topic, '-d', '-E'],
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (out += d.toString()));
    p.on('error', reject);
    p.on('close', () => {
      const granted = /Subscribed \(mid: \d+\): (\d+)/.exec(out);
      if (!granted) return reject(new Error(`no SUBACK: ${out}`));
      resolve(Number(granted[1]) < 128);
    });
  });

async function device(serial = `DS-${uid()}`) {
  const { data } = await getCommand('device.create').run(
    { api },
    { name: `Panel ${serial}`, type: 'panel', serial_number: serial, domain_id: root, protocol: 'mqtt' },
  );
  const c = await getCommand('device.credentials').run({ api }, { id: data.id });
  return { id: data.id, serial, password: c.password, url: c.mqtt.url };
}

describe('an external Mosquitto whose accounts Lintel keeps (dynamic security)', () => {
  it('a device signs in with the credentials Lintel issued and goes online by its heartbeat', async () => {
    const d = await device();
    expect(d.url).toBe(broker.url);
    expect(await drain()).toBeGreaterThan(0);
    const r = await heartbeat(as(d.serial, d.password), d.serial);
    expect(r).toMatchObject({ code: 0 });
    expect(r.stderr).not.toMatch(/not authori[sz]ed/i);
    await until(async () => (await statusOf(d.id)) === 'online');
    expect(await mayRead(as(d.serial, d.password), deviceTopics(d.serial).request)).toBe(true);
  });

  it('is refused another serial’s topics, and a wrong password', async () => {
    const a = await device();
    const b = await device();
    await drain();
    // MQTT 5: the broker's PUBACK says not authorised
    const other = await heartbeat(as(a.serial, a.password), b.serial);
    expect(other.stderr).toMatch(/not authori[sz]ed/i);
    expect(await mayRead(as(a.serial, a.password), deviceTopics(b.serial).request)).toBe(false);
    expect(await mayRead(as(a.serial, a.password), 'device/request/v0/+')).toBe(false);
    // its own is allowed, and b stays offline: the refused heartbeat never reached the platform
    expect((await heartbeat(as(a.serial, a.password), a.serial)).stderr).not.toMatch(/not authori[sz]ed/i);
    await until(async () => (await statusOf(a.id)) === 'online');
    expect(await statusOf(b.id)).toBe('offline');
    expect(refusedLogin(await heartbeat(as(a.serial, `${a.password}x`), a.serial))).toBe(true);
    expect(refusedLogin(await heartbeat(as(a.serial, b.password), a.serial))).toBe(true);
  });

  it('an account signs in only under its own client id: another device cannot take A’s (issue 20 item 5)', async () => {
    const a = await device();
    const b = await device();
    await drain();
    // B with its own right password and A's client id: refused by the broker
    expect(refusedLogin(await heartbeat(as(b.serial, b.password), b.serial, a.serial))).toBe(true);
    // under its own, B is welcome; A too
    expect((await heartbeat(as(b.serial, b.password), b.serial)).code).toBe(0);
    expect((await heartbeat(as(a.serial, a.password), a.serial)).code).toBe(0);
  });

  it('after a password reset the old password is refused and the new one works', async () => {
    const d = await device();
    await drain();
    expect((await heartbeat(as(d.serial, d.password), d.serial)).code).toBe(0);
    const reset = await getCommand('device.credentials_reset').run({ api }, { id: d.id });
    expect(reset.password).not.toBe(d.password);
    expect(await drain()).toBe(1);
    expect(refusedLogin(await heartbeat(as(d.serial, d.password), d.serial))).toBe(true);
    expect((await heartbeat(as(d.serial, reset.password), d.serial)).code).toBe(0);
  });

  it('a changed serial number: the old account goes, the new one has the new topics', async () => {
    const d = await device();
    await drain();
    const serial = `DS-${uid()}`;
    await getCommand('device.update').run({ api }, { id: d.id, serial_number: serial });
    expect(await drain()).toBe(2);
    expect(refusedLogin(await heartbeat(as(d.serial, d.password), d.serial))).toBe(true);
    const r = await heartbeat(as(serial, d.password), serial);
    expect(r.code).toBe(0);
    expect(r.stderr).not.toMatch(/not authori[sz]ed/i);
    await until(async () => (await statusOf(d.id)) === 'online');
  });

  it('a deleted device is refused', async () => {
    const d = await device();
    await drain();
    expect((await heartbeat(as(d.serial, d.password), d.serial)).code).toBe(0);
    await getCommand('device.delete').run({ api }, { id: d.id });
    expect(await drain()).toBe(1);
    expect(refusedLogin(await heartbeat(as(d.serial, d.password), d.serial))).toBe(true);
  });

  it('`lintel devices broker-sync` makes an account lost on the broker and deletes one no device has', async () => {
    const d = await device();
    await drain();
    const dynsec = ts.server.context.devices.dynsec!;
    // an administrator deleted the device's account by hand; a device deleted while its account stayed
    await dynsec.must([{ command: 'deleteClient', username: d.serial }]);
    const ghost = `DS-${uid()}`;
    await dynsec.syncDevice(ghost, 'ghost-password');
    expect(refusedLogin(await heartbeat(as(d.serial, d.password), d.serial))).toBe(true);
    expect((await heartbeat(as(ghost, 'ghost-password'), ghost)).code).toBe(0);
    const cli = freshConfigDir();
    const login = await lintel(['login', '--server', ts.url, '--login', ts.adminLogin, '--password-stdin'], {
      configDir: cli,
      input: `${ts.adminPassword}\n`,
    });
    expect(login.code, login.stderr).toBe(0);
    const sync = await lintel(['devices', 'broker-sync', '--json'], { configDir: cli });
    expect(sync.code, sync.stderr).toBe(0);
    expect(JSON.parse(sync.stdout)).toEqual({ queued: true });
    expect(await drain()).toBe(1);
    expect((await heartbeat(as(d.serial, d.password), d.serial)).code).toBe(0);
    expect(refusedLogin(await heartbeat(as(ghost, 'ghost-password'), ghost))).toBe(true);
  });

  it('the platform’s account with an outdated password (the admin’s changed): set again at start', async () => {
    const gateway = ts.server.context.devices;
    await gateway.dynsec!.resetPlatformPassword('an-admin-password-of-before');
    await gateway.stop();
    await gateway.start();
    expect(gateway.connected).toBe(true);
    const d = await device();
    await drain();
    expect((await heartbeat(as(d.serial, d.password), d.serial)).code).toBe(0);
    await until(async () => (await statusOf(d.id)) === 'online');
  });

  it('accounts made while the broker was down are made when it is back', async () => {
    await broker.kill();
    const d = await device();
    // the account's job finds no broker: it is retried later (by the server's clock, which does not move here)
    expect(await drain()).toBe(1);
    const jobs = await sql<{ state: string; attempts: number }>`select state, attempts from jobs
      where kind = 'device.broker_account' and payload->>'serial' = ${d.serial}`.execute(
      ts.server.context.db,
    );
    expect(jobs.rows).toEqual([{ state: 'waiting', attempts: 1 }]);
    await broker.start();
    // the platform's control connection comes back by itself and queues a reconciliation, which makes it
    await until(async () => ts.server.context.devices.dynsec?.connected && (await drain()) > 0);
    expect(await drain()).toBe(0);
    const r = await heartbeat(as(d.serial, d.password), d.serial);
    expect(r.code).toBe(0);
    await until(async () => (await statusOf(d.id)) === 'online');
  });
});
