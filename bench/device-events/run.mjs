// bench/device-events (issues 16 and 26): simulated devices pushing their logs over MQTT into PostgreSQL
// while websocket consoles watch, at rising rates until the platform no longer keeps up, beside Mosquitto's
// own pass-through of the same messages measured in the same run (before the platform's load and after it).
//
// - A Mosquitto of the run's own on a free port of 127.0.0.1 (BENCH_MQTT_URL: another broker instead), a
//   fresh PostgreSQL database (BENCH_POSTGRES), the built server (apps/server/dist/main.js) in its own process
//   with MQTT_URL at that broker (device pushes taken as a shared subscription).
// - **Reference**: Mosquitto's pass-through of the devices' messages (a push of one event, QoS 1): publishers
//   send as fast as the broker acknowledges, one subscriber counts what arrives. Two generators: MQTT.js in
//   this process (the devices' own library, BENCH_REF_CLIENTS clients) and the C clients (`mosquitto_pub -l`,
//   `mosquitto_sub`). Measured first (A), then again after the platform's steps (B), so both see the
//   machine's load of their time.
// - BENCH_DEVICES panels registered through the API, each an apps/device-sim `SimulatedDevice` (bundled by
//   esbuild into apps/device-sim/dist/lib.js) in this process: `presentCard` at the step's rate, at a random
//   phase per device; each event is logged and pushed (`POST /logs`, one push in flight per device, what
//   waits goes in the next, up to 100) and kept until the platform's answer after the commit.
// - BENCH_CONSOLES websocket consoles (the `ws` package) subscribed to `private-devices`: each
//   `DeviceEventCreatedEvent` counted by id; its delay is its arrival minus its `at` (the device's clock,
//   which is this process's clock).
// - **Saturation search**: steps from BENCH_START_RATE events/s, × BENCH_FACTOR each, BENCH_STEP_WARMUP s then
//   BENCH_STEP_S s measured, then the devices push what they hold; it stops after the first step whose stored
//   rate falls below 95% of the offered one or whose p99 delay passes 1 s (or after BENCH_MAX_STEPS).
// - **CPU**: utime + stime from /proc of the server process, of the database backends of the run's database
//   (their command line names it), of the broker and of this process, over each step's window, per event
//   stored; the load average at each window's end.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import mqtt from 'mqtt';
import pg from 'pg';
import WebSocket from 'ws';
import { backendsOf, cpuOf, freePort, machine, root, signIn, startServer } from '../lib.mjs';

const DEVICES = Number(process.env.BENCH_DEVICES ?? 200);
const CONSOLES = Number(process.env.BENCH_CONSOLES ?? 5);
const START_RATE = Number(process.env.BENCH_START_RATE ?? 400);
const FACTOR = Number(process.env.BENCH_FACTOR ?? 1.5);
const MAX_STEPS = Number(process.env.BENCH_MAX_STEPS ?? 8);
const STEP_S = Number(process.env.BENCH_STEP_S ?? 20);
const STEP_WARMUP = Number(process.env.BENCH_STEP_WARMUP ?? 5);
const REF_S = Number(process.env.BENCH_REF_S ?? 10);
const REF_CLIENTS = Number(process.env.BENCH_REF_CLIENTS ?? 20);
const PG = process.env.BENCH_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const PROFILE = process.env.BENCH_CPU_PROF ?? '';
const PASSWORD = 'Bench-password-1';
const TOPIC = 'private-devices';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const ms = (x) => (Number.isFinite(x) ? x.toFixed(0) : '–');
const n = (x) => Math.round(x).toLocaleString('en');
const load = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(', ');

/** CPU seconds of the run's processes: server, database backends (by pid, so those of a window are compared), broker, bench. */
function cpuSnapshot(pids, db) {
  const backends = new Map(backendsOf(db).map((p) => [p, cpuOf(p)]));
  return {
    server: cpuOf(pids.server),
    broker: pids.broker ? cpuOf(pids.broker) : NaN,
    bench: cpuOf(process.pid),
    backends,
  };
}
function cpuSince(a, b) {
  let db = 0;
  for (const [pid, t] of b.backends) if (Number.isFinite(t)) db += t - (a.backends.get(pid) ?? 0);
  return { server: b.server - a.server, db, broker: b.broker - a.broker, bench: b.bench - a.bench };
}

