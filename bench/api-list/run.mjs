// bench/api-list: the users list over 100,000 users on PGlite and on PostgreSQL, at 1 and 50 connections, for
// three filters (the contains filter of issue 14, a non-selective one matching 90 % of the rows and a rare one
// matching 5), each against its reference: the page statement alone, run by `pgbench` at 50 clients on the
// same PostgreSQL database in the same run. A bare Fastify route with a fixed 20-row page is the ceiling of
// Node on this machine.
//
// pgbench comes with PostgreSQL's client tools: `apt-get install postgresql-client` (Debian) provides
// /usr/bin/pgbench; without it the reference columns say "no pgbench".
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import {
  backendsOf,
  cpuOf,
  freePort,
  machine,
  root,
  signIn,
  startServer,
  waitFor,
  watchCpu,
  writeResults,
} from '../lib.mjs';

const USERS = Number(process.env.BENCH_USERS ?? 100_000);
const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const PG = process.env.BENCH_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const PASSWORD = 'Bench-password-1';
// BENCH_PGLITE=0: PostgreSQL only (the targets are PostgreSQL's)
const WITH_PGLITE = process.env.BENCH_PGLITE !== '0';
// extra Node flags for the server, e.g. BENCH_SERVER_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof'
const serverNodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
const listUrl = (filters) =>
  `/api/v0/users?filters=${encodeURIComponent(JSON.stringify(filters))}&sort=name&limit=20`;
/** The cases: the issue's request, a filter matching 90 % of the scale users, and one matching 5. */
const CASES = [
  {
    key: 'contains',
    label: 'name contains "ann"',
    filters: [{ field: 'name', rule: 'contains', value: 'ann' }],
  },
  {
    key: 'broad',
    label: 'id above 10,001 (90 %)',
    filters: [{ field: 'id', rule: 'above', value: Math.round(USERS / 10) + 1 }],
  },
  {
    key: 'rare',
    label: 'name contains "as 191" (5 rows)',
    filters: [{ field: 'name', rule: 'contains', value: 'as 191' }],
  },
];
const query = listUrl(CASES[0].filters);

/**
 * autocannon at `connections` for DURATION s. With `cpu` ({ server: pid, db: name }), the CPU of the server
 * process and of the database's backends over the window (/proc), in ms per request.
 */
