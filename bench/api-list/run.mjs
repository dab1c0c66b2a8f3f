// bench/api-list: the users list with a contains filter and a sort over 100,000 users, on PGlite and on
// PostgreSQL, at concurrency 1 and 50, against a bare Fastify route with a fixed 20-row page (the ceiling
// of this machine), all in one run.
import { spawn } from 'node:child_process';
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
const query = `/api/v0/users?filters=${encodeURIComponent(JSON.stringify([{ field: 'name', rule: 'contains', value: 'ann' }]))}&sort=name&limit=20`;

async function load(url, token, connections) {
  const r = await autocannon({ url: `${url}${query}`, connections, duration: DURATION, timeout: 30, headers: token ? { authorization: `Bearer ${token}` } : {} });
  // failures are figures too: they go into the table rather than stopping the run
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, failed: r.non2xx + r.errors + r.timeouts };
}

async function measureLintel(label, env) {
  const server = await startServer({ PORT: '18501', LINTEL_ADMIN_PASSWORD: PASSWORD, ...env });
  try {
    const token = await signIn(server.url, 'admin', PASSWORD);
    const t0 = performance.now();
    const seeded = await fetch(`${server.url}/api/v0/seed/scale`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ users: USERS }) });
    if (!seeded.ok) throw new Error(`seed failed: ${await seeded.text()}`);
    const seedS = (performance.now() - t0) / 1000;
    const check = await (await fetch(`${server.url}${query}`, { headers: { authorization: `Bearer ${token}` } })).json();
    console.log(`${label}: ${USERS} users seeded in ${seedS.toFixed(1)} s; the filter matches ${check.meta.total}`);
    await load(server.url, token, 4); // warm-up
    const c1 = await load(server.url, token, 1);
    const c50 = await load(server.url, token, 50);
    return { label, seedS, matches: check.meta.total, c1, c50 };
  } finally {
    await server.stop();
  }
}

async function measureBare() {
  const child = spawn(process.execPath, [path.join(root, 'bench/api-list/bare-server.mjs')], { env: { ...process.env, PORT: '18502' }, stdio: 'inherit' });
  try {
    await waitFor('http://127.0.0.1:18502/api/v0/server-info');
    await load('http://127.0.0.1:18502', null, 10);
    return { c1: await load('http://127.0.0.1:18502', null, 1), c50: await load('http://127.0.0.1:18502', null, 50) };
  } finally {
    child.kill('SIGTERM');
  }
}

const bare = await measureBare();
console.log(`bare Fastify: c1 ${bare.c1.rps.toFixed(0)} req/s, c50 ${bare.c50.rps.toFixed(0)} req/s`);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-bench-'));
const pglite = await measureLintel('PGlite', { LINTEL_DATA_DIR: dataDir });
fs.rmSync(dataDir, { recursive: true, force: true });

const dbName = `lintel_bench_${Date.now()}`;
const admin = new pg.Client({ connectionString: PG });
await admin.connect();
await admin.query(`create database ${dbName}`);
let postgres;
try {
  const url = new URL(PG);
  url.pathname = `/${dbName}`;
  postgres = await measureLintel('PostgreSQL', { DATABASE_URL: url.toString() });
} finally {
  await admin.query(`drop database if exists ${dbName} with (force)`);
  await admin.end();
}

const row = (r, c) => {
  const m = r[c];
  const b = bare[c];
  return `| ${r.label} | ${c === 'c1' ? 1 : 50} | ${m.rps.toFixed(1)} | ${m.p50} | ${m.p99} | ${m.failed} | ${b.rps.toFixed(0)} | ${(m.rps / b.rps).toFixed(4)} |`;
};
const md = `## api-list — users list, contains filter and sort, ${USERS.toLocaleString('en')} users

${new Date().toISOString().slice(0, 10)} · ${machine()} · ${DURATION} s per run, after a warm-up.
Request: \`GET ${decodeURIComponent(query)}\` (${pglite.matches.toLocaleString('en')} matching users, first page of 20, with the total).
Ceiling: a bare Fastify route answering a fixed 20-row page of the same shape, measured in the same run.

| storage | connections | req/s | p50 ms | p99 ms | failed | ceiling req/s | ratio to ceiling |
|---|---|---|---|---|---|---|---|
${row(pglite, 'c1')}
${row(pglite, 'c50')}
${row(postgres, 'c1')}
${row(postgres, 'c50')}

Seeding ${USERS.toLocaleString('en')} users: PGlite ${pglite.seedS.toFixed(1)} s, PostgreSQL ${postgres.seedS.toFixed(1)} s.`;
writeResults('api-list', md);
console.log(md);
