// bench/access-sync: one rule change reaching BENCH_PANELS simulated panels holding BENCH_IDENTIFIERS
// identifiers each (issue 21: 50 × 10,000) — the time until every panel holds the new set, and the requests
// sent against the minimum the difference needs. PostgreSQL (BENCH_PG, default the machine's).
//
// - The built server in its own process on a fresh database, its embedded broker; panels registered through
//   the API, each an apps/device-sim `SimulatedDevice` in the bench's process (heartbeat every 10 s).
// - BENCH_IDENTIFIERS cards inserted in the table, one rule over them and every panel (`PUT /access-rules`):
//   the initial sync (measured too) fills the panels.
// - The change: a weekday schedule given to the rule (`PATCH /access-rules/{id}`): every item of every panel
//   changes (its time profile), and each panel needs the profile — the minimum is, per panel, the items whose
//   body differs plus the profiles added, counted from the panels' holdings before and after.
// - Figures: wall time from the PATCH to the last panel holding the new set; requests the panels received;
//   the server's CPU (utime + stime of its process) per request.
//
// Run: `BENCH_PANELS=50 BENCH_IDENTIFIERS=10000 node bench/access-sync/run.mjs`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import pg from 'pg';
import { freePort, machine, root, signIn, startServer, writeResults } from '../lib.mjs';

const PANELS = Number(process.env.BENCH_PANELS ?? 50);
const IDENTIFIERS = Number(process.env.BENCH_IDENTIFIERS ?? 10_000);
const PG = process.env.BENCH_PG ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const PASSWORD = 'Bench-access-sync-1';
const n = (x) => Number(x).toLocaleString('en-US');

