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
import { machine, root, signIn, startServer, waitFor, writeResults } from '../lib.mjs';

const USERS = Number(process.env.BENCH_USERS ?? 100_000);
const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const PG = process.env.BENCH_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const PASSWORD = 'Bench-password-1';
const listUrl = (filters) =>
  `/api/v0/users?filters=${encodeURIComponent(JSON.stringify(filters))}&sort=name&limit=20`;
/** The cases: the request, a filter matching 90 % of the scale users, and one matching 5. */
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

async function load(url, token, connections, path = query) {
  const r = await autocannon({
    url: `${url}${path}`,
    connections,
    duration: DURATION,
    timeout: 30,
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  // failures are figures too: they go into the table rather than stopping the run
  return {
    rps: r.requests.average,
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

/** pgbench running one statement at `clients` clients: its transactions per second, p99 from its log. */
function pgbench(url, statement, clients) {
  const which = spawnSync('sh', ['-c', 'command -v pgbench']);
  if (which.status !== 0) return null;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-pgbench-'));
  const file = path.join(dir, 'page.sql');
  fs.writeFileSync(file, `${statement}\n`);
  const u = new URL(url);
  const r = spawnSync(
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
    { encoding: 'utf8' },
  );
  fs.rmSync(dir, { recursive: true, force: true });
  const tps = /tps = ([\d.]+) \(without/.exec(r.stdout);
  const lat = /latency average = ([\d.]+) ms/.exec(r.stdout);
  if (!tps) throw new Error(`pgbench failed: ${r.stdout}${r.stderr}`);
  return { rps: Number(tps[1]), latency: Number(lat?.[1] ?? NaN) };
}

async function measureLintel(label, env, reference) {
  const server = await startServer({ PORT: '18501', LINTEL_ADMIN_PASSWORD: PASSWORD, ...env });
  try {
    const token = await signIn(server.url, 'admin', PASSWORD);
    const t0 = performance.now();
    const seeded = await fetch(`${server.url}/api/v0/seed/scale`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ users: USERS }),
    });
    if (!seeded.ok) throw new Error(`seed failed: ${await seeded.text()}`);
    const seedS = (performance.now() - t0) / 1000;
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
      const c1 = await load(server.url, token, 1, p);
      const c50 = await load(server.url, token, 50, p);
      const ref = reference ? await reference(c) : null;
      console.log(
        `${label} ${c.key}: c1 ${JSON.stringify(c1)} c50 ${JSON.stringify(c50)} ref ${JSON.stringify(ref)}`,
      );
      cases.push({ ...c, meta: check.meta, c1, c50, ref });
    }
    return { label, seedS, cases };
  } finally {
    await server.stop();
  }
}

async function measureBare() {
  const child = spawn(process.execPath, [path.join(root, 'bench/api-list/bare-server.mjs')], {
    env: { ...process.env, PORT: '18502' },
    stdio: 'inherit',
  });
  try {
    await waitFor('http://127.0.0.1:18502/api/v0/server-info');
    await load('http://127.0.0.1:18502', null, 10);
    return {
      c1: await load('http://127.0.0.1:18502', null, 1),
      c50: await load('http://127.0.0.1:18502', null, 50),
    };
  } finally {
    child.kill('SIGTERM');
  }
}

const loadBefore = os.loadavg();
const bare = await measureBare();
console.log(`bare Fastify: c1 ${bare.c1.rps.toFixed(0)} req/s, c50 ${bare.c50.rps.toFixed(0)} req/s`);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-bench-'));
const pglite = await measureLintel('PGlite', { LINTEL_DATA_DIR: dataDir }, null);
fs.rmSync(dataDir, { recursive: true, force: true });

const dbName = `lintel_bench_${Date.now()}`;
const admin = new pg.Client({ connectionString: PG });
await admin.connect();
await admin.query(`create database ${dbName}`);
let postgres;
try {
  const url = new URL(PG);
  url.pathname = `/${dbName}`;
  postgres = await measureLintel('PostgreSQL', { DATABASE_URL: url.toString() }, async (c) => {
    const db = new pg.Client({ connectionString: url.toString() });
    await db.connect();
    const project = (await db.query('select min(project_id) as id from users')).rows[0].id;
    await db.end();
    return pgbench(url.toString(), pageSql(c, project), 50);
  });
} finally {
  await admin.query(`drop database if exists ${dbName} with (force)`);
  await admin.end();
}
const loadAfter = os.loadavg();

// the PostgreSQL reference of a case serves both storages: PGlite runs the same statement in process
const refOf = (key) => postgres.cases.find((c) => c.key === key)?.ref ?? null;
const fmtTotal = (m) =>
  m ? `${m.total.toLocaleString('en')}${m.total_is_estimate ? ' (estimate)' : ''}` : 'no 200 within 60 s';
const rows = [];
for (const r of [pglite, postgres])
  for (const c of r.cases)
    for (const n of ['c1', 'c50']) {
      const m = c[n];
      const ref = refOf(c.key);
      const ratio = ref ? (m.rps / ref.rps).toFixed(2) : 'no pgbench';
      rows.push(
        `| ${r.label} | ${c.label} | ${fmtTotal(c.meta)} | ${n === 'c1' ? 1 : 50} | ${m.rps.toFixed(1)} | ${m.p50} | ${m.p99} | ${m.failed} | ${ref ? ref.rps.toFixed(0) : '—'} | ${ratio} |`,
      );
    }
const md = `## api-list — users list over ${USERS.toLocaleString('en')} users: three filters, sorted by name, against pgbench

${new Date().toISOString().slice(0, 10)} · ${machine()} · ${DURATION} s per run, after a warm-up · load average before ${loadBefore.map((x) => x.toFixed(1)).join(', ')}, after ${loadAfter.map((x) => x.toFixed(1)).join(', ')} (the machine is shared: other work competes for its 2 cores, and a single Node process gets a smaller share of it than pgbench's 50 backends).
Request: \`GET ${decodeURIComponent(query)}\` and the same with the other two filters (first page of 20, with the total).
Reference: the page statement alone (\`select t.id … order by <natural name key> limit 21\`), run by \`pgbench -c 50 -j 2\` on the PostgreSQL database of the run, just after the server's own measurement of the case. Targets (issue 14): PostgreSQL at 50 connections ≥ 0.5 of the reference for the contains filter with p99 < 100 ms; the other two ≥ 0.3 of their own.
Ceiling: a bare Fastify route answering a fixed 20-row page of the same shape: ${bare.c1.rps.toFixed(0)} req/s at 1 connection, ${bare.c50.rps.toFixed(0)} at 50.

| storage | filter | total in meta | connections | req/s | p50 ms | p99 ms | failed | reference req/s | ratio to reference |
|---|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}

Seeding ${USERS.toLocaleString('en')} users: PGlite ${pglite.seedS.toFixed(1)} s, PostgreSQL ${postgres.seedS.toFixed(1)} s.`;
writeResults('api-list', md);
console.log(md);
