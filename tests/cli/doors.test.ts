/**
 * `lintel doors list|open` (issue 23 item 8), generated from `door.list` / `door.open`: a concierge (call
 * permissions only, no device permission) finds a simulated panel online on mqtt (the embedded broker) by its
 * SIP number and opens it from the command line; the panel's lock opens and its `door_opened` (source
 * `remote`) reaches the device events. A device that is no door, one out of the concierge's groups, and a
 * user without call permissions are refused with the catalogue's message and a non-zero exit.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { SimulatedDevice } from '@lintel/device-sim';
import { startTestServer, type TestServer } from '../support/server';
import { admin, everyFeatureOn, group, licence, rootGroup, uid, userWith } from '../support/fixtures';
import { until } from '../devices/mqtt-clients';
import { buildCli, freshConfigDir, lintel, removeConfigDirs } from './support';

let ts: TestServer;
let api: ApiClient;
let root: number;
let building: number;
let concierge: string;
let outsider: string;
const sims: SimulatedDevice[] = [];

async function signIn(login: string, password: string): Promise<string> {
  const dir = freshConfigDir();
  const r = await lintel(['login', '--server', ts.url, '--login', login, '--password-stdin'], {
    configDir: dir,
    input: `${password}\n`,
  });
  expect(r.code, r.stderr).toBe(0);
  return dir;
}

beforeAll(async () => {
  const built = buildCli();
  expect(built.status, built.stderr).toBe(0);
  ts = await startTestServer();
  await licence(ts, everyFeatureOn());
  api = await admin(ts);
  root = await rootGroup(api);
  building = await group(api, `Building ${uid()}`, root);
  // a concierge of the building: his own group's doors, no device permission at all
  const c = await userWith(ts, api, { permissions: ['calls.concierge_receive'], domains: [building] });
  concierge = await signIn(c.login, c.password);
  const o = await userWith(ts, api, { permissions: ['users.view'], domains: [building] });
  outsider = await signIn(o.login, o.password);
}, 120_000);
afterAll(async () => {
  await Promise.all(sims.map((s) => s.stop().catch(() => undefined)));
  await ts?.close();
  removeConfigDirs();
});

/** A device in `domain`, its simulator online on mqtt, and a SIP number of its own when `number` is given. */
async function device(opts: { type: 'panel' | 'monitor'; domain: number; number?: string }) {
  const serial = `DOOR-${uid()}`;
  const { data } = await getCommand('device.create').run(
    { api },
    {
      name: `Entrance ${serial}`,
      type: opts.type,
      serial_number: serial,
      domain_id: opts.domain,
      protocol: 'mqtt',
    },
  );
  const c = await getCommand('device.credentials').run({ api }, { id: data.id });
  const sim = new SimulatedDevice({
    serial,
    management: { protocol: 'mqtt', url: c.mqtt.url, login: c.login, password: c.password },
    heartbeatMs: 0,
  });
  sims.push(sim);
  await sim.start();
  await until(async () => (await getCommand('device.get').run({ api }, { id: data.id })).status === 'online');
  if (opts.number)
    await getCommand('sip_number.create').run(
      { api },
      {
        number: opts.number,
        name: serial,
        domain_id: opts.domain,
        device_id: data.id,
        password: 'Door-secret-1',
      },
    );
  return { id: data.id, serial, sim };
}

it('a concierge finds the panel by its SIP number and opens it; the panel logs the opening', async () => {
  const number = String(70000 + Math.floor(Math.random() * 9999));
  const panel = await device({ type: 'panel', domain: building, number });

  const list = await lintel(['doors', 'list', '--search', number, '--json'], { configDir: concierge });
  expect(list.code, list.stderr).toBe(0);
  const rows = JSON.parse(list.stdout) as { data: { id: number; sip_number: { number: string } | null }[] };
  expect(rows.data.map((d) => [d.id, d.sip_number?.number])).toEqual([[panel.id, number]]);

  const open = await lintel(['doors', 'open', String(panel.id), '--json'], { configDir: concierge });
  expect(open.code, open.stderr).toBe(0);
  expect(JSON.parse(open.stdout)).toEqual({ id: panel.id, lock: 1, opened: true });
  expect(panel.sim.locks[1].opened).toBe(1);
  expect(panel.sim.locks[2].opened).toBe(0);

  // what the panel says of it: a door opened from afar, in the device events
  await until(async () => {
    const events = await getCommand('device_event.list').run(
      { api },
      { filters: [{ field: 'serial_number', rule: 'equals', value: panel.serial }] },
    );
    return events.data.some((e) => e.kind === 'door_opened' && e.reason === 'remote' && e.lock === 1);
  });
}, 120_000);

it('refuses a device that is no door, a door of another group, and a user without call permissions', async () => {
  const monitor = await device({ type: 'monitor', domain: building });
  const elsewhere = await device({ type: 'panel', domain: root });
  for (const d of [monitor, elsewhere]) {
    const r = await lintel(['doors', 'open', String(d.id)], { configDir: concierge });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/not found/i);
    expect(d.sim.locks[1].opened).toBe(0);
  }
  const list = await lintel(['doors', 'list', '--json'], { configDir: concierge });
  const ids = (JSON.parse(list.stdout) as { data: { id: number }[] }).data.map((d) => d.id);
  expect(ids).not.toContain(monitor.id);
  expect(ids).not.toContain(elsewhere.id);

  const noLock = await lintel(['doors', 'open', String(monitor.id), '--lock', '3'], { configDir: concierge });
  expect(noLock.code).not.toBe(0);

  const refused = await lintel(['doors', 'open', String(elsewhere.id)], { configDir: outsider });
  expect(refused.code).not.toBe(0);
  expect(elsewhere.sim.locks[1].opened).toBe(0);
}, 120_000);