/** A Mosquitto of the run's own (anonymous, on loopback); resolves once it accepts connections. */
async function privateMosquitto() {
  const bin = ['/usr/sbin/mosquitto', '/usr/bin/mosquitto'].find((p) => fs.existsSync(p));
  if (!bin) throw new Error('mosquitto is needed (or BENCH_MQTT_URL)');
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-mosquitto-'));
  const conf = path.join(dir, 'mosquitto.conf');
  fs.writeFileSync(
    conf,
    `listener ${port} 127.0.0.1\nallow_anonymous true\nset_tcp_nodelay true\npersistence false\nmax_queued_messages 100000\n`,
  );
  const child = spawn(bin, ['-c', conf], { stdio: 'ignore' });
  const url = `mqtt://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      const c = await mqtt.connectAsync(url, { reconnectPeriod: 0, connectTimeout: 1000 });
      await c.endAsync();
      break;
    } catch (err) {
      if (i > 50) throw err;
      await sleep(100);
    }
  }
  return {
    url,
    pid: child.pid,
    stop: () => {
      child.kill('SIGTERM');
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

const sampleMessage = JSON.stringify({
  request_id: '6f1c1d4e-3a7b-4f0e-9b1a-2a9d2f6b7c11',
  method: 'POST',
  uri: '/logs',
  body: {
    events: [
      {
        event_id: 'BENCH-001-123-m3k2l1',
        time: new Date().toISOString(),
        kind: 'identifier_used',
        identifier_type: 'card',
        identifier_number: '1000',
        lock: 1,
        result: 'granted',
      },
    ],
  },
});

/** Mosquitto's pass-through with MQTT.js in this process: messages a second received by one subscriber. */
async function passThroughJs(url, brokerPid) {
  const prefix = `bench-ref/${process.pid}`;
  const sub = await mqtt.connectAsync(url, {
    clientId: `ref-sub-${process.pid}`,
    clean: true,
    reconnectPeriod: 0,
  });
  let received = 0;
  sub.on('message', () => received++);
  await sub.subscribeAsync(`${prefix}/+`, { qos: 1 });
  const pubs = await Promise.all(
    Array.from({ length: REF_CLIENTS }, (_, i) =>
      mqtt.connectAsync(url, { clientId: `ref-pub-${process.pid}-${i}`, reconnectPeriod: 0 }),
    ),
  );
  let stop = false;
  const loops = pubs.map(async (c, i) => {
    while (!stop)
      await Promise.all(
        Array.from({ length: 10 }, () => c.publishAsync(`${prefix}/${i}`, sampleMessage, { qos: 1 })),
      );
  });
  await sleep(2000);
  const r0 = received;
  const c0 = { broker: cpuOf(brokerPid), bench: cpuOf(process.pid) };
  const t0 = performance.now();
  await sleep(REF_S * 1000);
  const got = received - r0;
  const s = (performance.now() - t0) / 1000;
  const c1 = { broker: cpuOf(brokerPid), bench: cpuOf(process.pid) };
  stop = true;
  await Promise.all(loops).catch(() => undefined);
  await Promise.all([...pubs, sub].map((c) => c.endAsync(true).catch(() => undefined)));
  return { rate: got / s, brokerCpu: (c1.broker - c0.broker) / got, benchCpu: (c1.bench - c0.bench) / got };
}

/** Mosquitto's pass-through with the C clients: `mosquitto_pub -l` fed lines, `mosquitto_sub` counting. */
async function passThroughC(url, brokerPid) {
  const u = new URL(url);
  const topic = `bench-ref-c/${process.pid}`;
  const args = ['-h', u.hostname, '-p', u.port, '-q', '1'];
  const sub = spawn('mosquitto_sub', [...args, '-t', `${topic}/#`, '-i', `ref-csub-${process.pid}`], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let received = 0;
  sub.stdout.on('data', (b) => {
    for (let i = 0; i < b.length; i++) if (b[i] === 10) received++;
  });
  await sleep(500);
  const lines = Buffer.from(`${sampleMessage}\n`.repeat(1000));
  const pubs = Array.from({ length: 4 }, (_, i) => {
    const p = spawn(
      'mosquitto_pub',
      [...args, '-t', `${topic}/${i}`, '-l', '-i', `ref-cpub-${process.pid}-${i}`],
      {
        stdio: ['pipe', 'ignore', 'ignore'],
      },
    );
    let stop = false;
    const feed = () => {
      while (!stop && p.stdin.write(lines));
    };
    p.stdin.on('drain', feed);
    p.stdin.on('error', () => undefined);
    feed();
    return { p, end: () => ((stop = true), p.kill('SIGKILL')) };
  });
  await sleep(2000);
  const r0 = received;
  const c0 = cpuOf(brokerPid);
  const t0 = performance.now();
  await sleep(REF_S * 1000);
  const got = received - r0;
  const s = (performance.now() - t0) / 1000;
  const c1 = cpuOf(brokerPid);
  for (const x of pubs) x.end();
  sub.kill('SIGKILL');
  return { rate: got / s, brokerCpu: (c1 - c0) / got };
}

