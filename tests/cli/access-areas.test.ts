/**
 * `lintel access-areas …`, generated from the declaration of the anti-passback areas (issue 21 item 8): an
 * area made with its entry and exit devices, listed by a filter on a relation, given one more exit device by
 * the relation verb, and deleted.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin, rootGroup, uid } from '../support/fixtures';
import { buildCli, freshConfigDir, lintel, removeConfigDirs } from './support';

let ts: TestServer;
let dir: string;
let api: ApiClient;
const doors: number[] = [];

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
  const root = await rootGroup(api);
  for (let n = 0; n < 3; n++) {
    const serial = `CLIA-${uid()}`;
    const device = await getCommand('device.create').run(
      { api },
      { name: serial, type: 'panel', serial_number: serial, domain_id: root, protocol: 'http' },
    );
    doors.push(device.data.id);
  }
});
afterAll(async () => {
  await ts?.close();
  removeConfigDirs();
});

const json = async (args: string[]) => {
  const r = await lintel([...args, '--json'], { configDir: dir });
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
};

it('makes, lists, extends and deletes an anti-passback area', async () => {
  const [a, b, c] = doors as [number, number, number];
  const name = `Lobby ${uid()}`;
  const made = await json([
    'access-areas',
    'create',
    '--name',
    name,
    '--entry-devices',
    String(a),
    '--exit-devices',
    String(b),
    '--reset-after-min',
    '30',
  ]);
  expect(made.data).toMatchObject({
    name,
    entry_devices: [{ id: a }],
    exit_devices: [{ id: b }],
    reset_after_min: 30,
  });
  const id = made.data.id as number;

  const listed = await json(['access-areas', 'list', '--where', `entry_devices has ${a}`]);
  expect(listed.data.map((r: { id: number }) => r.id)).toEqual([id]);

  const extended = await json(['access-areas', 'add-exit-devices', String(id), '--exit-devices', String(c)]);
  expect(extended.data.exit_devices.map((d: { id: number }) => d.id).sort()).toEqual([b, c].sort());

  const gone = await lintel(['access-areas', 'delete', String(id), '--yes'], { configDir: dir });
  expect(gone.code, gone.stderr).toBe(0);
  expect((await lintel(['access-areas', 'get', String(id)], { configDir: dir })).code).toBe(5);
});
