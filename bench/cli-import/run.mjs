// bench/cli-import: `lintel users import` of a 100,000-row CSV (no passwords) into a fresh PostgreSQL
// database through the built CLI and server, against PostgreSQL's own COPY of the same file into a scratch
// table, in one run. Measures wall time, rows/s, the CLI's peak memory (/usr/bin/time -v, else the
// wrapper's rusage of the child) and the server's memory (VmRSS sampled, VmHWM at the end).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { machine, root, signIn, waitFor, writeResults } from '../lib.mjs';

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const BATCH = process.env.BENCH_BATCH ?? '500';
const PG = process.env.BENCH_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const PASSWORD = 'Bench-password-1';
const PORT = '18521';
const cliBin = path.join(root, 'apps/cli/bin/lintel.js');
const haveTime = fs.existsSync('/usr/bin/time');
// extra Node flags for profiling, e.g. BENCH_SERVER_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof'
const serverNodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
const cliNodeArgs = (process.env.BENCH_CLI_NODE_ARGS ?? '').split(' ').filter(Boolean);
const havePsql = spawnSync('psql', ['--version']).status === 0;

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-bench-import-'));
const csvFile = path.join(work, 'users.csv');
const configDir = path.join(work, 'config');

/** /proc/<pid>/status fields in kB (Linux); null elsewhere. */
function procKb(pid, field) {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}
const mib = (kb) => (kb === null || kb === undefined ? 'n/a' : (kb / 1024).toFixed(0));

function generateCsv(groupId) {
  // one write per 10,000 rows: the generator itself stays small too
  const fd = fs.openSync(csvFile, 'w');
  fs.writeSync(fd, 'login,name,email,description,role,domains,phone\n');
  let chunk = '';
  for (let i = 1; i <= ROWS; i++) {
    const n = String(i).padStart(7, '0');
    // roles and groups by name, by id and by logical address, as people write them
    const domains = i % 3 === 0 ? String(groupId) : i % 3 === 1 ? 'Bench import' : '@bench-import';
    const description = i % 10 === 0 ? `"Imported, batch ${Math.ceil(i / 1000)}"` : '';
    chunk += `imp-${n},Person ${n},imp-${n}@bench.example,${description},Private client,${domains},+49${String(100000000 + i)}\n`;
    if (i % 10_000 === 0 || i === ROWS) {
      fs.writeSync(fd, chunk);
      chunk = '';
    }
  }
  fs.closeSync(fd);
  return fs.statSync(csvFile).size;
}

