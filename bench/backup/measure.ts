/**
 * One size of bench/backup, in a process of its own (its peak memory is this size's): a fresh PostgreSQL
 * database seeded with BENCH_ROWS users (with accounts, groups and markers), then Lintel's make (the zip) and
 * apply (one transaction) of every entity set, timed against pg_dump -Fc and pg_restore of the same database
 * in the same run. Prints one JSON line.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { sql } from 'kysely';
import { createServer, loadConfig } from '../../apps/server/src/index';
import { makeBackup } from '../../apps/server/src/backup/make';
import { applyBackup, openBackup } from '../../apps/server/src/backup/apply';
import { BackupEntitySets } from '@lintel/commands';
import { seedUsers } from '../../tests/support/backups';

const ROWS = Number(process.env.BENCH_ROWS ?? 10_000);
const BASE = process.env.BENCH_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-bench-backup-'));
const name = `lintel_bench_${randomBytes(4).toString('hex')}`;
const restored = `${name}_r`;

async function admin(q: string) {
  const c = new pg.Client({ connectionString: BASE });
  await c.connect();
  try {
    await c.query(q);
  } finally {
    await c.end();
  }
}
const urlOf = (db: string) => {
  const u = new URL(BASE);
  u.pathname = `/${db}`;
  return u.toString();
};

let peak = 0;
const sample = () => (peak = Math.max(peak, process.memoryUsage().rss));
const timer = setInterval(sample, 20);
async function phase<T>(work: () => Promise<T>): Promise<{ ms: number; peakMiB: number; value: T }> {
  global.gc?.();
  peak = process.memoryUsage().rss;
  const t0 = performance.now();
  const value = await work();
  const ms = performance.now() - t0;
  sample();
  return { ms, peakMiB: Math.round(peak / 1048576), value };
}
function timed(cmd: string, args: string[]): number {
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) throw new Error(`${cmd} failed`);
  return performance.now() - t0;
}

await admin(`create database ${name}`);
try {
  const server = await createServer(
    loadConfig(
      {},
      {
        port: 0,
        dataDir: 'memory://',
        storageDir: path.join(work, 'storage'),
        backupsDir: work,
        databaseUrl: urlOf(name),
        adminPassword: 'Bench-password-1',
        logLevel: 'silent',
        modules: [],
      },
    ),
  );
  const app = server.context;
  await seedUsers(app.db, ROWS, 'b');
  await sql`vacuum analyze`.execute(app.db);
  // the seed's writes flushed now, not by the checkpointer while the make reads (pg_dump runs later, when they
  // are long flushed)
  await sql`checkpoint`.execute(app.db);
  const file = path.join(work, 'bench.zip');
  const baseline = Math.round(process.memoryUsage().rss / 1048576);
  const made = await phase(() =>
    makeBackup(app, { backupId: 0, projectId: 1, name: 'bench', sets: [...BackupEntitySets], file }),
  );
  const rows = made.value.rows;
  const applied = await phase(async () => {
    const image = await openBackup(file);
    try {
      return await applyBackup(app, image, 1);
    } finally {
      image.close();
    }
  });
  await server.close();

  const dump = path.join(work, 'bench.dump');
  const dumpMs = timed('pg_dump', ['-Fc', '-f', dump, urlOf(name)]);
  await admin(`create database ${restored}`);
  const restoreMs = timed('pg_restore', ['-d', urlOf(restored), dump]);
  process.stdout.write(
    JSON.stringify({
      users: ROWS,
      rows,
      zipBytes: fs.statSync(file).size,
      dumpBytes: fs.statSync(dump).size,
      baselineMiB: baseline,
      make: { ms: Math.round(made.ms), peakMiB: made.peakMiB, rowsPerS: Math.round(rows / (made.ms / 1000)) },
      apply: {
        ms: Math.round(applied.ms),
        peakMiB: applied.peakMiB,
        rowsPerS: Math.round(applied.value.rows / (applied.ms / 1000)),
      },
      pgDump: { ms: Math.round(dumpMs), rowsPerS: Math.round(rows / (dumpMs / 1000)) },
      pgRestore: { ms: Math.round(restoreMs), rowsPerS: Math.round(rows / (restoreMs / 1000)) },
    }) + '\n',
  );
} finally {
  clearInterval(timer);
  await admin(`drop database if exists ${restored} with (force)`);
  await admin(`drop database if exists ${name} with (force)`);
  fs.rmSync(work, { recursive: true, force: true });
}
