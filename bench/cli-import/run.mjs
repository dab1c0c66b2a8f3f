// bench/cli-import: `lintel users import` of a 100,000-row CSV (no passwords) into a fresh PostgreSQL
// database through the built CLI and server, against PostgreSQL's own COPY of the same file into a scratch
// table, in one run; then `lintel users export` of the same users (one streamed request) against
// `psql \copy (select … the same rows and columns …) to` a file, in the same run. Measures wall time,
// rows/s, the CLI's peak memory (/usr/bin/time -v, else the wrapper's rusage of the child) and the server's
// memory (VmRSS sampled, VmHWM at the end), import and export, at every size (flat in the rows).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { machine, root, signIn, waitFor, writeResults } from '../lib.mjs';

// the first size is timed against COPY and exported; every size has its memory measured (flat in the file)
const SIZES = (process.env.BENCH_ROWS ?? '100000,1000000').split(',').map(Number);
let ROWS = SIZES[0];
const BATCH = process.env.BENCH_BATCH ?? '1000';
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

/**
 * Runs the CLI to the end under /usr/bin/time: wall time and its peak RSS, and the server's RSS sampled
 * every 100 ms meanwhile.
 */
function timed(args, serverPid) {
  const [cmd, full] = haveTime
    ? ['/usr/bin/time', ['-v', process.execPath, ...cliNodeArgs, ...args]]
    : [process.execPath, [...cliNodeArgs, ...args]];
  return new Promise((resolve, reject) => {
    const serverBefore = procKb(serverPid, 'VmRSS');
    let serverPeak = serverBefore ?? 0;
    const sampler = setInterval(() => {
      serverPeak = Math.max(serverPeak, procKb(serverPid, 'VmRSS') ?? 0);
    }, 100);
    const t0 = performance.now();
    const child = spawn(cmd, full, {
      env: { ...process.env, CI: 'true', LINTEL_CONFIG_DIR: configDir },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (status) => {
      const ms = performance.now() - t0;
      clearInterval(sampler);
      const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr);
      resolve({ status, stderr, ms, peakKb: rss ? Number(rss[1]) : null, serverBefore, serverPeak });
    });
  });
}

/**
 * The reference of the export: the same users with the same columns (the record `user.export` loads:
 * account, role, creator, groups and markers by name), read by PostgreSQL and written by psql.
 */
const EXPORT_REFERENCE =
  `select t.id, a.login, t.name, t.description, a.email, r.id as role_id, r.name as role_name,
  t.avatar_url, t.elevator_access_disabled, t.profile, (a.activated_at is not null) as activated, t.is_invited,
  t.is_group_admin, t.created_at, cu.id as created_by_id, cu.name as created_by_name,
  (select string_agg(d.id || ':' || d.name, ';' order by d.name, d.id) from user_domains ud
    join domains d on d.id = ud.domain_id where ud.user_id = t.id) as domains,
  (select string_agg(m.id || ':' || m.name, ';' order by m.name, m.id) from user_markers um
    join markers m on m.id = um.marker_id where um.user_id = t.id) as markers
  from users t join accounts a on a.id = t.account_id join roles r on r.id = t.role_id
  left join users cu on cu.id = t.created_by
  where a.login like 'imp-%' order by t.id`.replace(/\s+/g, ' ');

/** \copy of the reference into a file, timed (psql, else COPY … TO STDOUT read by the client). */
async function copyTo(dbUrl, file) {
  if (havePsql) {
    const t0 = performance.now();
    const r = spawnSync(
      'psql',
      [
        dbUrl,
        '-v',
        'ON_ERROR_STOP=1',
        '-c',
        `\\copy (${EXPORT_REFERENCE}) to '${file}' with (format csv, header true)`,
      ],
      { encoding: 'utf8' },
    );
    const ms = performance.now() - t0;
    if (r.status !== 0) throw new Error(`psql: ${r.stderr}`);
    return ms;
  }
  const db = new pg.Client({ connectionString: dbUrl });
  await db.connect();
  const t0 = performance.now();
  const rows = (await db.query(EXPORT_REFERENCE)).rows.length;
  const ms = performance.now() - t0;
  await db.end();
  if (rows !== ROWS) throw new Error(`the reference read ${rows} rows`);
  return ms;
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

async function runOnce(first) {
  const dbName = `lintel_bench_import_${Date.now()}`;
  const admin = new pg.Client({ connectionString: PG });
  await admin.connect();
  await admin.query(`create database ${dbName}`);
  const dbUrl = new URL(PG);
  dbUrl.pathname = `/${dbName}`;
  const server = startServer({ DATABASE_URL: dbUrl.toString(), LINTEL_DATA_DIR: path.join(work, 'data') });
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

    // the way back: export the same users to CSV, one streamed request, against \copy … to of the same rows
    await db.query('vacuum analyze');
    const exportFile = path.join(work, 'export.csv');
    const exp = await timed(
      [cliBin, 'users', 'export', '--where', 'login begins_with imp-', '-o', exportFile],
      server.child.pid,
    );
    if (exp.status !== 0) throw new Error(`export exited ${exp.status}: ${exp.stderr}`);
    let exportedLines = 0;
    for await (const chunk of fs.createReadStream(exportFile))
      for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) exportedLines++;
    if (exportedLines - 1 !== ROWS) throw new Error(`export wrote ${exportedLines - 1} rows`);
    fs.rmSync(exportFile, { force: true });
    const copyFile = path.join(work, 'copy.csv');
    const copyToMs = await copyTo(dbUrl.toString(), copyFile);
    fs.rmSync(copyFile, { force: true });
    console.log(
      `export ${(exp.ms / 1000).toFixed(1)} s, \\copy to ${(copyToMs / 1000).toFixed(1)} s (${ROWS.toLocaleString('en')} rows)`,
    );
    if (!first) {
      await db.end();
      return { bytes, imp, exp, copyToMs, serverRssBefore, serverHwm };
    }

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
    return { bytes, imp, exp, copyMs, copyToMs, serverRssBefore, serverHwm };
  } finally {
    await new Promise((resolve) => {
      server.child.once('exit', resolve);
      server.child.kill('SIGTERM');
    });
    await admin.query(`drop database if exists ${dbName} with (force)`);
    await admin.end();
    fs.rmSync(csvFile, { force: true });
  }
}