async function simulator() {
  const outfile = path.join(root, 'apps/device-sim/dist/lib.js');
  await build({
    entryPoints: [path.join(root, 'apps/device-sim/src/index.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'warning',
    plugins: [
      {
        name: 'external-npm',
        setup(b) {
          b.onResolve({ filter: /^[^./]/ }, (args) =>
            args.path.startsWith('@lintel/') || args.path.startsWith('node:')
              ? undefined
              : { path: args.path, external: true },
          );
        },
      },
    ],
  });
  return import(pathToFileURL(outfile).href);
}

/** CPU seconds (user + system) a process used so far, from /proc. */
function cpuOf(pid) {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  // utime and stime, in clock ticks (100 a second on Linux)
  return (Number(f[11]) + Number(f[12])) / 100;
}

async function until(fn, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await fn()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('timed out');
}

/** A panel's holding as text per key, without its own counters (what a difference compares). */
const holding = (d) =>
  new Map([
    ...[...d.identifiers.values()].map((i) => {
      const { passes_used: _p, ...rest } = i;
      return [`i:${i.uid}`, JSON.stringify(rest)];
    }),
    ...[...d.timeProfiles.values()].map((p) => [`p:${p.key}`, JSON.stringify(p)]),
  ]);

const Sim = await simulator();
const admin = new pg.Client({ connectionString: PG });
await admin.connect();
const dbName = `lintel_bench_accsync_${process.pid}`;
await admin.query(`create database ${dbName}`);
const dbUrl = (() => {
  const u = new URL(PG);
  u.pathname = `/${dbName}`;
  return u.toString();
})();
const loadBefore = os.loadavg();
let server;
let db;
const panels = [];
try {
  server = await startServer({
    PORT: String(await freePort()),
    MQTT_PORT: String(await freePort()),
    LINTEL_ADMIN_PASSWORD: PASSWORD,
    DATABASE_URL: dbUrl,
    LINTEL_SIP: 'off',
    LINTEL_ACCESS_SYNC_MS: '200',
    LINTEL_JOBS_LEASE_S: '600',
  });
  db = new pg.Client({ connectionString: dbUrl });
  await db.connect();
  const token = await signIn(server.url, 'admin', PASSWORD);
  const api = async (method, p, body) => {
    const r = await fetch(`${server.url}/api/v0${p}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!r.ok) throw new Error(`${method} ${p}: ${r.status} ${await r.text()}`);
    return r.json();
  };
  const rootGroup = (await api('GET', '/domains/full')).data.find((g) => g.parent_id === null).id;
  const ids = [];
  for (let i = 0; i < PANELS; i++) {
    const serial = `ACCSYNC-${process.pid}-${String(i + 1).padStart(3, '0')}`;
    const { data } = await api('PUT', '/devices', {
      name: `Bench panel ${serial}`,
      type: 'panel',
      serial_number: serial,
      domain_id: rootGroup,
      protocol: 'mqtt',
    });
    const c = await api('GET', `/devices/${data.id}/credentials`);
    const d = new Sim.SimulatedDevice({
      serial,
      management: { protocol: 'mqtt', url: c.mqtt.url, login: c.login, password: c.password },
    });
    await d.start();
    panels.push(d);
    ids.push(data.id);
  }
  const project = (await db.query('select project_id from domains where id = $1', [rootGroup])).rows[0]
    .project_id;
  const cards = (
    await db.query(
      `insert into identifiers (project_id, name, type, value)
       select $1, 'bench ' || g, 'card', (5000000000 + g)::text from generate_series(1, $2) g returning id`,
      [project, IDENTIFIERS],
    )
  ).rows.map((r) => r.id);
  const t0 = performance.now();
  const rule = (await api('PUT', '/access-rules', { name: 'Everyone', devices: ids, identifiers: cards }))
    .data;
  await until(() => panels.every((d) => d.identifiers.size === IDENTIFIERS), 3_600_000);
  const initialS = (performance.now() - t0) / 1000;
  const initialRequests = panels.reduce((s, d) => s + d.requests.length, 0);

  // the change: the rule gets a weekday schedule
  const before = panels.map(holding);
  const sentBefore = panels.map((d) => d.requests.length);
  const schedule = (
    await api('PUT', '/schedules', {
      name: 'Weekdays',
      valid_from: '2026-01-01',
      repeat_days: ['mon', 'tue', 'wed', 'thu', 'fri'],
    })
  ).data;
  const cpu0 = cpuOf(server.pid);
  const t1 = performance.now();
  await api('PATCH', `/access-rules/${rule.id}`, { time_rules: [schedule.id] });
  const key = `schedule-${schedule.id}`;
  await until(
    () =>
      panels.every(
        (d) =>
          d.timeProfiles.has(key) &&
          [...d.identifiers.values()].every(
            (i) => i.time_profiles?.length === 1 && i.time_profiles[0] === key,
          ),
      ),
    3_600_000,
  );
  const changeS = (performance.now() - t1) / 1000;
  // the tasks' last acknowledgements settle (the panels hold the set; the server completes the tasks)
  await until(
    async () =>
      Number(
        (await db.query(`select count(*) as n from device_tasks where state <> 'completed'`)).rows[0].n,
      ) === 0,
    600_000,
  );
  const cpu = cpuOf(server.pid) - cpu0;
  const after = panels.map(holding);
  let minimum = 0;
  for (let p = 0; p < panels.length; p++) {
    for (const [k, v] of after[p]) if (before[p].get(k) !== v) minimum++;
    for (const k of before[p].keys()) if (!after[p].has(k)) minimum++;
  }
  const sent = panels.reduce((s, d, p) => s + d.requests.length - sentBefore[p], 0);
  const tasks = Number(
    (await db.query(`select count(*) as n from device_tasks where kind = 'entities'`)).rows[0].n,
  );
  const loadAfter = os.loadavg();
  const result = { PANELS, IDENTIFIERS, initialS, initialRequests, changeS, sent, minimum, cpu, tasks };
  console.log(JSON.stringify(result, null, 1));
  const md = `## access-sync — one rule change reaching ${n(PANELS)} simulated panels holding ${n(IDENTIFIERS)} identifiers each

${new Date().toISOString().slice(0, 10)} · ${machine()} · load average before ${loadBefore.map((x) => x.toFixed(1)).join(', ')}, after ${loadAfter.map((x) => x.toFixed(1)).join(', ')}.
The built server in its own process on a fresh PostgreSQL database, its embedded broker (aedes); ${n(PANELS)} panels registered through the API, each an apps/device-sim \`SimulatedDevice\` in the bench's process. ${n(IDENTIFIERS)} cards inserted in the table and one rule over them and every panel: the initial sync filled the panels (${n(initialRequests)} requests, ${initialS.toFixed(1)} s). The change: the rule given a weekday schedule (\`PATCH /access-rules/{id}\`), so every item of every panel changes and each panel needs the time profile. Batches of 500 requests per device task, 16 in flight per task.

| figure | value |
|---|---|
| time from the change to every panel holding the new set | **${changeS.toFixed(1)} s** |
| requests the panels received for the change | **${n(sent)}** |
| minimum the difference needs (items whose body differs + profiles added, from the panels' holdings before and after) | ${n(minimum)} |
| device tasks (entities) over the run, initial sync included | ${n(tasks)} |
| server CPU for the change (utime + stime), per request | ${cpu.toFixed(1)} s, ${((cpu / Math.max(1, sent)) * 1e6).toFixed(0)} µs |

Run: \`BENCH_PANELS=${PANELS} BENCH_IDENTIFIERS=${IDENTIFIERS} node bench/access-sync/run.mjs\`.`;
  writeResults('access-sync', md);
  console.log('\nwritten to bench/RESULTS.md');
} finally {
  await Promise.all(panels.map((d) => d.stop().catch(() => undefined)));
  await db?.end().catch(() => undefined);
  await server?.stop();
  await admin.query(`drop database if exists ${dbName} with (force)`).catch(() => undefined);
  await admin.end();
}
process.exit(0);
