/**
 * apps/device-sim against the gateway: a simulated panel on MQTT (the embedded broker, with the credentials
 * the console shows) and one on HTTP go online; the platform asks each for its info through the one
 * interface; a panel that dies is offline by its last will; the built simulator runs as a process of its own
 * and is driven by its control API.
 */
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { SimulatedDevice } from '@lintel/device-sim';
import { startTestServer, type TestServer } from '../support/server';
import { admin, rootGroup, uid } from '../support/fixtures';
import { until } from './mqtt-clients';

let ts: TestServer;
let api: ApiClient;
let root: number;
const sims: SimulatedDevice[] = [];
const children: ChildProcess[] = [];

beforeAll(async () => {
  ts = await startTestServer();
  api = await admin(ts);
  root = await rootGroup(api);
});
afterAll(async () => {
  for (const c of children) c.kill('SIGTERM');
  await Promise.all(sims.map((s) => s.stop().catch(() => undefined)));
  await ts?.close();
});

async function register(protocol: 'mqtt' | 'http', extra: Record<string, unknown> = {}) {
  const serial = `SIM-${uid()}`;
  const { data } = await getCommand('device.create').run(
    { api },
    { name: `Sim ${serial}`, type: 'panel', serial_number: serial, domain_id: root, protocol, ...extra },
  );
  const credentials = await getCommand('device.credentials').run({ api }, { id: data.id });
  return { id: data.id, serial, credentials };
}
const statusOf = async (id: number) => (await getCommand('device.get').run({ api }, { id })).status;

describe('the device simulator', () => {
  it('a panel on MQTT goes online, answers the platform, and is offline by its last will when it dies', async () => {
    const d = await register('mqtt');
    const sim = new SimulatedDevice({
      serial: d.serial,
      management: {
        protocol: 'mqtt',
        url: d.credentials.mqtt.url,
        login: d.credentials.login,
        password: d.credentials.password,
      },
      heartbeatMs: 0,
    });
    sims.push(sim);
    await sim.start();
    await sim.heartbeat();
    await until(async () => (await statusOf(d.id)) === 'online');
    const info = await getCommand('device.info').run({ api }, { id: d.id });
    expect(info).toMatchObject({ device_serial_number: d.serial, device_type: 'panel', api_version: 'v1' });
    expect(sim.requests.map((r) => r.uri)).toEqual(['/api/info']);
    await sim.kill();
    await until(async () => (await statusOf(d.id)) === 'offline');
  });

  it('a panel on HTTP: heartbeats with its login and password, its info from its own address', async () => {
    const sim = new SimulatedDevice({
      serial: `SIM-${uid()}`,
      management: { protocol: 'http', url: '', login: '', password: '' },
      heartbeatMs: 0,
    });
    // the device's address is known once it listens: register it there, then point it at the platform
    await sim.start();
    sims.push(sim);
    const d = await register('http', { ip_address: '127.0.0.1', port: sim.httpPort });
    Object.assign(sim.opts, {
      serial: d.serial,
      management: {
        protocol: 'http',
        url: d.credentials.http_url,
        login: d.credentials.login,
        password: d.credentials.password,
      },
    });
    await sim.heartbeat();
    expect(await statusOf(d.id)).toBe('online');
    const info = await getCommand('device.info').run({ api }, { id: d.id });
    expect(info).toMatchObject({ device_serial_number: d.serial });
  });

  it('the built simulator, a process of its own, goes online and heartbeats on its control API', async () => {
    const d = await register('mqtt');
    const bin = path.resolve(import.meta.dirname, '../../apps/device-sim/dist/device-sim.js');
    const child = spawn(
      process.execPath,
      [
        bin,
        '--serial',
        d.serial,
        '--protocol',
        'mqtt',
        '--url',
        d.credentials.mqtt.url,
        '--login',
        d.credentials.login,
        '--password',
        d.credentials.password,
        '--heartbeat-ms',
        '0',
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    children.push(child);
    const first = await new Promise<string>((resolve) =>
      createInterface({ input: child.stdout! }).once('line', resolve),
    );
    const { http_port } = JSON.parse(first) as { http_port: number };
    await until(async () => (await statusOf(d.id)) === 'online');
    const before = (await getCommand('device.get').run({ api }, { id: d.id })).last_heartbeat_at;
    const res = await fetch(`http://127.0.0.1:${http_port}/control/heartbeat`, { method: 'POST' });
    expect(await res.json()).toEqual({ heartbeats: 2 });
    await until(
      async () => (await getCommand('device.get').run({ api }, { id: d.id })).last_heartbeat_at !== before,
    );
    child.kill('SIGTERM');
    await until(async () => (await statusOf(d.id)) === 'offline');
  });
});
