/**
 * `lintel devices remote-open-lock|remote-reboot|remote-state`, generated from the remote-control commands'
 * declarations: the lock of a simulated panel online on mqtt (the embedded broker) opens from the command line;
 * a device on http is refused with the catalogue's message and a non-zero exit.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { SimulatedDevice } from '@lintel/device-sim';
import { startTestServer, type TestServer } from '../support/server';
import { admin, rootGroup, uid } from '../support/fixtures';
import { until } from '../devices/mqtt-clients';
import { buildCli, freshConfigDir, lintel, removeConfigDirs } from './support';

let ts: TestServer;
let dir: string;
let api: ApiClient;
const sims: SimulatedDevice[] = [];

beforeAll(async () => {
  const built = buildCli();
  expect(built.status, built.stderr).toBe(0);
  ts = await startTestServer();
  dir = freshConfigDir();
  const r = await lintel(['login', '--server', ts.url, '--login', ts.adminLogin, '--password-stdin'], {
    configDir: dir,
    input: `${ts.adminPassword}\n`,
  });
  expect(r.code, r.stderr).toBe(0);
  api = await admin(ts);
});
afterAll(async () => {
  await Promise.all(sims.map((s) => s.stop().catch(() => undefined)));
  await ts?.close();
  removeConfigDirs();
});

async function panel(protocol: 'mqtt' | 'http') {
  const serial = `CLIR-${uid()}`;
  const { data } = await getCommand('device.create').run(
    { api },
    { name: serial, type: 'panel', serial_number: serial, domain_id: await rootGroup(api), protocol },
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
  await sim.start();
  if (protocol === 'mqtt')
    await until(
      async () => (await getCommand('device.get').run({ api }, { id: data.id })).status === 'online',
    );
  return { id: data.id, sim };
}

it('opens lock 2, reads the state and reboots a device online on mqtt', async () => {
  const d = await panel('mqtt');
  const open = await lintel(['devices', 'remote-open-lock', String(d.id), '--lock', '2', '--json'], {
    configDir: dir,
  });
  expect(open.code, open.stderr).toBe(0);
  expect(JSON.parse(open.stdout)).toEqual({ lock: 2, opened: true });
  expect(d.sim.locks[2]).toEqual({ open: true, opened: 1 });
  expect(d.sim.locks[1].opened).toBe(0);

  const state = await lintel(['devices', 'remote-state', String(d.id), '--json'], { configDir: dir });
  expect(state.code, state.stderr).toBe(0);
  expect((JSON.parse(state.stdout) as { locks: unknown[] }).locks).toEqual([
    { lock: 1, open: false },
    { lock: 2, open: true },
  ]);

  const reboot = await lintel(['devices', 'remote-reboot', String(d.id), '--json'], { configDir: dir });
  expect(reboot.code, reboot.stderr).toBe(0);
  expect(d.sim.applied.restart).toBe(1);
}, 120_000);

it('refuses a device on http with the catalogue message', async () => {
  const d = await panel('http');
  const r = await lintel(['devices', 'remote-open-lock', String(d.id), '--lock', '1'], { configDir: dir });
  expect(r.code).not.toBe(0);
  expect(r.stderr).toMatch(/The device protocol is not mqtt, cannot connect/);
  expect(d.sim.locks[1].opened).toBe(0);
}, 120_000);
