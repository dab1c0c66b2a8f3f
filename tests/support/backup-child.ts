/**
 * A server instance in a process of its own on the database CHILD_DATABASE_URL (backups in CHILD_BACKUPS_DIR)
 * that stops dead in the middle of applying a backup: once the apply has deleted the rows the backup lacks and
 * starts writing the users, it prints `upserting users` and blocks its event loop, so its transaction stays
 * open, uncommitted, until the test kills the process with SIGKILL. Prints `ready <url>` once it listens.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createServer, loadConfig } from '../../apps/server/src/index';
import { backupProgress } from '../../apps/server/src/backup/progress';

const storageDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-child-'));
const config = loadConfig(
  {},
  {
    port: 0,
    host: '127.0.0.1',
    dataDir: 'memory://',
    storageDir,
    backupsDir: process.env.CHILD_BACKUPS_DIR,
    databaseUrl: process.env.CHILD_DATABASE_URL,
    modules: ['events', 'http'],
    logLevel: 'warn',
    mqtt: { port: 0, host: '127.0.0.1', shared: false, requestTimeoutMs: 5_000, sweepMs: 0 },
  },
);
backupProgress.on('apply', (p: { phase: string; table: string }) => {
  if (p.phase !== 'upsert' || p.table !== 'users') return;
  fs.writeSync(1, 'upserting users\n');
  // the process hangs here, its transaction open, until it is killed
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
});
const server = await createServer(config);
const address = await server.listen();
process.stdout.write(`ready ${address.replace('0.0.0.0', '127.0.0.1')}\n`);
