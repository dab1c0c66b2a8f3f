/**
 * The demo's simulated building: `seed.demo` registers four devices on mqtt in building 1, the server writes
 * their broker and credentials to the demo devices file (what `npm start` gives the simulator), and the
 * simulator's demo mode, following that file, brings them online on the embedded broker.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { runDemo } from '@lintel/device-sim';
import { startTestServer, type TestServer } from '../support/server';
import { admin } from '../support/fixtures';
import { until } from './mqtt-clients';

let ts: TestServer;
let api: ApiClient;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-demo-'));
const file = path.join(dir, 'demo-devices.json');
let stop: (() => Promise<void>) | null = null;

beforeAll(async () => {
  ts = await startTestServer({
    config: {
      demoDevicesFile: file,
      mqtt: { port: 0, host: '127.0.0.1', shared: false, requestTimeoutMs: 1000, sweepMs: 0 },
    },
  });
  api = await admin(ts);
});
afterAll(async () => {
  await stop?.();
  await ts?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

interface DemoFile {
  broker: string;
  devices: { serial: string; type: string; password: string; http_port: number }[];
}

it('registers a small building of simulated devices that the simulator brings online', async () => {
  // at start the server says where the broker is, with no devices yet
  const before = JSON.parse(fs.readFileSync(file, 'utf8')) as DemoFile;
  expect(before).toEqual({ broker: expect.stringMatching(/^mqtt:\/\//), devices: [] });
  expect(fs.statSync(file).mode & 0o777).toBe(0o600);

  const seeded = await getCommand('seed.demo').run({ api }, {});
  expect(seeded).toMatchObject({ created: true, devices: 4 });
  const demo = JSON.parse(fs.readFileSync(file, 'utf8')) as DemoFile;
  expect(demo.devices.map((d) => d.type).sort()).toEqual([
    'accesscontroller',
    'liftcontroller',
    'panel',
    'panel',
  ]);

  const { data } = await getCommand('device.list').run({ api }, { search: 'LINTEL-DEMO-', limit: 10 });
  expect(data).toHaveLength(4);
  expect(data.every((d) => d.protocol === 'mqtt' && d.status === 'offline')).toBe(true);
  expect(new Set(data.map((d) => d.domain.name))).toEqual(new Set(['Building 1']));

  stop = runDemo(file, () => undefined);
  await until(async () => {
    const now = await getCommand('device.list').run({ api }, { search: 'LINTEL-DEMO-', limit: 10 });
    return now.data.every((d) => d.status === 'online');
  }, 20_000);

  // seeded again: nothing more
  expect(await getCommand('seed.demo').run({ api }, {})).toMatchObject({ created: false, devices: 0 });
});
