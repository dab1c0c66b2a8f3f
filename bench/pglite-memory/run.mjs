// bench/pglite-memory (issue 26 item 7): what the embedded database (PGlite) costs in memory, against the same
// server on PostgreSQL in the same run. For each storage: the built server's first start on a fresh database
// (its peak, VmHWM, and its resident size once started), then — with 100,000 users added straight into its
// tables (the server stopped; PGlite's folder opened by this process) — its start again, idle, and after it
// served 50 pages of the users list and a search. Memory is read from /proc, so the machine's load moves the
// times, not the figures.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { machine, signIn, startServer, writeResults } from '../lib.mjs';

const USERS = Number(process.env.BENCH_USERS ?? 100_000);
const PASSWORD = 'Bench-password-1';
const PG_BASE = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** VmRSS and VmHWM of a process, in MiB. */
function memoryOf(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

/** The process's CPU time so far (utime + stime), in clock ticks. */
function cpuOf(pid) {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(f[11]) + Number(f[12]);
}

/** Waits until the process spends no CPU for a second (its start-up work done), at most 60 s. */
async function settled(pid) {
  const end = Date.now() + 60_000;
  let last = cpuOf(pid);
  while (Date.now() < end) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = cpuOf(pid);
    if (now - last <= 2) return;
    last = now;
  }
}

const SEED = (n) => `
  with a as (
    insert into accounts (login, email, password_hash, locale)
    select 'mem-' || i, 'mem-' || i || '@example.test', 'not-a-hash', 'en' from generate_series(1, ${n}) i
    returning id, login)
  insert into users (project_id, account_id, role_id, name, description)
  select 1, a.id, (select id from roles where project_id = 1 order by id limit 1), 'Member ' || a.login, ''
  from a;
  insert into user_domains (user_id, domain_id)
  select u.id, (select id from domains where project_id = 1 and parent_id is null limit 1)
  from users u where u.project_id = 1 and u.name like 'Member mem-%';
  analyze;`;

async function serve(url, token) {
  const get = (p) =>
    fetch(`${url}/api/v0${p}`, { headers: { authorization: `Bearer ${token}` } }).then(async (r) => {
      if (!r.ok) throw new Error(`${p}: ${r.status}`);
      await r.arrayBuffer();
    });
  for (let page = 1; page <= 50; page++) await get(`/users?page=${page}&limit=50&sort=name`);
  await get(`/users?search=${encodeURIComponent('mem-4242')}`);
}

async function measure(storage) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-mem-'));
  let dbName = null;
  const env = {
    PORT: String(18600 + Math.floor(Math.random() * 300)),
    LINTEL_ADMIN_PASSWORD: PASSWORD,
    LINTEL_DATA_DIR: dataDir,
    LINTEL_SIP: 'off',
    MQTT_PORT: String(19100 + Math.floor(Math.random() * 300)),
  };
  if (storage === 'postgres') {
    dbName = `lintel_mem_${process.pid}`;
    const admin = new pg.Client({ connectionString: PG_BASE });
    await admin.connect();
    await admin.query(`create database ${dbName}`);
    await admin.end();
    env.DATABASE_URL = `${PG_BASE.replace(/\/[^/]*$/, '')}/${dbName}`;
  } else env.DATABASE_URL = '';
  const row = { storage };
  try {
    // the first start: migrations on a fresh database
    let server = await startServer(env);
    await settled(server.pid);
    const first = memoryOf(server.pid);
    row.firstPeak = first.peak;
    row.firstIdle = first.rss;
    await server.stop();

    // 100,000 users, straight into the tables
    const t0 = Date.now();
    if (storage === 'postgres') {
      const c = new pg.Client({ connectionString: env.DATABASE_URL });
      await c.connect();
      await c.query(SEED(USERS));
      await c.end();
    } else {
      const db = await PGlite.create(path.join(dataDir, 'pglite'), { extensions: { pg_trgm } });
      await db.exec(SEED(USERS));
      await db.close();
    }
    row.seedS = (Date.now() - t0) / 1000;

    server = await startServer(env);
    await settled(server.pid);
    const started = memoryOf(server.pid);
    row.startPeak = started.peak;
    row.startIdle = started.rss;
    const token = await signIn(server.url, 'admin', PASSWORD);
    await serve(server.url, token);
    await settled(server.pid);
    const served = memoryOf(server.pid);
    row.servedIdle = served.rss;
    row.servedPeak = served.peak;
    await server.stop();
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
    if (dbName) {
      const admin = new pg.Client({ connectionString: PG_BASE });
      await admin.connect();
      await admin.query(`drop database if exists ${dbName} with (force)`);
      await admin.end();
    }
  }
  console.log(JSON.stringify(row));
  return row;
}

const load = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(', ');
const before = load();
const rows = [];
for (const storage of ['pglite', 'postgres']) rows.push(await measure(storage));
const mib = (x) => Math.round(x).toLocaleString('en');
const table = rows
  .map(
    (r) =>
      `| ${r.storage === 'pglite' ? 'PGlite (embedded)' : 'PostgreSQL'} | ${mib(r.firstPeak)} | ${mib(r.firstIdle)} | ${mib(r.startPeak)} | ${mib(r.startIdle)} | ${mib(r.servedIdle)} | ${mib(r.servedPeak)} |`,
  )
  .join('\n');
const [lite, pgRow] = rows;
writeResults(
  'pglite-memory',
  `## pglite-memory — the server's memory on the embedded database against PostgreSQL (issue 26, item 7)

${new Date().toISOString().slice(0, 10)} · ${machine()} · load average before ${before}, after ${load()}.
The built server's resident memory (VmRSS) and peak (VmHWM) from /proc, in MiB, once its start-up work is
done (no CPU for a second). First start: a fresh database (migrations, the first project). Then ${USERS.toLocaleString('en')}
users added straight into the tables (the server stopped), and the server started again: idle, then after 50
pages of the users list and a search. On PostgreSQL the database's own processes are not counted (they are
PostgreSQL's shared buffers and backends, set by its own configuration).

| storage | first start: peak | first start: idle | ${USERS.toLocaleString('en')} users, start: peak | idle | after serving: idle | peak |
|---|---|---|---|---|---|---|
${table}

PGlite over PostgreSQL in the server's process: first-start peak ×${(lite.firstPeak / pgRow.firstPeak).toFixed(1)}, idle with the users after serving ×${(lite.servedIdle / pgRow.servedIdle).toFixed(1)}.

Run: \`node bench/pglite-memory/run.mjs\` (\`BENCH_USERS\`, \`BENCH_PG_URL\`).`,
);
