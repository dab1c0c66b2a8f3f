// bench/cli-import: `lintel users import` of a 100,000-row CSV (no passwords) into a fresh PostgreSQL
// database through the built CLI and server, against PostgreSQL's own COPY of the same file into a scratch
// table and against the floor of any correct import — one plain `insert … select` of the same rows from that
// table into the real, indexed tables the import writes (accounts, users, user_domains), rolled back — in
// the same run, COPY, floor and import in that order each repetition (A, B, C, A, B, C); then `lintel users export` of the same users (one streamed request) against
// `psql \copy (select … the same rows and columns …) to` a file, in the same run. Measures wall time,
// rows/s, the CLI's peak memory (/usr/bin/time -v, else the wrapper's rusage of the child) and the server's
// memory (VmRSS sampled, VmHWM at the end), import and export, at every size (flat in the rows).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort, machine, root, signIn, waitFor, writeResults } from '../lib.mjs';

// the first size is timed against COPY and exported; every size has its memory measured (flat in the file)
const SIZES = (process.env.BENCH_ROWS ?? '100000,1000000').split(',').map(Number);
let ROWS = SIZES[0];
const BATCH = process.env.BENCH_BATCH ?? '1000';
const PG = process.env.BENCH_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const PASSWORD = 'Bench-password-1';
const cliBin = path.join(root, 'apps/cli/bin/lintel.js');
const haveTime = fs.existsSync('/usr/bin/time');
// extra Node flags for profiling, e.g. BENCH_SERVER_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof'
const serverNodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
const cliNodeArgs = (process.env.BENCH_CLI_NODE_ARGS ?? '').split(' ').filter(Boolean);
const havePsql = spawnSync('psql', ['--version']).status === 0;
// repetitions of the first size (each its own fresh database and server): COPY, floor, import each time
const REPS = Number(process.env.BENCH_REPS ?? 2);
const TICK = 100; // clock ticks a second (/proc's utime and stime)
// BENCH_ONLY=export: the export alone — the users are the floor's insert, committed, not an import's
const EXPORT_ONLY = process.env.BENCH_ONLY === 'export';

/** utime + stime of a process, in ms (Linux); 0 elsewhere. */
function cpuMs(pid) {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return ((Number(rest[11]) + Number(rest[12])) * 1000) / TICK;
  } catch {
    return null;
  }
}

/**
 * The CPU of a database's backends: every backend serving it is sampled (pg_stat_activity, then /proc) until
 * `stop`, so a connection that comes and goes meanwhile (the import's COPY connection) counts up to its last
 * sample. Answers the CPU they spent between `start` and `stop`, in ms.
 */
function backendCpu(admin, dbName, everyMs = 100) {
  const first = new Map();
  const last = new Map();
  let started = false;
  const sample = async () => {
    const r = await admin.query('select pid from pg_stat_activity where datname = $1', [dbName]);
    for (const { pid } of r.rows) {
      const ms = cpuMs(pid);
      if (ms === null) continue;
      // backends there at the start count from then; those that start later, from nothing
      if (!first.has(pid)) first.set(pid, started ? 0 : ms);
      last.set(pid, ms);
    }
  };
  let timer = null;
  let pending = Promise.resolve();
  return {
    async start() {
      await sample();
      started = true;
      timer = setInterval(() => {
        pending = pending.then(sample).catch(() => undefined);
      }, everyMs);
    },
    async stop() {
      clearInterval(timer);
      await pending;
      await sample();
      let total = 0;
      for (const [pid, ms] of last) total += ms - first.get(pid);
      return total;
    },
  };
}

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

