/**
 * `lintel devices raw-list|set-protocol|sync-errors`, generated from the registry: the light list finds a
 * device by serial; set to none, the device's waiting task is stopped and a restart is refused with the
 * catalogue's message; its sync errors are empty lists.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import { startTestServer, type TestServer } from '../support/server';
import { admin, rootGroup, uid } from '../support/fixtures';
import { buildCli, freshConfigDir, lintel, removeConfigDirs } from './support';

let ts: TestServer;
let dir: string;
let deviceId: number;
let serial: string;

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
  const api = await admin(ts);
  serial = `CLI-${uid()}`;
  deviceId = (
    await getCommand('device.create').run(
      { api },
      { name: serial, type: 'panel', serial_number: serial, domain_id: await rootGroup(api) },
    )
  ).data.id;
  await getCommand('device.restart').run({ api }, { id: deviceId });
});
afterAll(async () => {
  await ts?.close();
  removeConfigDirs();
});

it('lists devices light, sets a protocol to none and is refused a restart', async () => {
  const list = await lintel(['devices', 'raw-list', '--search', serial, '--json'], { configDir: dir });
  expect(list.code, list.stderr).toBe(0);
  expect((JSON.parse(list.stdout) as { data: unknown[] }).data).toMatchObject([
    { id: deviceId, serial_number: serial, protocol: 'http', status: 'offline' },
  ]);

  const set = await lintel(['devices', 'set-protocol', String(deviceId), '--protocol', 'none', '--json'], {
    configDir: dir,
  });
  expect(set.code, set.stderr).toBe(0);
  expect(JSON.parse(set.stdout)).toEqual({ id: deviceId, protocol: 'none', stopped_tasks: 1 });

  const restart = await lintel(['devices', 'restart', String(deviceId)], { configDir: dir });
  expect(restart.code).not.toBe(0);
  expect(restart.stderr).toMatch(/protocol is none/i);

  const errors = await lintel(['devices', 'sync-errors', String(deviceId), '--json'], { configDir: dir });
  expect(errors.code, errors.stderr).toBe(0);
  expect(JSON.parse(errors.stdout)).toEqual({ identifiers: [], schedules: [] });
}, 120_000);
