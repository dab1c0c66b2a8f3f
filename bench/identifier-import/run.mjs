// bench/identifier-import (issue 21): `lintel identifiers import` of a 100,000-row CSV with 1% rows that
// duplicate the project's identifiers and 1% bad rows, through the built CLI and server on a fresh PostgreSQL
// database. Each repetition, in this order so every figure shares the machine's load with its references:
//   A. PostgreSQL's COPY of the same file into a scratch table (no checks, no indexes);
//   A'. PostgreSQL's COPY of the good rows into the real `identifiers` table (its indexes, triggers and
//      checks), rolled back: the database's own bulk path into the table the import fills;
//   B. the floor of any correct import: one plain `insert … select` of the good rows, from that table, into
//      the real `identifiers` table (its indexes and triggers), rolled back;
//   C. the import with `--on-duplicate stop`: must report every bad row by line and reason and commit nothing;
//   D. the import with `--on-duplicate skip`: must commit exactly the good rows (then deleted for the next
//      repetition).
// The figures: rows/s of D (the attempt and the continue), its ratio to A and A' (aim ≥ 0.1 of COPY) and to B, the CPU of the
// server process and of the database's backends (from /proc) per row, and the load average.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort, machine, root, startServer, writeResults } from '../lib.mjs';

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const REPS = Number(process.env.BENCH_REPS ?? 2);
const PG = process.env.BENCH_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const PASSWORD = 'Bench-password-1';
const cliBin = path.join(root, 'apps/cli/bin/lintel.js');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-bench-identifiers-'));
const csvFile = path.join(work, 'identifiers.csv');
/** the good rows alone, as COPY into `identifiers` takes them (A') */
const goodFile = path.join(work, 'identifiers-good.csv');
const configDir = path.join(work, 'config');
const TICK = 100; // clock ticks a second (/proc's utime and stime)
const haveTime = fs.existsSync('/usr/bin/time');
// extra Node flags for the server, e.g. BENCH_SERVER_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof'
const serverNodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
// and for the CLI, e.g. BENCH_CLI_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof'
const cliNodeArgs = (process.env.BENCH_CLI_NODE_ARGS ?? '').split(' ').filter(Boolean);

/** utime + stime of a process, in ms (Linux); 0 elsewhere. */
function cpuMs(pid) {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return ((Number(rest[11]) + Number(rest[12])) * 1000) / TICK;
  } catch {
    return 0;
  }
}
/** The CPU of the database's backends, summed over the processes serving it now and those of `seen`. */
async function backendsCpu(admin, dbName, seen) {
  const r = await admin.query('select pid from pg_stat_activity where datname = $1', [dbName]);
  for (const { pid } of r.rows) seen.set(pid, cpuMs(pid));
  return [...seen.values()].reduce((a, b) => a + b, 0);
}
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(', ');

// every 100th row (from line 50) is bad, every 100th (from line 100) duplicates an existing card
const isBad = (i) => i % 100 === 50;
const isDuplicate = (i) => i % 100 === 0;
const existingValue = (i) => String(3_000_000_000 + i);
const freshValue = (i) => String(1_000_000_000 + i);

function generateCsv(project) {
  const fd = fs.openSync(csvFile, 'w');
  const goodFd = fs.openSync(goodFile, 'w');
  fs.writeSync(fd, 'type,value,name,description\n');
  let chunk = '';
  let goodChunk = '';
  for (let i = 1; i <= ROWS; i++) {
    const value = isBad(i) ? `zz${i}` : isDuplicate(i) ? existingValue(i) : freshValue(i);
    const description = i % 10 === 0 ? 'imported' : '';
    chunk += `card,${value},Card ${i},${description}\n`;
    if (!isBad(i) && !isDuplicate(i)) goodChunk += `${project},card,${value},Card ${i},"${description}"\n`;
    if (i % 10_000 === 0 || i === ROWS) {
      fs.writeSync(fd, chunk);
      fs.writeSync(goodFd, goodChunk);
      chunk = goodChunk = '';
    }
  }
  fs.closeSync(fd);
  fs.closeSync(goodFd);
  return fs.statSync(csvFile).size;
}

