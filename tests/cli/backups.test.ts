/**
 * `lintel backups` from a script (issue 24 item 1): make (waiting for its job), last with its exit codes,
 * list --json, download to a file, apply --file FILE and apply by id restore a deleted user, delete; bad
 * usage is exit 2, a junk file the catalogue's "invalid backup image".
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin, rootGroup, userWith } from '../support/fixtures';
import { backupsDir } from '../../apps/server/src/backup/service';
import { buildCli, freshConfigDir, lintel, removeConfigDirs } from './support';

let ts: TestServer;
let api: ApiClient;
let dir: string;
let configDir: string;

beforeAll(async () => {
  expect(buildCli().status).toBe(0);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-cli-backups-'));
  ts = await startTestServer();
  api = await admin(ts);
  configDir = freshConfigDir();
  const login = await lintel(['login', '--server', ts.url, '--login', ts.adminLogin, '--password-stdin'], {
    configDir,
    input: `${ts.adminPassword}\n`,
  });
  expect(login.code, login.stderr).toBe(0);
}, 120_000);
afterAll(async () => {
  const backups = ts && backupsDir(ts.server.context.config);
  await ts?.close();
  removeConfigDirs();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  if (backups) fs.rmSync(backups, { recursive: true, force: true });
});

const run = (...args: string[]) => lintel(args, { configDir });

it('makes, checks, downloads, applies and deletes backups from a script', async () => {
  // no backup yet: `last` says so with exit 5
  const none = await run('backups', 'last', '--json');
  expect(none.code).toBe(5);

  const victim = await userWith(ts, api, {
    permissions: ['users.view'],
    domains: [await rootGroup(api)],
    name: 'Kept by the backup',
  });
  const made = await run('backups', 'make', '--name', 'nightly', '--json');
  expect(made.code, made.stderr).toBe(0);
  const backup = JSON.parse(made.stdout) as { id: number; state: string; rows: number };
  expect(backup.state).toBe('ready');
  expect(backup.rows).toBeGreaterThan(0);

  const last = await run('backups', 'last', '--max-age-hours', '1', '--json');
  expect(last.code, last.stderr).toBe(0);
  expect(JSON.parse(last.stdout)).toMatchObject({ id: backup.id, ok: true });
  const list = await run('backups', 'list', '--json');
  expect(list.code, list.stderr).toBe(0);
  expect(list.stdout).toContain('"nightly"');

  const file = path.join(dir, 'nightly.zip');
  const got = await run('backups', 'download', String(backup.id), '-o', file, '--json');
  expect(got.code, got.stderr).toBe(0);
  expect(fs.readFileSync(file).subarray(0, 2).toString()).toBe('PK');

  await getCommand('user.delete').run({ api }, { id: victim.id });
  const fromFile = await run('backups', 'apply', '--file', file, '--entities', 'users', '--json');
  expect(fromFile.code, fromFile.stderr).toBe(0);
  expect(JSON.parse(fromFile.stdout).entities).toEqual(['users']);
  expect((await getCommand('user.get').run({ api }, { id: victim.id })).name).toBe('Kept by the backup');

  await getCommand('user.delete').run({ api }, { id: victim.id });
  const byId = await run('backups', 'apply', String(backup.id), '--json');
  expect(byId.code, byId.stderr).toBe(0);
  expect((await getCommand('user.get').run({ api }, { id: victim.id })).name).toBe('Kept by the backup');

  // usage errors: both an id and a file, an unknown entity set
  expect((await run('backups', 'apply', String(backup.id), '--file', file)).code).toBe(2);
  expect((await run('backups', 'make', '--entities', 'users,nothing')).code).toBe(2);
  // a junk file: refused with the catalogue's code
  const junk = path.join(dir, 'junk.zip');
  fs.writeFileSync(junk, 'not a backup at all');
  const refused = await run('backups', 'apply', '--file', junk, '--json');
  expect(refused.code).toBe(1);
  expect(refused.stdout + refused.stderr).toContain('invalid_backup_image');

  const deleted = await run('backups', 'delete', String(backup.id), '--yes', '--json');
  expect(deleted.code, deleted.stderr).toBe(0);
  expect((await run('backups', 'last')).code).toBe(5);
}, 300_000);
