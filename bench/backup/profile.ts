/**
 * Profiling aid for bench/backup (not a benchmark): keeps one seeded PostgreSQL database (PROFILE_DB, seeded
 * once with BENCH_ROWS users) and runs make (PROFILE=make) or make then apply (PROFILE=apply) over it, printing
 * the time of each. Run with `node --cpu-prof` through vite-node to see where the time goes.
 */
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { sql } from 'kysely';
import { createServer, loadConfig } from '../../apps/server/src/index';
import { makeBackup } from '../../apps/server/src/backup/make';
import { applyBackup, openBackup } from '../../apps/server/src/backup/apply';
import { BackupEntitySets } from '@lintel/commands';
import { seedUsers } from '../../tests/support/backups';

const ROWS = Number(process.env.BENCH_ROWS ?? 10_000);
const BASE = process.env.BENCH_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const name = process.env.PROFILE_DB ?? `lintel_prof_${ROWS}`;
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-prof-backup-'));
const u = new URL(BASE);
u.pathname = `/${name}`;
const c = new pg.Client({ connectionString: BASE });
await c.connect();
const exists = (await c.query('select 1 from pg_database where datname = $1', [name])).rowCount;
if (!exists) await c.query(`create database ${name}`);
await c.end();
const server = await createServer(
  loadConfig(
    {},
    {
      port: 0,
      dataDir: 'memory://',
      storageDir: path.join(work, 'storage'),
      backupsDir: work,
      databaseUrl: u.toString(),
      adminPassword: 'Bench-password-1',
      logLevel: 'silent',
      modules: [],
    },
  ),
);
const app = server.context;
if (!exists) {
  const t0 = performance.now();
  await seedUsers(app.db, ROWS, 'b');
  await sql`vacuum analyze`.execute(app.db);
  console.log('seeded', Math.round(performance.now() - t0), 'ms');
}
const file = path.join(work, 'p.zip');
let peak = 0;
let heap = 0;
let buffers = 0;
const timer = setInterval(() => {
  const m = process.memoryUsage();
  peak = Math.max(peak, m.rss);
  heap = Math.max(heap, m.heapUsed);
  buffers = Math.max(buffers, m.arrayBuffers);
}, 20);
// every second a forced GC (with --expose-gc): the heap that is held, not the garbage not yet collected
let held = 0;
const gcTimer = setInterval(() => {
  if (!global.gc) return;
  global.gc();
  held = Math.max(held, process.memoryUsage().heapUsed);
}, 1000);
for (let i = 0; i < Number(process.env.PROFILE_TIMES ?? 1); i++) {
  global.gc?.();
  peak = process.memoryUsage().rss;
  let t0 = performance.now();
  // this process's CPU (every thread: zlib's pool too) and its event loop's busy time over the make
  const cpu0 = process.cpuUsage();
  const elu0 = performance.eventLoopUtilization();
  const made = await makeBackup(app, {
    backupId: 0,
    projectId: 1,
    name: 'p',
    sets: [...BackupEntitySets],
    file,
  });
  console.log(
    'make',
    made.rows,
    'rows',
    Math.round(performance.now() - t0),
    'ms',
    fs.statSync(file).size,
    'bytes',
    Math.round(peak / 1048576),
    'MiB peak',
    JSON.stringify(made.tables),
  );
  const cpu = process.cpuUsage(cpu0);
  console.log(
    'make: process CPU',
    Math.round((cpu.user + cpu.system) / 1000),
    'ms, event loop busy',
    Math.round(performance.eventLoopUtilization(elu0).active),
    'ms',
  );
  if (process.env.PROFILE === 'apply') {
    global.gc?.();
    peak = process.memoryUsage().rss;
    t0 = performance.now();
    const image = await openBackup(file);
    const r = await applyBackup(app, image, 1);
    image.close();
    console.log(
      'apply',
      r.rows,
      'rows',
      Math.round(performance.now() - t0),
      'ms',
      Math.round(peak / 1048576),
      'MiB peak',
    );
  }
}
// PROFILE_ZIP: the last zip made kept there (to read it with other tools)
if (process.env.PROFILE_ZIP) fs.copyFileSync(file, process.env.PROFILE_ZIP);
clearInterval(timer);
clearInterval(gcTimer);
console.log(
  'heap peak',
  Math.round(heap / 1048576),
  'MiB; held after GC',
  Math.round(held / 1048576),
  'MiB; array buffers peak',
  Math.round(buffers / 1048576),
  'MiB',
);
await server.close();
fs.rmSync(work, { recursive: true, force: true });