function cli(args, input) {
  return spawnSync(process.execPath, [cliBin, ...args], {
    env: { ...process.env, CI: 'true', LINTEL_CONFIG_DIR: configDir },
    input,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
}

/** The import as the CLI runs it, timed; the server's and the backends' CPU over it. */
function runImport(action, serverPid, cpuOfBackends) {
  return new Promise((resolve, reject) => {
    const before = cpuOfBackends();
    before.then((dbBefore) => {
      const serverBefore = cpuMs(serverPid);
      const t0 = performance.now();
      const timeFile = path.join(work, `time-${action}.txt`);
      const args = [
        ...cliNodeArgs,
        cliBin,
        'identifiers',
        'import',
        csvFile,
        '--on-duplicate',
        action,
        '--json',
      ];
      // the CLI's own CPU (user and system seconds) by /usr/bin/time where it is
      const [cmd, full] = haveTime
        ? ['/usr/bin/time', ['-f', '%U %S', '-o', timeFile, process.execPath, ...args]]
        : [process.execPath, args];
      const child = spawn(cmd, full, {
        env: { ...process.env, CI: 'true', LINTEL_CONFIG_DIR: configDir },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('error', reject);
      child.on('close', async (code) => {
        const ms = performance.now() - t0;
        const serverCpu = cpuMs(serverPid) - serverBefore;
        const dbCpu = (await cpuOfBackends()) - dbBefore;
        const times = haveTime
          ? fs.readFileSync(timeFile, 'utf8').trim().split('\n').pop().split(/\s+/).map(Number)
          : null;
        const cliCpu = times && times.length >= 2 ? (times[0] + times[1]) * 1000 : null;
        let report = null;
        try {
          report = JSON.parse(stdout);
        } catch {
          reject(
            new Error(
              `import ${action}: no JSON (exit ${code}): ${stdout.slice(0, 500)} ${stderr.slice(0, 500)}`,
            ),
          );
          return;
        }
        resolve({ code, ms, serverCpu, dbCpu, cliCpu, report: report.data ?? report });
      });
    }, reject);
  });
}

const expand = (ranges) => ranges.flatMap(([a, b]) => Array.from({ length: b - a + 1 }, (_, k) => a + k));

async function main() {
  const dbName = `lintel_identifier_import_bench_${Date.now()}`;
  const admin = new pg.Client({ connectionString: PG });
  await admin.connect();
  await admin.query(`create database ${dbName}`);
  const dbUrl = new URL(PG);
  dbUrl.pathname = `/${dbName}`;
  const port = String(await freePort());
  const server = await startServer(
    {
      DATABASE_URL: dbUrl.toString(),
      PORT: port,
      HOST: '127.0.0.1',
      MQTT_PORT: '0',
      LINTEL_SIP: 'off',
      LINTEL_ADMIN_PASSWORD: PASSWORD,
      LINTEL_DATA_DIR: path.join(work, 'data'),
    },
    undefined,
    serverNodeArgs,
  );
  const db = new pg.Client({ connectionString: dbUrl.toString() });
  await db.connect();
  const seen = new Map();
  const cpuOfBackends = () => backendsCpu(admin, dbName, seen);
  const reps = [];
  const loadBefore = load();
  try {
    const login = cli(
      ['login', '--server', server.url, '--login', 'admin', '--password-stdin'],
      `${PASSWORD}\n`,
    );
    if (login.status !== 0) throw new Error(`login: ${login.stderr}`);
    const project = Number((await db.query('select id from projects order by id limit 1')).rows[0].id);
    // the project's cards the file's duplicates name
    const dupLines = [];
    const badLines = [];
    for (let i = 1; i <= ROWS; i++) {
      if (isDuplicate(i)) dupLines.push(i);
      if (isBad(i)) badLines.push(i);
    }
    await db.query(
      `insert into identifiers (project_id, name, type, value)
       select $1, 'Existing ' || v, 'card', v from unnest($2::text[]) v`,
      [project, dupLines.map(existingValue)],
    );
    const good = ROWS - dupLines.length - badLines.length;
    const bytes = generateCsv(project);
    console.log(
      `${ROWS.toLocaleString('en')} rows (${badLines.length} bad, ${dupLines.length} duplicates), ${(bytes / 2 ** 20).toFixed(1)} MiB`,
    );
    const countImported = async () =>
      Number((await db.query(`select count(*) from identifiers where name like 'Card %'`)).rows[0].count);

    for (let rep = 1; rep <= REPS; rep++) {
      // A: COPY of the file into a scratch table
      await db.query('drop table if exists bench_copy');
      await db.query('create table bench_copy (type text, value text, name text, description text)');
      let t0 = performance.now();
      const copied = spawnSync(
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
      const copyMs = performance.now() - t0;
      if (copied.status !== 0) throw new Error(`psql: ${copied.stderr}`);
      // A': COPY of the good rows into `identifiers` itself (its indexes, triggers, checks), rolled back
      t0 = performance.now();
      const intoTable = spawnSync(
        'psql',
        [
          dbUrl.toString(),
          '-v',
          'ON_ERROR_STOP=1',
          '-c',
          'begin',
          '-c',
          `\\copy identifiers (project_id, type, value, name, description) from '${goodFile}' with (format csv)`,
          '-c',
          'rollback',
        ],
        { encoding: 'utf8' },
      );
      const copyTableMs = performance.now() - t0;
      if (intoTable.status !== 0) throw new Error(`psql: ${intoTable.stderr}`);
      if (!intoTable.stdout.includes(`COPY ${good}`))
        throw new Error(`COPY into identifiers: ${intoTable.stdout}`);
      // B: the floor, a plain insert of the good rows into the real table (indexes, triggers), rolled back
      const dbBefore = await cpuOfBackends();
      t0 = performance.now();
      await db.query('begin');
      const floor = await db.query(
        `insert into identifiers (project_id, name, type, value, description)
         select $1, name, type, value, coalesce(description, '') from bench_copy
         where value ~ '^[0-9]+$' and value not in (select value from identifiers where project_id = $1 and type = 'card')`,
        [project],
      );
      await db.query('rollback');
      const floorMs = performance.now() - t0;
      const floorDbCpu = (await cpuOfBackends()) - dbBefore;
      if (floor.rowCount !== good) throw new Error(`the floor inserted ${floor.rowCount} rows, not ${good}`);
      await db.query('drop table bench_copy');

      // C: stop — every bad row reported by line and reason, nothing committed
      const stop = await runImport('stop', server.pid, cpuOfBackends);
      const r = stop.report;
      const reported = new Set(r.errors.map((e) => e.line));
      const rejected = expand(r.rejected_lines);
      const everyBadRow =
        r.invalid === badLines.length &&
        rejected.length === badLines.length &&
        rejected.every((l, k) => l === badLines[k]) &&
        badLines.every((l) => reported.has(l)) &&
        r.errors.every((e) => e.field === 'value' && e.rule === 'number_or_hex');
      const stopCommitted = await countImported();
      if (stop.code !== 1 || r.committed !== false || stopCommitted !== 0 || !everyBadRow)
        throw new Error(
          `stop: exit ${stop.code}, committed ${r.committed}, ${stopCommitted} rows in the table, every bad row ${everyBadRow}`,
        );
      if (r.duplicates !== dupLines.length) throw new Error(`stop: ${r.duplicates} duplicates found`);

      // D: skip — exactly the good rows
      const skip = await runImport('skip', server.pid, cpuOfBackends);
      const inTable = await countImported();
      if (skip.report.created !== good || inTable !== good || skip.report.skipped !== dupLines.length)
        throw new Error(`skip: created ${skip.report.created}, ${inTable} in the table, ${good} good rows`);
      reps.push({ rep, copyMs, copyTableMs, floorMs, floorDbCpu, stop, skip, load: load(), everyBadRow });
      console.log(
        `rep ${rep}: COPY ${(copyMs / 1000).toFixed(1)} s, COPY into identifiers ${(copyTableMs / 1000).toFixed(1)} s, insert floor ${(floorMs / 1000).toFixed(1)} s, import stop ${(stop.ms / 1000).toFixed(1)} s, skip ${(skip.ms / 1000).toFixed(1)} s`,
      );
      await db.query(`delete from identifiers where name like 'Card %'`);
      await db.query('vacuum analyze identifiers');
    }
    return { reps, good, bytes, loadBefore, dup: dupLines.length, bad: badLines.length };
  } finally {
    await db.end().catch(() => undefined);
    await server.stop();
    await admin.query(`drop database if exists ${dbName} with (force)`);
    await admin.end();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

const { reps, good, bytes, loadBefore, dup, bad } = await main();
const s = (ms) => (ms / 1000).toFixed(2);
const rate = (ms) => Math.round(ROWS / (ms / 1000)).toLocaleString('en');
const us = (ms) => ((ms * 1000) / ROWS).toFixed(0);
const md = `## identifier-import — \`lintel identifiers import\` of ${ROWS.toLocaleString('en')} cards (1% duplicates, 1% bad rows), against COPY and a plain insert

${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC · ${machine()} · PostgreSQL (fresh database) on the same machine, the built server and CLI · load average ${loadBefore} at the start.
File: ${ROWS.toLocaleString('en')} rows, ${(bytes / 2 ** 20).toFixed(1)} MiB (type, value, name, description); ${bad.toLocaleString('en')} bad values, ${dup.toLocaleString('en')} cards the project holds already, ${good.toLocaleString('en')} good rows. Each repetition runs, in order: **COPY** (\`psql \\copy\` of the file into a table without indexes or checks); **COPY into identifiers** (\`psql \\copy\` of the ${good.toLocaleString('en')} good rows into \`identifiers\` itself, with its indexes, triggers and checks, rolled back: the database's own bulk path into the table the import fills); **insert floor** (one \`insert … select\` of the good rows from that table into \`identifiers\`, with its indexes and triggers, rolled back: what any correct import must at least do); the import with \`--on-duplicate stop\` (checked: every bad line named with its reason, nothing committed); the import with \`--on-duplicate skip\` (checked: exactly the ${good.toLocaleString('en')} good rows committed). The import's time is the CLI's, start to exit (reading the CSV, the streamed attempt, the continue). CPU per row of the file: the CLI (/usr/bin/time), the server process and the database's backends (utime + stime from /proc).

| rep | COPY s (rows/s) | COPY into identifiers s | insert floor s | import stop s | import skip s (rows/s) | skip vs COPY | skip vs COPY into identifiers | skip vs insert floor | CPU µs/row, skip: CLI / server / backends | insert floor backends µs/row | every bad row reported, nothing on stop, exactly the good on skip | load average after |
|---|---|---|---|---|---|---|---|---|---|---|---|---|
${reps
  .map(
    (r) =>
      `| ${r.rep} | ${s(r.copyMs)} (${rate(r.copyMs)}) | ${s(r.copyTableMs)} | ${s(r.floorMs)} | ${s(r.stop.ms)} | ${s(r.skip.ms)} (${rate(r.skip.ms)}) | **${(r.copyMs / r.skip.ms).toFixed(2)}** | **${(r.copyTableMs / r.skip.ms).toFixed(2)}** | **${(r.floorMs / r.skip.ms).toFixed(2)}** | ${r.skip.cliCpu === null ? 'n/a' : us(r.skip.cliCpu)} / ${us(r.skip.serverCpu)} / ${us(r.skip.dbCpu)} | ${us(r.floorDbCpu)} | ${r.everyBadRow ? 'yes' : 'no'} | ${r.load} |`,
  )
  .join('\n')}

Aim (issue 21): ≥ 0.1 of COPY. Run: \`npm run bench -- identifier-import\` (\`BENCH_ROWS\`, \`BENCH_REPS\`).`;
writeResults('identifier-import', md);
console.log(md);