const loadBefore = os
  .loadavg()
  .map((l) => l.toFixed(1))
  .join(', ');
const runs = [];
for (const [i, size] of SIZES.entries()) {
  ROWS = size;
  runs.push({ rows: size, ...(await runOnce(i === 0)) });
}
fs.rmSync(work, { recursive: true, force: true });
ROWS = SIZES[0];
const result = runs[0];

const { bytes, imp, exp, copyMs, serverHwm } = result;
const s = (ms) => (ms / 1000).toFixed(1);
const rate = (ms, rows = ROWS) => Math.round(rows / (ms / 1000)).toLocaleString('en');
const commitMs = imp.uploadMs === null ? null : imp.totalMs - imp.uploadMs;
const load = os
  .loadavg()
  .map((l) => l.toFixed(1))
  .join(', ');
const copyName = havePsql ? 'psql \\copy' : 'COPY';
const md = `## cli-import — \`lintel users import\` and \`export\` of ${ROWS.toLocaleString('en')} users, against PostgreSQL COPY

${new Date().toISOString().slice(0, 10)} · ${machine()} · PostgreSQL (fresh database) on the same machine, server and CLI built (\`apps/*/dist\`); load average ${loadBefore} at the start, ${load} at the end${process.env.BENCH_NOTE ? ` (${process.env.BENCH_NOTE})` : ' (other work shares the machine: figures vary between runs)'}.
File: ${ROWS.toLocaleString('en')} rows, ${(bytes / 2 ** 20).toFixed(1)} MiB, columns login, name, email, description, role (by name), domains (by name, id or @address), phone; no passwords. The CLI streams the file as one NDJSON request; the server checks and stages it ${BATCH} rows at a time (COPY into the staging table), \`--continue-on-error\`.
Import reference: \`${copyName}\` of the same file into a scratch table without indexes or checks, in the same run.
Export: \`lintel users export --where 'login begins_with imp-' -o export.csv\` — one streamed request (\`user.export\`: a server-side cursor over the ids, the records loaded 5,000 at a time, NDJSON to the CLI, which writes the import's CSV as it reads), the CLI's start included. Export reference: \`${copyName} (select …) to\` a file of the same users with the same columns (account, role, creator, groups and markers by name; the query is in the bench), in the same run; the ratio is export rows/s over the reference's (target ≥ 0.3).

| | wall time s | rows/s | ratio to its reference |
|---|---|---|---|
| lintel users import (total) | ${s(imp.totalMs)} | ${rate(imp.totalMs)} | ${(copyMs / imp.totalMs).toFixed(3)} of COPY |
| · streaming, checking and staging (COPY) the rows | ${imp.uploadMs === null ? 'n/a' : s(imp.uploadMs)} | ${imp.uploadMs === null ? 'n/a' : rate(imp.uploadMs)} | |
| · commit (re-check, set-based insert, vacuum analyze) | ${commitMs === null ? 'n/a' : s(commitMs)} | | |
| ${copyName} of the file into a table | ${s(copyMs)} | ${rate(copyMs)} | 1 |
| lintel users export (CSV, one streamed request) | ${s(exp.ms)} | ${rate(exp.ms)} | ${(result.copyToMs / exp.ms).toFixed(2)} of \\copy to |
| ${copyName} (select … the same rows) to a file | ${s(result.copyToMs)} | ${rate(result.copyToMs)} | 1 |

Memory by size (each size its own fresh database and server; /usr/bin/time -v for the CLI, the server's VmRSS sampled every 200 ms importing and 100 ms exporting):

| rows | file MiB | import s | import rows/s | import: CLI peak RSS MiB | server RSS before MiB | server sampled peak MiB | export s | export rows/s | \\copy to rows/s | export ratio | export: CLI peak RSS MiB | export: server sampled peak MiB |
|---|---|---|---|---|---|---|---|---|---|---|---|---|
${runs
  .map(
    (r) =>
      `| ${r.rows.toLocaleString('en')} | ${(r.bytes / 2 ** 20).toFixed(1)} | ${s(r.imp.totalMs)} | ${rate(r.imp.totalMs, r.rows)} | ${mib(r.imp.cliPeakKb)} | ${mib(r.serverRssBefore)} | ${mib(r.imp.serverPeakRss)} | ${s(r.exp.ms)} | ${rate(r.exp.ms, r.rows)} | ${rate(r.copyToMs, r.rows)} | ${(r.copyToMs / r.exp.ms).toFixed(2)} | ${mib(r.exp.peakKb)} | ${mib(r.exp.serverPeak)} |`,
  )
  .join('\n')}

VmHWM of the first size's server since its start: ${mib(serverHwm)} MiB.`;
writeResults('cli-import', md);
console.log(md);