function startServer(env) {
  const child = spawn(process.execPath, [...serverNodeArgs, path.join(root, 'apps/server/dist/main.js')], {
    env: { ...process.env, LOG_LEVEL: 'warn', PORT, LINTEL_ADMIN_PASSWORD: PASSWORD, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return { child, url: `http://127.0.0.1:${PORT}` };
}

function runCli(args, input) {
  return spawnSync(process.execPath, [cliBin, ...args], {
    env: { ...process.env, CI: 'true', LINTEL_CONFIG_DIR: configDir },
    input,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
}

/** Runs the CLI to the end under /usr/bin/time: wall time and peak RSS. */
function timed(args) {
  const [cmd, full] = haveTime
    ? ['/usr/bin/time', ['-v', process.execPath, ...args]]
    : [process.execPath, args];
  const t0 = performance.now();
  const r = spawnSync(cmd, full, {
    env: { ...process.env, CI: 'true', LINTEL_CONFIG_DIR: configDir },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr);
  return {
    status: r.status,
    stderr: r.stderr,
    ms: performance.now() - t0,
    peakKb: rss ? Number(rss[1]) : null,
  };
}

/** Runs the import, timing the upload (until the CLI says it commits) and the whole; the CLI's peak RSS. */
function runImport(serverPid) {
  return new Promise((resolve, reject) => {
    const cliArgs = [
      ...cliNodeArgs,
      cliBin,
      'users',
      'import',
      csvFile,
      '--continue-on-error',
      '--batch',
      BATCH,
    ];
    const [cmd, args] = haveTime
      ? ['/usr/bin/time', ['-v', process.execPath, ...cliArgs]]
      : [process.execPath, cliArgs];
    const t0 = performance.now();
    const child = spawn(cmd, args, {
      env: { ...process.env, CI: 'true', LINTEL_CONFIG_DIR: configDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let uploadMs = null;
    let serverPeakRss = 0;
    const sampler = setInterval(() => {
      serverPeakRss = Math.max(serverPeakRss, procKb(serverPid, 'VmRSS') ?? 0);
    }, 200);
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => {
      stderr += d;
      if (uploadMs === null && /committing/.test(stderr)) uploadMs = performance.now() - t0;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      clearInterval(sampler);
      const totalMs = performance.now() - t0;
      const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr);
      resolve({
        code,
        stdout,
        stderr,
        totalMs,
        uploadMs,
        cliPeakKb: rss ? Number(rss[1]) : null,
        serverPeakRss,
      });
    });
  });
}

const dbName = `lintel_bench_import_${Date.now()}`;
const admin = new pg.Client({ connectionString: PG });
await admin.connect();
await admin.query(`create database ${dbName}`);
const dbUrl = new URL(PG);
dbUrl.pathname = `/${dbName}`;
const server = startServer({ DATABASE_URL: dbUrl.toString(), LINTEL_DATA_DIR: path.join(work, 'data') });
let result;
try {
  await waitFor(`${server.url}/api/v0/server-info`);
  const token = await signIn(server.url, 'admin', PASSWORD);
  const created = await fetch(`${server.url}/api/v0/domains`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ name: 'Bench import', parent_id: null, logic_address: 'bench-import' }),
  });
  if (!created.ok) throw new Error(`group: ${created.status} ${await created.text()}`);
  const groupId = (await created.json()).data.id;
  const bytes = generateCsv(groupId);
  console.log(`${ROWS.toLocaleString('en')} rows, ${(bytes / 2 ** 20).toFixed(1)} MiB in ${csvFile}`);

  const login = runCli(
    ['login', '--server', server.url, '--login', 'admin', '--password-stdin'],
    `${PASSWORD}\n`,
  );
  if (login.status !== 0) throw new Error(`login: ${login.stderr}`);
  const serverRssBefore = procKb(server.child.pid, 'VmRSS');
  const imp = await runImport(server.child.pid);
  const serverHwm = procKb(server.child.pid, 'VmHWM');
  if (imp.code !== 0) throw new Error(`import exited ${imp.code}: ${imp.stdout}\n${imp.stderr}`);
  console.log(imp.stdout.trim());

  const db = new pg.Client({ connectionString: dbUrl.toString() });
  await db.connect();
  const inserted = Number(
    (await db.query(`select count(*) from accounts where login like 'imp-%'`)).rows[0].count,
  );
  const linked = Number(
    (
      await db.query(
        `select count(*) from user_domains ud join users u on u.id = ud.user_id join accounts a on a.id = u.account_id where a.login like 'imp-%'`,
      )
    ).rows[0].count,
  );
  if (inserted !== ROWS || linked !== ROWS)
    throw new Error(`expected ${ROWS} users in their group, found ${inserted} (${linked} linked)`);

  // the way back: export the same users to CSV, page by page
  const exportFile = path.join(work, 'export.csv');
  const exp = timed([cliBin, 'users', 'export', '--where', 'login begins_with imp-', '-o', exportFile]);
  if (exp.status !== 0) throw new Error(`export exited ${exp.status}: ${exp.stderr}`);
  const exportedLines = fs.readFileSync(exportFile, 'utf8').split('\n').filter(Boolean).length - 1;
  if (exportedLines !== ROWS) throw new Error(`export wrote ${exportedLines} rows`);

  // the reference: PostgreSQL's COPY of the same file into a scratch table (no checks, no indexes)
  await db.query(
    'create table bench_copy (login text, name text, email text, description text, role text, domains text, phone text)',
  );
  let copyMs;
  if (havePsql) {
    const t0 = performance.now();
    const r = spawnSync(
      'psql',
      [
        dbUrl.toString(),
        '-v',
        'ON_ERROR_STOP=1',
        '-c',
        `\\copy bench_copy from '${csvFile}' with (format csv, header true)`,
      ],
      { encoding: 'utf8' },
    );
    copyMs = performance.now() - t0;
    if (r.status !== 0) throw new Error(`psql: ${r.stderr}`);
  } else {
    const t0 = performance.now();
    await db.query(`copy bench_copy from '${csvFile}' with (format csv, header true)`);
    copyMs = performance.now() - t0;
  }
  const copied = Number((await db.query('select count(*) from bench_copy')).rows[0].count);
  if (copied !== ROWS) throw new Error(`COPY loaded ${copied} rows`);
  await db.end();
  result = { bytes, imp, exp, copyMs, serverRssBefore, serverHwm };
} finally {
  await new Promise((resolve) => {
    server.child.once('exit', resolve);
    server.child.kill('SIGTERM');
  });
  await admin.query(`drop database if exists ${dbName} with (force)`);
  await admin.end();
  fs.rmSync(work, { recursive: true, force: true });
}

const { bytes, imp, exp, copyMs, serverRssBefore, serverHwm } = result;
const s = (ms) => (ms / 1000).toFixed(1);
const rate = (ms) => Math.round(ROWS / (ms / 1000)).toLocaleString('en');
const commitMs = imp.uploadMs === null ? null : imp.totalMs - imp.uploadMs;
const load = os
  .loadavg()
  .map((l) => l.toFixed(1))
  .join(', ');
const md = `## cli-import — \`lintel users import\` of ${ROWS.toLocaleString('en')} users from CSV, against PostgreSQL COPY

${new Date().toISOString().slice(0, 10)} · ${machine()} · PostgreSQL (fresh database) on the same machine, server and CLI built (\`apps/*/dist\`); load average at the end ${load} (other work shares the machine: figures vary between runs).
File: ${ROWS.toLocaleString('en')} rows, ${(bytes / 2 ** 20).toFixed(1)} MiB, columns login, name, email, description, role (by name), domains (by name, id or @address), phone; no passwords. Batches of ${BATCH} rows, \`--continue-on-error\`, two batches in flight while the next is read.
Reference: \`${havePsql ? 'psql \\copy' : 'COPY'}\` of the same file into a scratch table without indexes or checks, in the same run.

| | wall time s | rows/s | ratio to COPY |
|---|---|---|---|
| lintel users import (total) | ${s(imp.totalMs)} | ${rate(imp.totalMs)} | ${(imp.totalMs / copyMs).toFixed(1)} × |
| · reading, checking and staging the batches | ${imp.uploadMs === null ? 'n/a' : s(imp.uploadMs)} | ${imp.uploadMs === null ? 'n/a' : rate(imp.uploadMs)} | |
| · commit (re-check, set-based insert, vacuum analyze) | ${commitMs === null ? 'n/a' : s(commitMs)} | | |
| PostgreSQL COPY | ${s(copyMs)} | ${rate(copyMs)} | 1 × |
| lintel users export (CSV, pages of 1,000) | ${s(exp.ms)} | ${rate(exp.ms)} | ${(exp.ms / copyMs).toFixed(1)} × |

Memory: the CLI peaked at ${mib(imp.cliPeakKb)} MiB RSS importing and ${mib(exp.peakKb)} MiB exporting (${haveTime ? '/usr/bin/time -v' : 'not measured: no /usr/bin/time'}); the server went from ${mib(serverRssBefore)} MiB RSS before the import to a sampled peak of ${mib(imp.serverPeakRss)} MiB (VmHWM since its start ${mib(serverHwm)} MiB).`;
writeResults('cli-import', md);
console.log(md);