function startServer(env, PORT) {
  const child = spawn(process.execPath, [...serverNodeArgs, path.join(root, 'apps/server/dist/main.js')], {
    env: {
      ...process.env,
      LOG_LEVEL: 'warn',
      PORT,
      HOST: '127.0.0.1',
      MQTT_PORT: '0',
      LINTEL_SIP: 'off',
      LINTEL_ADMIN_PASSWORD: PASSWORD,
      ...env,
    },
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
function runImport(serverPid, backends) {
  return new Promise((resolve, reject) => {
    const serverCpu0 = cpuMs(serverPid);
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
    child.on('close', async (code) => {
      clearInterval(sampler);
      const totalMs = performance.now() - t0;
      const serverCpu = cpuMs(serverPid) - serverCpu0;
      const dbCpu = await backends.stop();
      const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr);
      const user = /User time \(seconds\): ([\d.]+)/.exec(stderr);
      const system = /System time \(seconds\): ([\d.]+)/.exec(stderr);
      resolve({
        serverCpu,
        dbCpu,
        cliCpu: user && system ? (Number(user[1]) + Number(system[1])) * 1000 : null,
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

/** The profile an imported user gets (DefaultUserProfile of the server), the file's phone over it. */
const DEFAULT_PROFILE = JSON.stringify({
  phone: '',
  address: '',
  time_zone: '',
  sip_number_id: null,
  identifier_format: 'dec',
  time_format: 'DD-MM-YYYY',
});

/**
 * The floor of any correct import: the file's rows, already parsed by COPY into `bench_copy`, go into the
 * tables the import's commit writes — accounts, users, user_domains (the file names no markers) — with their
 * indexes and triggers, in one plain `insert … select` whose role and groups are resolved by a join (by name,
 * id or @address, as the file gives them), rolled back. Nothing checked, nothing streamed, no report.
 */
const FLOOR = `with a as (
    insert into accounts (login, email)
    select c.login, c.email from bench_copy c order by c.login
    returning id, login
  ), u as (
    insert into users (project_id, account_id, role_id, name, description, profile, created_by)
    select r.project_id, a.id, r.id, c.name, coalesce(c.description, ''),
      $2::jsonb || jsonb_build_object('phone', coalesce(c.phone, '')), $1
    from a join bench_copy c on c.login = a.login
    join roles r on lower(r.name) = lower(c.role) and r.project_id = (select project_id from users where id = $1)
    order by c.login
    returning id, account_id
  ), d as (
    insert into user_domains (user_id, domain_id)
    select u.id, g.id from u join a on a.id = u.account_id join bench_copy c on c.login = a.login
    join domains g on g.project_id = (select project_id from users where id = $1)
      and (c.domains = g.id::text or lower(c.domains) = lower(g.name) or c.domains = '@' || g.logic_address)
    returning user_id
  )
  select (select count(*) from u)::int as users, (select count(*) from d)::int as links`;

async function runOnce() {
  const dbName = `lintel_import_bench_${Date.now()}`;
  const admin = new pg.Client({ connectionString: PG });
  await admin.connect();
  await admin.query(`create database ${dbName}`);
  const dbUrl = new URL(PG);
  dbUrl.pathname = `/${dbName}`;
  const server = startServer(
    { DATABASE_URL: dbUrl.toString(), LINTEL_DATA_DIR: path.join(work, 'data') },
    String(await freePort()),
  );
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
    const db = new pg.Client({ connectionString: dbUrl.toString() });
    // the database is dropped (with force) when a run fails: its connection's end must not hide the failure
    db.on('error', () => undefined);
    await db.connect();
    const adminId = Number(
      (
        await db.query(
          `select u.id from users u join accounts a on a.id = u.account_id where a.login = 'admin'`,
        )
      ).rows[0].id,
    );

    // A: PostgreSQL's COPY of the same file into a scratch table (no checks, no indexes)
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
    await db.query('analyze bench_copy');

    // B: the floor, rolled back; then the tables vacuumed, so that the import finds them as the floor did
    const floorBackends = backendCpu(admin, dbName);
    await floorBackends.start();
    let t0 = performance.now();
    await db.query('begin');
    const floor = (await db.query(FLOOR, [adminId, DEFAULT_PROFILE])).rows[0];
    await db.query(EXPORT_ONLY ? 'commit' : 'rollback');
    const floorMs = performance.now() - t0;
    const floorDbCpu = await floorBackends.stop();
    if (floor.users !== ROWS || floor.links !== ROWS)
      throw new Error(`the floor inserted ${floor.users} users, ${floor.links} links, not ${ROWS}`);
    await db.query('drop table bench_copy');
    await db.query('vacuum analyze accounts, users, user_domains');

    // C: the import
    const serverRssBefore = procKb(server.child.pid, 'VmRSS');
    const importBackends = backendCpu(admin, dbName);
    await importBackends.start();
    const imp = EXPORT_ONLY ? null : await runImport(server.child.pid, importBackends);
    if (EXPORT_ONLY) await importBackends.stop();
    const serverHwm = procKb(server.child.pid, 'VmHWM');
    if (imp && imp.code !== 0) throw new Error(`import exited ${imp.code}: ${imp.stdout}\n${imp.stderr}`);
    if (imp) console.log(imp.stdout.trim());

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
    if (imp)
      console.log(
        `COPY ${(copyMs / 1000).toFixed(2)} s, insert floor ${(floorMs / 1000).toFixed(2)} s, import ${(imp.totalMs / 1000).toFixed(2)} s (${(floorMs / imp.totalMs).toFixed(2)} of the floor)`,
      );

    // the way back: export the same users to CSV, one streamed request, against \copy … to of the same rows
    await db.query('vacuum analyze');
    const exportFile = path.join(work, 'export.csv');
    const exportServerCpu0 = cpuMs(server.child.pid);
    const exportBackends = backendCpu(admin, dbName);
    await exportBackends.start();
    const exp = await timed(
      [cliBin, 'users', 'export', '--where', 'login begins_with imp-', '-o', exportFile],
      server.child.pid,
    );
    exp.serverCpu = cpuMs(server.child.pid) - exportServerCpu0;
    exp.dbCpu = await exportBackends.stop();
    const user = /User time \(seconds\): ([\d.]+)/.exec(exp.stderr);
    const system = /System time \(seconds\): ([\d.]+)/.exec(exp.stderr);
    exp.cliCpu = user && system ? (Number(user[1]) + Number(system[1])) * 1000 : null;
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
    await db.end();
    return {
      bytes,
      imp,
      exp,
      copyMs,
      floorMs,
      floorDbCpu,
      copyToMs,
      serverRssBefore,
      serverHwm,
      load: os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(', '),
    };
  } finally {
    // (a server that failed to start has exited already)
    if (server.child.exitCode === null && server.child.signalCode === null)
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
  for (let rep = 1; rep <= (i === 0 ? REPS : 1); rep++) {
    const run = await runOnce();
    runs.push({ rows: size, rep, ...run });
    console.log(`${size.toLocaleString('en')} rows, rep ${rep} done (load ${run.load})`);
  }
}
fs.rmSync(work, { recursive: true, force: true });
ROWS = SIZES[0];
const first = runs.filter((r) => r.rows === ROWS);
const bytes = first[0].bytes;
const s = (ms) => (ms / 1000).toFixed(1);
const s2 = (ms) => (ms / 1000).toFixed(2);
const us = (ms, rows) => (ms === null ? 'n/a' : ((ms * 1000) / rows).toFixed(0));
const copyName = havePsql ? 'psql \\copy' : 'COPY';
/** the import's cells of a run (none with BENCH_ONLY=export) */
const importCells = (r) =>
  r.imp
    ? `${s(r.imp.totalMs)} (${r.imp.uploadMs === null ? 'n/a' : s(r.imp.uploadMs)} / ${r.imp.uploadMs === null ? 'n/a' : s(r.imp.totalMs - r.imp.uploadMs)}) | ${(r.copyMs / r.imp.totalMs).toFixed(3)} | **${(r.floorMs / r.imp.totalMs).toFixed(2)}** | ${us(r.imp.cliCpu, r.rows)} / ${us(r.imp.serverCpu, r.rows)} / ${us(r.imp.dbCpu, r.rows)}`
    : 'not run | | | ';
const md = `## cli-import — \`lintel users import\` and \`export\`, against PostgreSQL COPY and the plain insert of the same rows

${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC · ${machine()} · PostgreSQL (a fresh database for each run) on the same machine, server and CLI built (\`apps/*/dist\`); load average ${loadBefore} at the start${process.env.BENCH_NOTE ? ` (${process.env.BENCH_NOTE})` : ' (other work shares the machine)'}.
File: ${ROWS.toLocaleString('en')} rows, ${(bytes / 2 ** 20).toFixed(1)} MiB, columns login, name, email, description, role (by name), domains (by name, id or @address), phone; no passwords. The CLI streams the file as one NDJSON request that commits (\`user.import_stream\` with \`commit\`, \`--continue-on-error\`): on PostgreSQL the server checks it ${BATCH} rows at a time, stages each batch (COPY into the staging table, for the report) and inserts its valid rows inside one transaction while the next batch is checked, then folds the trigram indexes' pending lists in and analyzes.
Each run, in this order on its own fresh database and server: **COPY** (\`${copyName}\` of the file into a scratch table without indexes or checks); **insert floor** (one plain \`insert … select\` of those rows into \`accounts\`, \`users\` and \`user_domains\` — what the import's commit writes — with their indexes and triggers, role and groups resolved by a join, rolled back; the tables vacuumed after it); the **import** (the CLI's start to exit). CPU per row: the CLI (/usr/bin/time), the server process and the database's backends (utime + stime from /proc, every backend of the database sampled every 100 ms).
Export: \`lintel users export --where 'login begins_with imp-' -o export.csv\` (one streamed request, the CLI's start included) against \`${copyName} (select …) to\` a file of the same users with the same columns (the query is in the bench), in the same run.

| rows | run | COPY s | insert floor s | import s (streaming+staging / commit) | import vs COPY | **import vs insert floor** | CPU µs/row import: CLI / server / backends | insert floor backends µs/row | export s | ${copyName} to s | **export vs \\copy to** | CPU µs/row export: CLI / server / backends | load average after |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
${runs
  .map(
    (r) =>
      `| ${r.rows.toLocaleString('en')} | ${r.rep} | ${s2(r.copyMs)} | ${s2(r.floorMs)} | ${importCells(r)} | ${us(r.floorDbCpu, r.rows)} | ${s(r.exp.ms)} | ${s(r.copyToMs)} | **${(r.copyToMs / r.exp.ms).toFixed(2)}** | ${us(r.exp.cliCpu, r.rows)} / ${us(r.exp.serverCpu, r.rows)} / ${us(r.exp.dbCpu, r.rows)} | ${r.load} |`,
  )
  .join('\n')}

Targets (issue 26): import ≥ 0.8 of the insert floor; export ≥ 0.4 of \`\\copy … to\` at 1,000,000 rows.

Memory (/usr/bin/time -v for the CLI, the server's VmRSS sampled every 200 ms importing and 100 ms exporting):

| rows | run | file MiB | import: CLI peak RSS MiB | server RSS before MiB | import: server sampled peak MiB | export: CLI peak RSS MiB | export: server sampled peak MiB |
|---|---|---|---|---|---|---|---|
${runs
  .map(
    (r) =>
      `| ${r.rows.toLocaleString('en')} | ${r.rep} | ${(r.bytes / 2 ** 20).toFixed(1)} | ${mib(r.imp?.cliPeakKb)} | ${mib(r.serverRssBefore)} | ${mib(r.imp?.serverPeakRss)} | ${mib(r.exp.peakKb)} | ${mib(r.exp.serverPeak)} |`,
  )
  .join('\n')}

Run: \`npm run bench -- cli-import\` (\`BENCH_ROWS\`=sizes, default 100000,1000000; \`BENCH_REPS\`=runs of the first size, default 2; \`BENCH_ONLY=export\`: no import, the users are the floor's insert committed).`;
writeResults('cli-import', md);
console.log(md);