/** apps/device-sim's library (its package exports TypeScript), bundled as the build bundles its CLI. */
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

async function pool(items, limit, fn) {
  const out = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i], i);
      }
    }),
  );
  return out;
}

/** A console: a socket subscribed to private-devices, counting each stored event's arrivals and delays. */
function console_(baseUrl, token, onEvent) {
  return new Promise((resolve, reject) => {
    const url = new URL('/api/v0/ws', baseUrl.replace(/^http/, 'ws'));
    url.searchParams.set('access_token', token);
    const ws = new WebSocket(url);
    const state = { ws, seen: new Map(), closed: null };
    ws.on('error', reject);
    ws.on('close', (code, reason) => (state.closed = `${code} ${String(reason)}`));
    ws.on('message', (data) => {
      const now = Date.now();
      const m = JSON.parse(String(data));
      if (m.topic === null && m.data?.type === 'connected')
        ws.send(JSON.stringify({ type: 'subscribe', topic: TOPIC }));
      else if (m.topic === TOPIC && m.data?.type === 'subscribed') resolve(state);
      else if (m.topic === TOPIC && m.data?.type === 'DeviceEventCreatedEvent') {
        state.seen.set(m.data.eventId, (state.seen.get(m.data.eventId) ?? 0) + 1);
        onEvent(now - Date.parse(m.data.at), Date.parse(m.data.at));
      }
    });
  });
}

const Sim = await simulator();
const broker = process.env.BENCH_MQTT_URL
  ? { url: process.env.BENCH_MQTT_URL, pid: 0, stop() {} }
  : await privateMosquitto();
const brokerPid =
  broker.pid || Number(spawnSync('pidof', ['mosquitto']).stdout?.toString().trim().split(/\s+/)[0] || 0);
const admin = new pg.Client({ connectionString: PG });
await admin.connect();
const dbName = `lintel_bench_devevents_${process.pid}`;
await admin.query(`create database ${dbName}`);
const dbUrl = (() => {
  const u = new URL(PG);
  u.pathname = `/${dbName}`;
  return u.toString();
})();
const loadBefore = load();
const startedAt = new Date();

