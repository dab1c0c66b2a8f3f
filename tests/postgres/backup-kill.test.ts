/**
 * Issue 24 item 1: a server killed with SIGKILL in the middle of applying a backup — after it deleted the
 * rows the backup lacks, while it writes the users — leaves the data as it was; another instance then applies
 * the same backup whole. The applying instance is a child process (tests/support/backup-child.ts) that stops
 * dead at that point, so the kill lands there every run.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sql } from 'kysely';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { freshDatabase, startTestServer, type TestServer } from '../support/server';
import { admin, failure, signIn } from '../support/fixtures';
import { projectRows, seedUsers, waitReady } from '../support/backups';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const backups = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-backups-'));
let database: Awaited<ReturnType<typeof freshDatabase>>;
let ts: TestServer;
let api: ApiClient;
let child: ChildProcess | null = null;

beforeAll(async () => {
  database = await freshDatabase();
  ts = await startTestServer({ database: database.url, config: { backupsDir: backups } });
  api = await admin(ts);
}, 120_000);
afterAll(async () => {
  child?.kill('SIGKILL');
  await ts?.close();
  await database?.drop();
  fs.rmSync(backups, { recursive: true, force: true });
});

it('a kill -9 during apply leaves the old data; the same backup then applies whole', async () => {
  const db = ts.server.context.db;
  await seedUsers(db, 5000, 'k');
  const made = await getCommand('backup.make').run({ api }, { name: 'before' });
  await waitReady(api, made.data.id, 600_000);
  const atBackup = await projectRows(db, 1);

  // changes after the backup: users gone, users added, one edited
  await sql`delete from users where project_id = 1 and id % 4 = 0 and name like '%sk-%'`.execute(db);
  await seedUsers(db, 300, 'later');
  await sql`update users set name = 'Edited after' where id = (select max(id) from users)`.execute(db);
  const current = await projectRows(db, 1);
  expect(current).not.toEqual(atBackup);

  child = spawn(
    path.join(repoRoot, 'node_modules/.bin/vite-node'),
    [path.join(repoRoot, 'tests/support/backup-child.ts')],
    {
      cwd: repoRoot,
      env: { ...process.env, CHILD_DATABASE_URL: database.url, CHILD_BACKUPS_DIR: backups },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const lines: string[] = [];
  const waitFor = (prefix: string) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const line = lines.find((l) => l.startsWith(prefix));
        if (line) resolve(line);
      };
      child!.stdout!.on('data', (chunk: Buffer) => {
        lines.push(...chunk.toString().split('\n').filter(Boolean));
        check();
      });
      child!.once('exit', (code) => reject(new Error(`the child exited (${code}) before "${prefix}"`)));
      check();
    });
  const childUrl = (await waitFor('ready ')).split(' ')[1]!;
  const childApi = await signIn({ ...ts, url: childUrl }, ts.adminLogin, ts.adminPassword);
  const applying = failure(getCommand('backup.apply').run({ api: childApi }, { id: made.data.id }));
  await waitFor('upserting users');
  const exited = new Promise((r) => child!.once('exit', r));
  child.kill('SIGKILL');
  await exited;
  child = null;
  // the request died with the process
  expect((await applying).status).toBeGreaterThanOrEqual(0);

  // nothing of the half-done apply is left (PostgreSQL rolled it back when its connection dropped)
  expect(await projectRows(db, 1)).toEqual(current);

  // and the same backup applies whole on the instance that lives
  await getCommand('backup.apply').run({ api }, { id: made.data.id });
  expect(await projectRows(db, 1)).toEqual(atBackup);
}, 900_000);