async function load(url, token, connections, path = query, cpu = null) {
  const server0 = cpu ? cpuOf(cpu.server) : NaN;
  const backends = cpu?.db ? watchCpu(() => backendsOf(cpu.db)) : null;
  const r = await autocannon({
    url: `${url}${path}`,
    connections,
    duration: DURATION,
    timeout: 30,
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  const serverS = cpu ? cpuOf(cpu.server) - server0 : NaN;
  const dbS = backends ? backends.stop() : NaN;
  const n = r.requests.total;
  // failures are figures too: they go into the table rather than stopping the run
  return {
    rps: r.requests.average,
    serverMs: (serverS * 1000) / n,
    dbMs: (dbS * 1000) / n,
    p50: r.latency.p50,
    p99: r.latency.p99,
    failed: r.non2xx + r.errors + r.timeouts,
  };
}

/** The page statement of a case as engine/list.ts writes it, with the values in place of its parameters. */
const NATURAL = (e) =>
  `regexp_replace(regexp_replace(${e}, '([0-9]+)', '00000000000000000000\\1', 'g'), '0*([0-9]{20})', '\\1', 'g')`;
const pageSql = (c, projectId) => {
  const f = c.filters[0];
  const cond = f.rule === 'contains' ? `t.name ilike '%${f.value}%'` : `t.${f.field} > ${Number(f.value)}`;
  return `select t.id from users t where t.project_id = ${projectId} and true and (${cond}) order by ${NATURAL('t.name')} asc, t.name asc, t.id asc limit 21 offset 0;`;
};

/**
 * pgbench running one statement at `clients` clients: its transactions per second, and the CPU of the
 * database's backends (pgbench's own process excluded) per transaction, in ms.
 */
async function pgbench(url, db, statement, clients) {
  const which = spawnSync('sh', ['-c', 'command -v pgbench']);
  if (which.status !== 0) return null;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-pgbench-'));
  const file = path.join(dir, 'page.sql');
  fs.writeFileSync(file, `${statement}\n`);
  const u = new URL(url);
  const backends = watchCpu(() => backendsOf(db));
  const child = spawn(
    'pgbench',
    [
      '-n',
      '-h',
      u.hostname,
      '-p',
      u.port || '5432',
      '-U',
      u.username || 'postgres',
      '-c',
      String(clients),
      '-j',
      '2',
      '-T',
      String(DURATION),
      '-f',
      file,
      u.pathname.slice(1),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  await new Promise((resolve) => child.once('close', resolve));
  const dbS = backends.stop();
  fs.rmSync(dir, { recursive: true, force: true });
  const tps = /tps = ([\d.]+) \(without/.exec(stdout);
  const lat = /latency average = ([\d.]+) ms/.exec(stdout);
  const done = /number of transactions actually processed: (\d+)/.exec(stdout);
  if (!tps || !done) throw new Error(`pgbench failed: ${stdout}${stderr}`);
  return {
    rps: Number(tps[1]),
    latency: Number(lat?.[1] ?? NaN),
    dbMs: (dbS * 1000) / Number(done[1]),
  };
}

/** The CPU a request costs, in ms: the server process plus the database's backends (PGlite: in the server). */
const cpuMs = (m) => (Number.isFinite(m.dbMs) ? m.serverMs + m.dbMs : m.serverMs);

async function measureLintel(label, env, db, reference) {
  const server = await startServer(
    { PORT: String(await freePort()), LINTEL_ADMIN_PASSWORD: PASSWORD, ...env },
    undefined,
    serverNodeArgs,
  );
  try {
    const token = await signIn(server.url, 'admin', PASSWORD);
    const t0 = performance.now();
    const auth = { authorization: `Bearer ${token}` };
    // a kept-alive socket the server has just closed fails the request before it is read: ask again, unless
    // the users are there already
    for (let attempt = 0; ; attempt++) {
      try {
        const seeded = await fetch(`${server.url}/api/v0/seed/scale`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...auth },
          body: JSON.stringify({ users: USERS }),
        });
        if (!seeded.ok) throw new Error(`seed failed: ${await seeded.text()}`);
        break;
      } catch (err) {
        if (attempt > 0 || !(err instanceof TypeError)) throw err;
        console.log(`${label}: seeding: ${err.message} (${err.cause?.message}); asking again`);
        await new Promise((r) => setTimeout(r, 2000));
        const now = await (await fetch(`${server.url}/api/v0/users?limit=1`, { headers: auth })).json();
        if (now.meta.total >= USERS) break;
      }
    }
    const seedS = (performance.now() - t0) / 1000;
    const cpu = { server: server.pid, db };
    const cases = [];
    for (const c of CASES) {
      const p = listUrl(c.filters);
      // the previous case's load may still be draining (PGlite answers one statement at a time): ask until
      // the server has caught up, so the case starts on an idle server and its meta is read
      let check;
      for (let i = 0; i < 60; i++) {
        const res = await fetch(`${server.url}${p}`, { headers: { authorization: `Bearer ${token}` } });
        check = await res.json();
        if (res.ok) break;
        console.log(`${label} ${c.key}: ${res.status} ${JSON.stringify(check)}; asking again`);
        await new Promise((r) => setTimeout(r, 1000));
      }
      console.log(`${label} ${c.key}: meta ${JSON.stringify(check.meta)}`);
      await load(server.url, token, 4, p); // warm-up
      const c1 = await load(server.url, token, 1, p, cpu);
      // A, B, A, B: the request at 50 connections and its reference in turn, so both see the same load
      const c50 = [];
      const ref = [];
      for (let round = 0; round < 2; round++) {
        c50.push(await load(server.url, token, 50, p, cpu));
        if (reference) ref.push(await reference(c));
      }
      console.log(`${label} ${c.key}: c1 ${JSON.stringify(c1)}`);
      for (let i = 0; i < 2; i++)
        console.log(`${label} ${c.key}: c50 ${JSON.stringify(c50[i])} ref ${JSON.stringify(ref[i] ?? null)}`);
      cases.push({ ...c, meta: check.meta, c1, c50, ref: ref.filter(Boolean) });
    }
    return { label, seedS, cases };
  } finally {
    await server.stop();
  }
}

async function measureBare() {
  const port = await freePort();
  const bareUrl = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [path.join(root, 'bench/api-list/bare-server.mjs')], {
    env: { ...process.env, PORT: String(port) },
    stdio: 'inherit',
  });
  try {
    await waitFor(`${bareUrl}/api/v0/server-info`);
    await load(bareUrl, null, 10);
    const cpu = { server: child.pid, db: null };
    return {
      c1: await load(bareUrl, null, 1, undefined, cpu),
      c50: await load(bareUrl, null, 50, undefined, cpu),
    };
  } finally {
    child.kill('SIGTERM');
  }
}

const loadBefore = os.loadavg();
const bare = await measureBare();
console.log(`bare Fastify: c1 ${bare.c1.rps.toFixed(0)} req/s, c50 ${bare.c50.rps.toFixed(0)} req/s`);
let pglite = null;
if (WITH_PGLITE) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-bench-'));
  pglite = await measureLintel('PGlite', { LINTEL_DATA_DIR: dataDir }, null, null);
  fs.rmSync(dataDir, { recursive: true, force: true });
}

const dbName = `lintel_bench_${Date.now()}`;
const admin = new pg.Client({ connectionString: PG });
await admin.connect();
await admin.query(`create database ${dbName}`);
let postgres;
try {
  const url = new URL(PG);
  url.pathname = `/${dbName}`;
  let project;
  postgres = await measureLintel('PostgreSQL', { DATABASE_URL: url.toString() }, dbName, async (c) => {
    if (project === undefined) {
      const db = new pg.Client({ connectionString: url.toString() });
      await db.connect();
      project = (await db.query('select min(project_id) as id from users')).rows[0].id;
      await db.end();
    }
    return pgbench(url.toString(), dbName, pageSql(c, project), 50);
  });
} finally {
  await admin.query(`drop database if exists ${dbName} with (force)`);
  await admin.end();
}
const loadAfter = os.loadavg();

const avg = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const f2 = (x) => (Number.isFinite(x) ? x.toFixed(2) : '—');
// the PostgreSQL reference of a case serves both storages: PGlite runs the same statement in process
const refsOf = (key) => postgres.cases.find((c) => c.key === key)?.ref ?? [];
const fmtTotal = (m) =>
  m ? `${m.total.toLocaleString('en')}${m.total_is_estimate ? ' (estimate)' : ''}` : 'no 200 within 60 s';
const rows = [];
for (const r of [pglite, postgres].filter(Boolean))
  for (const c of r.cases) {
    const refs = refsOf(c.key);
    const windows = [
      { n: 1, m: c.c1, ref: null },
      ...c.c50.map((m, i) => ({ n: 50, m, ref: refs[i] ?? null })),
    ];
    for (const { n, m, ref } of windows) {
      const wall = ref ? (m.rps / ref.rps).toFixed(2) : '—';
      const cpuRatio = ref && r === postgres ? (ref.dbMs / cpuMs(m)).toFixed(2) : '—';
      rows.push(
        `| ${r.label} | ${c.label} | ${fmtTotal(c.meta)} | ${n} | ${m.rps.toFixed(1)} | ${m.p50} | ${m.p99} | ${m.failed} | ${f2(m.serverMs)} | ${f2(m.dbMs)} | ${ref ? ref.rps.toFixed(0) : '—'} | ${ref ? f2(ref.dbMs) : '—'} | ${wall} | **${cpuRatio}** |`,
      );
    }
  }
const summary = postgres.cases
  .map((c) => {
    const reqCpu = avg(c.c50.map(cpuMs));
    const refCpu = c.ref.length ? avg(c.ref.map((x) => x.dbMs)) : NaN;
    return `${c.key} ${f2(reqCpu)} ms a request against ${f2(refCpu)} ms a page statement: CPU-cost ratio ${f2(refCpu / reqCpu)}`;
  })
  .join('; ');
const md = `## api-list — users list over ${USERS.toLocaleString('en')} users: three filters, sorted by name, against pgbench

${new Date().toISOString().slice(0, 10)} · ${machine()} · ${DURATION} s per window, after a warm-up · load average before ${loadBefore.map((x) => x.toFixed(1)).join(', ')}, after ${loadAfter.map((x) => x.toFixed(1)).join(', ')} (the machine is shared: other work competes for its 2 cores, so wall-clock ratios move with it; the CPU columns do not).
Request: \`GET ${decodeURIComponent(query)}\` and the same with the other two filters (first page of 20, with the total).
Reference: the page statement alone (\`select t.id … order by <natural name key> limit 21\`), run by \`pgbench -c 50 -j 2\` on the PostgreSQL database of the run. Per case: 1 connection, then A, B, A, B — the request at 50 connections and the reference in turn, so both see the same load.
CPU (utime + stime from /proc over each window, per request or transaction): the server process, and the PostgreSQL backends of the run's database (pgbench's own process excluded); on PGlite the database runs in the server process. CPU-cost ratio = the reference's CPU per transaction / the request's (server + backends). Targets (issue 26): contains ≥ 0.6 with p99 < 100 ms on a quiet machine; broad and rare ≥ 0.3.
Ceiling: a bare Fastify route answering a fixed 20-row page of the same shape: ${bare.c1.rps.toFixed(0)} req/s at 1 connection, ${bare.c50.rps.toFixed(0)} at 50; its process's CPU ${f2(bare.c1.serverMs)} ms a request at 1 connection, ${f2(bare.c50.serverMs)} at 50 (Node's floor on this machine).

| storage | filter | total in meta | connections | req/s | p50 ms | p99 ms | failed | server CPU ms/req | backends CPU ms/req | reference tx/s | reference CPU ms/tx | wall ratio | CPU-cost ratio |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}

PostgreSQL at 50 connections, mean of the two windows: ${summary}.
Seeding ${USERS.toLocaleString('en')} users: ${pglite ? `PGlite ${pglite.seedS.toFixed(1)} s, ` : ''}PostgreSQL ${postgres.seedS.toFixed(1)} s.`;
writeResults('api-list', md);
console.log(md);