let server;
let db;
const devices = [];
const consoles = [];
let timers = [];
const run = { refs: [], steps: [] };
try {
  // Reference A, before the platform's load
  console.log('reference A: Mosquitto pass-through');
  run.refs.push({
    when: 'A',
    js: await passThroughJs(broker.url, brokerPid),
    c: await passThroughC(broker.url, brokerPid),
    load: load(),
  });
  console.log(JSON.stringify(run.refs.at(-1)));

  const port = await freePort();
  server = await startServer(
    {
      PORT: String(port),
      LINTEL_ADMIN_PASSWORD: PASSWORD,
      DATABASE_URL: dbUrl,
      MQTT_URL: broker.url,
    },
    // BENCH_SERVER_MAIN: another build of the server (an earlier commit's, for a paired comparison)
    process.env.BENCH_SERVER_MAIN || undefined,
    // BENCH_CPU_PROF=<dir>: the server writes a V8 CPU profile there when it stops
    PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE}`] : [],
  );
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
  const prefix = `BENCH-${process.pid}-`;
  const registered = await pool(
    Array.from({ length: DEVICES }, (_, i) => `${prefix}${String(i + 1).padStart(3, '0')}`),
    8,
    async (serial) => {
      const { data } = await api('PUT', '/devices', {
        name: `Bench panel ${serial}`,
        type: 'panel',
        serial_number: serial,
        domain_id: rootGroup,
        protocol: 'mqtt',
      });
      const c = await api('GET', `/devices/${data.id}/credentials`);
      return { serial, login: c.login, password: c.password, url: c.mqtt.url };
    },
  );
  await pool(registered, 20, async (r) => {
    const d = new Sim.SimulatedDevice({
      serial: r.serial,
      type: 'panel',
      management: { protocol: 'mqtt', url: r.url, login: r.login, password: r.password },
    });
    await d.start();
    d.addIdentifier({ identifier_type: 'card', identifier_number: '1000', lock: 'all' });
    devices.push(d);
  });
  console.log(`${DEVICES} devices registered and connected`);

  let window = { from: Infinity, to: Infinity, delays: [] };
  for (let i = 0; i < CONSOLES; i++)
    consoles.push(
      await console_(server.url, token, (delay, at) => {
        if (at >= window.from && at < window.to) window.delays.push(delay);
      }),
    );

  const generated = new Set();
  let offered = 0;
  let settled = 0;
  const pending = () => devices.reduce((a, d) => a + d.pendingLogs.length, 0);
  const stored = async () =>
    Number((await db.query('select count(*)::int as c from device_events')).rows[0].c);

  for (let step = 0, rate = START_RATE; step < MAX_STEPS; step++, rate = Math.round(rate * FACTOR)) {
    const perDevice = rate / DEVICES;
    const period = 1000 / perDevice;
    let offeredInWindow = 0;
    timers = [];
    window = { from: Infinity, to: Infinity, delays: [] };
    for (const [i, d] of devices.entries()) {
      const start = setTimeout(() => {
        const tick = () => {
          const now = Date.now();
          offered++;
          if (now >= window.from && now < window.to) offeredInWindow++;
          d.presentCard(Math.random() < 0.5 ? '1000' : String(2000 + (i % 100)), 1)
            .then((p) => void generated.add(p.event_id))
            .catch(() => undefined)
            .finally(() => settled++);
        };
        tick();
        timers.push(setInterval(tick, period));
      }, Math.random() * period);
      timers.push(start);
    }
    await sleep(STEP_WARMUP * 1000);
    const from = Date.now();
    window.from = from;
    window.to = from + STEP_S * 1000;
    const c0 = cpuSnapshot({ server: server.pid, broker: brokerPid }, dbName);
    await sleep(STEP_S * 1000);
    const c1 = cpuSnapshot({ server: server.pid, broker: brokerPid }, dbName);
    const loadAt = load();
    for (const t of timers) {
      clearInterval(t);
      clearTimeout(t);
    }
    const backlog = pending();
    // drain: what the devices hold is pushed, the consoles receive what was stored
    for (const until = Date.now() + 60_000; settled < offered && Date.now() < until;) await sleep(250);
    for (let r = 0; r < 12 && pending(); r++) {
      await Promise.all(devices.map((d) => d.flushLogs().catch(() => false)));
      if (pending()) await sleep(2000);
    }
    const total = await stored();
    for (
      const until = Date.now() + 30_000;
      Date.now() < until && consoles.some((c) => c.seen.size < total && !c.closed);
    )
      await sleep(250);
    const { rows } = await db.query(
      `select count(*)::int as c from device_events where received_at >= $1 and received_at < $2`,
      [new Date(window.from), new Date(window.to)],
    );
    const inWindow = rows[0].c;
    const cpu = cpuSince(c0, c1);
    const delays = window.delays.sort((a, b) => a - b);
    const s = {
      rate,
      offered: offeredInWindow / STEP_S,
      stored: inWindow / STEP_S,
      p50: pct(delays, 50),
      p99: pct(delays, 99),
      max: delays.at(-1),
      deliveries: delays.length,
      backlog,
      cpuServerMs: (cpu.server / inWindow) * 1000,
      cpuDbMs: (cpu.db / inWindow) * 1000,
      cpuBrokerMs: (cpu.broker / inWindow) * 1000,
      cpuBenchMs: (cpu.bench / inWindow) * 1000,
      serverCores: cpu.server / STEP_S,
      dbCores: cpu.db / STEP_S,
      load: loadAt,
    };
    run.steps.push(s);
    console.log(JSON.stringify(s));
    if (s.stored < 0.95 * s.offered || s.p99 > 1000) break;
  }

  // Reference B, after the platform's load (the devices connected, idle)
  console.log('reference B: Mosquitto pass-through');
  run.refs.push({
    when: 'B',
    js: await passThroughJs(broker.url, brokerPid),
    c: await passThroughC(broker.url, brokerPid),
    load: load(),
  });
  console.log(JSON.stringify(run.refs.at(-1)));

  // durability over the whole run
  const { rows: ids } = await db.query(`select event_id from device_events where serial_number like $1`, [
    `${prefix}%`,
  ]);
  const storedIds = new Set(ids.map((r) => r.event_id));
  const pendingIds = new Set(devices.flatMap((d) => d.pendingLogs.map((e) => e.event_id)));
  for (const id of pendingIds) generated.add(id);
  const { rows: dup } = await db.query(
    `select count(*)::int as rows, count(distinct (device_id, event_id))::int as distinct_rows from device_events`,
  );
  run.durability = {
    generated: generated.size,
    stored: dup[0].rows,
    twice: dup[0].rows - dup[0].distinct_rows,
    lost: [...generated].filter((id) => !storedIds.has(id) && !pendingIds.has(id)).length,
    held: pendingIds.size,
    strangers: [...storedIds].filter((id) => !generated.has(id)).length,
    consolesMissed: consoles.map((c) => dup[0].rows - c.seen.size),
    consolesTwice: consoles.reduce((a, c) => a + [...c.seen.values()].filter((v) => v > 1).length, 0),
    closed: consoles.filter((c) => c.closed).map((c) => c.closed),
  };
} finally {
  for (const t of timers) {
    clearInterval(t);
    clearTimeout(t);
  }
  for (const c of consoles) c.ws.terminate();
  await Promise.race([Promise.all(devices.map((d) => d.stop().catch(() => undefined))), sleep(20_000)]);
  await db?.end().catch(() => undefined);
  await server?.stop();
  await admin.query(`drop database if exists ${dbName} with (force)`);
  await admin.end();
  broker.stop();
}

// ----- the figures -----
const refJs = run.refs.map((r) => r.js.rate);
const refC = run.refs.map((r) => r.c.rate);
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const kept = run.steps.filter((s) => s.stored >= 0.95 * s.offered && s.p99 <= 1000);
const sustained = kept.at(-1);
const fast = run.steps.filter((s) => s.stored >= 0.95 * s.offered && s.p99 < 250).at(-1);
const ratio = (x, ref) => (x ? (x / ref).toFixed(2) : '–');
const d = run.durability;
const runText = `### Run of ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC

${machine()} · load average before ${loadBefore}, after ${load()}.

Mosquitto's own pass-through of the devices' messages (a push of one event, QoS 1, ${sampleMessage.length} bytes), one subscriber counting; A before the platform's steps, B after:

| reference | MQTT.js (${REF_CLIENTS} publishers in this process) msg/s | broker CPU µs/msg | C clients (4 × \`mosquitto_pub -l\`, \`mosquitto_sub\`) msg/s | broker CPU µs/msg | load average |
|---|---|---|---|---|---|
${run.refs.map((r) => `| ${r.when} | ${n(r.js.rate)} | ${(r.js.brokerCpu * 1e6).toFixed(1)} | ${n(r.c.rate)} | ${(r.c.brokerCpu * 1e6).toFixed(1)} | ${r.load} |`).join('\n')}

The platform, step by step (${DEVICES} devices, ${CONSOLES} consoles; ${STEP_WARMUP} s of warm-up, ${STEP_S} s measured per step):

| offered events/s | stored events/s | delay device → console p50 / p99 / max ms | held by devices at the window's end | CPU ms per event: server / database backends / broker / bench (devices + consoles) | cores used: server / database | load average at the window's end |
|---|---|---|---|---|---|---|
${run.steps.map((s) => `| ${n(s.offered)} | ${n(s.stored)} | ${ms(s.p50)} / ${ms(s.p99)} / ${ms(s.max)} | ${n(s.backlog)} | ${s.cpuServerMs.toFixed(2)} / ${s.cpuDbMs.toFixed(2)} / ${s.cpuBrokerMs.toFixed(2)} / ${s.cpuBenchMs.toFixed(2)} | ${s.serverCores.toFixed(2)} / ${s.dbCores.toFixed(2)} | ${s.load} |`).join('\n')}

**Sustained** (stored ≥ 95% of offered, p99 ≤ 1 s): ${sustained ? `${n(sustained.stored)} events/s` : 'none'}; with p99 < 250 ms: ${fast ? `**${n(fast.stored)} events/s** (p99 ${ms(fast.p99)} ms)` : '**none**'}. Against Mosquitto's pass-through in this run (mean of A and B): MQTT.js ${n(mean(refJs))} msg/s → **${ratio(fast?.stored, mean(refJs))}** (p99 < 250 ms), ${ratio(sustained?.stored, mean(refJs))} (p99 ≤ 1 s); C clients ${n(mean(refC))} msg/s → ${ratio(fast?.stored, mean(refC))}, ${ratio(sustained?.stored, mean(refC))}.
Durability over the run: ${n(d.generated)} events generated, ${n(d.stored)} rows stored, ${n(d.held)} still held by a device; **lost ${n(d.lost)}, stored twice ${n(d.twice)}**, stored but never generated ${n(d.strangers)}; consoles missed ${d.consolesMissed.join(', ')}, received twice ${n(d.consolesTwice)}${d.closed.length ? `; closed: ${d.closed.join(', ')}` : ''}.`;

// this run after the earlier ones
const file = path.join(root, 'bench', 'RESULTS.md');
const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '# Benchmark results\n';
const section = /<!-- device-events:start -->([\s\S]*?)<!-- device-events:end -->/.exec(text)?.[1] ?? '';
// every earlier run is kept, and the notes written between the header and the runs
const parts = section.split(/(?=^### Run of )/m);
const earlier = parts.filter((x) => x.startsWith('### Run of '));
const notes = (/^Run: .*$/m.exec(parts[0] ?? '') ? (parts[0] ?? '').split(/^Run: .*$/m)[1] : '').trim();
const md = `<!-- device-events:start -->
## device-events — simulated devices pushing their logs over MQTT into PostgreSQL, consoles watching: a saturation search beside Mosquitto's own pass-through

The built server in its own process on a fresh PostgreSQL database, \`MQTT_URL\` at a Mosquitto of the run's own on a free port (device pushes taken as a shared subscription). Each device is an apps/device-sim \`SimulatedDevice\` in the bench's process presenting a card at the step's rate (half a card it holds, half unknown): each event logged and pushed (\`POST /logs\` on \`server/request/v0/{serial}\`, one push in flight per device, what waits goes in the next, up to 100), kept until the platform's answer on \`server/response/v0/{serial}\` after the commit. Consoles: websocket clients (the \`ws\` package, same process) signed in as the admin, subscribed to \`private-devices\`. Delay: the console's receipt of \`DeviceEventCreatedEvent\` minus the event's time by the device's clock (the device's queue, the broker, the server's transaction, the outbox, the websocket). The rate rises ×${FACTOR} from ${START_RATE} events/s until stored < 95% of offered or p99 > 1 s. CPU from /proc (utime + stime) over each step's window: the server process, the PostgreSQL backends of the run's database, the broker, the bench's own process. The devices, consoles, PostgreSQL, Mosquitto and the server share the machine's 2 cores with whatever else runs (the load average says how much).
Target (issue 26): sustained ≥ 0.3 of Mosquitto's pass-through with p99 device → console < 250 ms; 0 lost, 0 twice.
Run: \`BENCH_DEVICES=${DEVICES} BENCH_CONSOLES=${CONSOLES} BENCH_START_RATE=${START_RATE} BENCH_FACTOR=${FACTOR} BENCH_STEP_S=${STEP_S} BENCH_STEP_WARMUP=${STEP_WARMUP} BENCH_REF_S=${REF_S} npm run bench -- device-events\`.

${[...(notes ? [notes] : []), ...earlier.map((x) => x.trim()), runText].join('\n\n')}
<!-- device-events:end -->`;
fs.writeFileSync(
  file,
  /<!-- device-events:start -->[\s\S]*?<!-- device-events:end -->/.test(text)
    ? text.replace(/<!-- device-events:start -->[\s\S]*?<!-- device-events:end -->/, md)
    : `${text.trimEnd()}\n\n${md}\n`,
);
console.log(runText);
console.log('\nwritten to bench/RESULTS.md');
process.exit(0);
