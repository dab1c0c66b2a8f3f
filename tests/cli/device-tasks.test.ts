/**
 * `lintel devices restart|tasks|task-stop|task-retry`, generated from the registry: a restart of an offline
 * device is a task that waits for it; the list shows it by device and by state; stopped and queued again.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import { startTestServer, type TestServer } from '../support/server';
import { admin, rootGroup, uid } from '../support/fixtures';
import { buildCli, freshConfigDir, lintel, removeConfigDirs } from './support';

let ts: TestServer;
let dir: string;
let deviceId: number;

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
  const serial = `CLI-${uid()}`;
  deviceId = (
    await getCommand('device.create').run(
      { api },
      { name: serial, type: 'panel', serial_number: serial, domain_id: await rootGroup(api) },
    )
  ).data.id;
});
afterAll(async () => {
  await ts?.close();
  removeConfigDirs();
});

type Tasks = { data: { id: number; kind: string; state: string; device: { id: number } }[] };

it('restarts a device as a task, lists it, stops it and queues it again', async () => {
  const made = await lintel(['devices', 'restart', String(deviceId), '--json'], { configDir: dir });
  expect(made.code, made.stderr).toBe(0);
  const { task } = JSON.parse(made.stdout) as { task: { id: number; state: string } };
  expect(task.state).toBe('waiting');

  const list = await lintel(['devices', 'tasks', '--device-id', String(deviceId), '--json'], {
    configDir: dir,
  });
  expect(list.code, list.stderr).toBe(0);
  expect((JSON.parse(list.stdout) as Tasks).data).toMatchObject([
    { id: task.id, kind: 'restart', state: 'waiting', device: { id: deviceId } },
  ]);

  const stop = await lintel(['devices', 'task-stop', String(task.id), '--json'], { configDir: dir });
  expect(stop.code, stop.stderr).toBe(0);
  const stopped = await lintel(['devices', 'tasks', '--state', 'stopped', '--json'], { configDir: dir });
  expect((JSON.parse(stopped.stdout) as Tasks).data.map((t) => t.id)).toEqual([task.id]);

  const retry = await lintel(['devices', 'task-retry', String(task.id), '--json'], { configDir: dir });
  expect(retry.code, retry.stderr).toBe(0);
  expect((JSON.parse(retry.stdout) as { task: { state: string } }).task.state).toBe('waiting');

  const table = await lintel(['devices', 'tasks'], { configDir: dir });
  expect(table.code, table.stderr).toBe(0);
  expect(table.stdout).toMatch(/restart/);
  expect(table.stdout).toMatch(/waiting/);
}, 120_000);
