// bench/device-events (issue 16): simulated devices pushing their logs over MQTT into PostgreSQL while
// websocket consoles watch. Figures: the events stored per second, sustained over the window; the delay from
// the device to each console (p50 / p99 / max); the server's memory over the run; events lost or stored twice.
//
// - A fresh PostgreSQL database (BENCH_POSTGRES), the built server (apps/server/dist/main.js) in its own
//   process, with MQTT_URL at the machine's Mosquitto (BENCH_BROKER=mosquitto, the default; device pushes
//   taken as a shared subscription) or its embedded broker (BENCH_BROKER=embedded, aedes on MQTT_PORT).
// - BENCH_DEVICES panels registered through the API (`PUT /api/v0/devices`, protocol mqtt, their credentials
//   from `GET /api/v0/devices/{id}/credentials`), each run by apps/device-sim's `SimulatedDevice` (bundled
//   from its source by esbuild into apps/device-sim/dist/lib.js at the start) in this process: heartbeats
//   every 10 s, and `presentCard` BENCH_RATE times a second (a card it holds or an unknown one, at a random
//   phase per device), which logs the event and pushes it (`POST /logs` on `server/request/v0/{serial}`),
//   one push at a time per device (what piles up behind an unanswered push goes in the next, up to 100), kept
//   until the platform's answer on `server/response/v0/{serial}`.
// - BENCH_CONSOLES websocket clients (the `ws` package) signed in as the admin, subscribed to
//   `private-devices`: each `DeviceEventCreatedEvent` is counted by its id, and its delay is its arrival time
//   minus its `at` (the event's time by the device's clock, which is this process's clock).
// - BENCH_WARMUP seconds of load, then BENCH_SECONDS measured; then the load stops, the devices push what
//   they still hold, and the consoles are given time to receive everything before the counts.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import pg from 'pg';
import WebSocket from 'ws';
import { machine, root, signIn, startServer, writeResults } from '../lib.mjs';

const DEVICES = Number(process.env.BENCH_DEVICES ?? 200);
const RATE = Number(process.env.BENCH_RATE ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 300);
const WARMUP = Number(process.env.BENCH_WARMUP ?? Math.min(30, Math.max(5, Math.round(SECONDS / 10))));
const CONSOLES = Number(process.env.BENCH_CONSOLES ?? 5);
const BROKER = process.env.BENCH_BROKER ?? 'mosquitto';
const MOSQUITTO = process.env.BENCH_MQTT_URL ?? 'mqtt://127.0.0.1:1883';
const PG = process.env.BENCH_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const PASSWORD = 'Bench-password-1';
const TOPIC = 'private-devices';
const SAMPLE_MS = 5000;
const PORT = 18561;

if (!['mosquitto', 'embedded'].includes(BROKER)) throw new Error('BENCH_BROKER: mosquitto or embedded');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const ms = (x) => (Number.isFinite(x) ? x.toFixed(0) : '–');
const n = (x) => x.toLocaleString('en');

function rss(pid) {
  try {
    const m = /VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : NaN;
  } catch {
    return NaN;
  }
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

/** Runs `fn` over `items`, `limit` at a time. */
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
const admin = new pg.Client({ connectionString: PG });
await admin.connect();
const dbName = `lintel_bench_devevents_${process.pid}`;
await admin.query(`create database ${dbName}`);
const dbUrl = (() => {
  const u = new URL(PG);
  u.pathname = `/${dbName}`;
  return u.toString();
})();
const loadBefore = os.loadavg();
const loop = monitorEventLoopDelay({ resolution: 10 });

let server;
let db;
const devices = [];
const consoles = [];
const timers = [];
let result;
try {
  server = await startServer({
    PORT: String(PORT),
    LINTEL_ADMIN_PASSWORD: PASSWORD,
    DATABASE_URL: dbUrl,
    ...(BROKER === 'mosquitto' ? { MQTT_URL: MOSQUITTO } : { MQTT_PORT: String(PORT + 1) }),
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

  // the devices: registered, then started (connected to the broker, announced online)
  const t0 = performance.now();
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
  const setupS = (performance.now() - t0) / 1000;
  console.log(`${DEVICES} devices registered and connected in ${setupS.toFixed(1)} s (${BROKER})`);

  // the consoles
  let windowFrom = Infinity;
  let windowTo = Infinity;
  const delays = [];
  for (let i = 0; i < CONSOLES; i++)
    consoles.push(
      await console_(server.url, token, (delay, at) => {
        if (at >= windowFrom && at < windowTo) delays.push(delay);
      }),
    );

  // the load: each device presents a card RATE times a second, at its own phase
  let settled = 0; // presentCard calls settled: the push answered or given up (the event then held)
  const generated = new Set(); // the event ids of the settled ones
  let offered = 0;
  let offeredInWindow = 0;
  const period = 1000 / RATE;
  for (const [i, d] of devices.entries()) {
    const start = setTimeout(() => {
      const tick = () => {
        const now = Date.now();
        offered++;
        if (now >= windowFrom && now < windowTo) offeredInWindow++;
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

  // memory and the bench's own event loop, every 5 s
  const samples = [];
  const sample = () => samples.push({ t: Date.now(), rss: rss(server.pid) });
  sample();
  timers.push(setInterval(sample, SAMPLE_MS));

  await sleep(WARMUP * 1000);
  loop.enable();
  windowFrom = Date.now();
  windowTo = windowFrom + SECONDS * 1000;
  console.log(`warm-up of ${WARMUP} s done; measuring ${SECONDS} s`);
  for (let s = 0; s < SECONDS; s += 30) {
    await sleep(Math.min(30, SECONDS - s) * 1000);
    const pending = devices.reduce((a, d) => a + d.pendingLogs.length, 0);
    console.log(
      `  ${Math.min(s + 30, SECONDS)} s: offered ${n(offered)}, pending on devices ${n(pending)}, server ${rss(server.pid)} MiB`,
    );
  }
  loop.disable();
  for (const t of timers) clearInterval(t);
  const rssAtEnd = rss(server.pid);
  const backlog = devices.reduce((a, d) => a + d.pendingLogs.length, 0);

  // drain: the devices push what they hold, then the consoles receive what was stored
  const drainFrom = Date.now();
  for (const until = Date.now() + 60_000; settled < offered && Date.now() < until;) await sleep(250);
  for (let round = 0; round < 12; round++) {
    await Promise.all(devices.map((d) => d.flushLogs().catch(() => false)));
    if (devices.every((d) => d.pendingLogs.length === 0)) break;
    await sleep(5000);
  }
  const pendingAtEnd = devices.reduce((a, d) => a + d.pendingLogs.length, 0);
  const { rows: totals } = await db.query(
    `select count(*)::int as rows, count(distinct (device_id, event_id))::int as distinct_rows,
       count(*) filter (where received_at >= $1 and received_at < $2)::int as in_window
     from device_events where serial_number like $3`,
    [new Date(windowFrom), new Date(windowTo), `${prefix}%`],
  );
  const stored = totals[0];
  const until = Date.now() + 30_000;
  while (Date.now() < until && consoles.some((c) => c.seen.size < stored.rows && !c.closed)) await sleep(250);
  const drainS = (Date.now() - drainFrom) / 1000;

  // the events generated (settled, or still held by their device), and which of them are stored
  const { rows: ids } = await db.query(`select event_id from device_events where serial_number like $1`, [
    `${prefix}%`,
  ]);
  const storedIds = new Set(ids.map((r) => r.event_id));
  const pendingIds = new Set(devices.flatMap((d) => d.pendingLogs.map((e) => e.event_id)));
  for (const id of pendingIds) generated.add(id);
  const lost = [...generated].filter((id) => !storedIds.has(id) && !pendingIds.has(id)).length;
  const strangers = [...storedIds].filter((id) => !generated.has(id)).length;
  const acknowledged = devices.reduce((a, d) => a + d.logsAcknowledged, 0);

  // stored per 5 s over the window (by the platform's time of receipt)
  const { rows: buckets } = await db.query(
    `select floor(extract(epoch from received_at - $1::timestamptz) / 5)::int as b, count(*)::int as c
     from device_events where received_at >= $1 and received_at < $2 and serial_number like $3 group by 1`,
    [new Date(windowFrom), new Date(windowTo), `${prefix}%`],
  );
  const per5 = Array.from({ length: Math.floor(SECONDS / 5) }, (_, b) => {
    const row = buckets.find((x) => x.b === b);
    return (row?.c ?? 0) / 5;
  }).sort((a, b) => a - b);

  const inWindow = samples.filter((s) => s.t >= windowFrom && s.t <= windowTo + SAMPLE_MS);
  const memory = {
    start: inWindow[0]?.rss ?? NaN,
    max: Math.max(...inWindow.map((s) => s.rss)),
    end: rssAtEnd,
    before: samples[0]?.rss ?? NaN,
    // one sample a minute from the window's start
    minutes: inWindow.filter((_, i) => i % (60_000 / SAMPLE_MS) === 0).map((s) => s.rss),
  };
  delays.sort((a, b) => a - b);
  result = {
    setupS,
    offered,
    offeredRate: offeredInWindow / SECONDS,
    storedRate: stored.in_window / SECONDS,
    per5,
    stored,
    generated: generated.size,
    unresolved: offered - generated.size,
    acknowledged,
    pendingAtEnd,
    backlog,
    lost,
    strangers,
    delays,
    consoles: consoles.map((c) => ({
      unique: c.seen.size,
      twice: [...c.seen.values()].filter((v) => v > 1).length,
      closed: c.closed,
    })),
    memory,
    drainS,
    loopP99: loop.percentile(99) / 1e6,
    loopMax: loop.max / 1e6,
  };
} finally {
  for (const t of timers) clearInterval(t);
  for (const c of consoles) c.ws.terminate();
  await Promise.race([Promise.all(devices.map((d) => d.stop().catch(() => undefined))), sleep(20_000)]);
  await db?.end().catch(() => undefined);
  await server?.stop();
  await admin.query(`drop database if exists ${dbName} with (force)`);
  await admin.end();
}
const loadAfter = os.loadavg();

const r = result;
const d = r.delays;
const missed = r.consoles.map((c) => r.stored.rows - c.unique);
const twice = r.consoles.reduce((a, c) => a + c.twice, 0);
const closed = r.consoles.filter((c) => c.closed).map((c) => c.closed);
console.log(JSON.stringify({ ...r, delays: undefined, per5: undefined }, null, 1));
const md = `## device-events — ${n(DEVICES)} simulated devices pushing their logs over MQTT into PostgreSQL, ${CONSOLES} consoles watching

${new Date().toISOString().slice(0, 10)} · ${machine()} · load average before ${loadBefore.map((x) => x.toFixed(1)).join(', ')}, after ${loadAfter.map((x) => x.toFixed(1)).join(', ')}.
The built server in its own process on a fresh PostgreSQL database, ${BROKER === 'mosquitto' ? `\`MQTT_URL\` at the machine's Mosquitto (${MOSQUITTO}; device pushes taken as a shared subscription)` : 'its embedded broker (aedes)'}. ${n(DEVICES)} panels registered through the API, each an apps/device-sim \`SimulatedDevice\` in the bench's process (heartbeat every 10 s) presenting a card ${RATE} time${RATE === 1 ? '' : 's'} a second at its own phase (half a card it holds, half unknown): each event is logged and pushed (\`POST /logs\` on \`server/request/v0/{serial}\`, one push in flight per device, what waits goes in the next, up to 100), kept until the platform's answer on \`server/response/v0/{serial}\` after the commit. ${CONSOLES} websocket consoles (the \`ws\` package, same process) signed in as the admin, subscribed to \`private-devices\`. ${WARMUP} s of warm-up, then ${SECONDS} s measured; the devices, consoles, PostgreSQL, Mosquitto and the server share the machine's cores.

| figure | value |
|---|---|
| offered | ${r.offeredRate.toFixed(0)} events/s (${n(DEVICES)} × ${RATE}/s) |
| stored (rows received in the window ÷ ${SECONDS} s) | **${r.storedRate.toFixed(0)} events/s** |
| stored per 5 s, slowest / median / fastest | ${r.per5[0]?.toFixed(0)} / ${pct(r.per5, 50)?.toFixed(0)} / ${r.per5.at(-1)?.toFixed(0)} events/s |
| delay device → console, p50 / p99 / max (${n(d.length)} deliveries of the window's events) | **${ms(pct(d, 50))} / ${ms(pct(d, 99))} / ${ms(d.at(-1))} ms** |
| events held by the devices (pushed, not yet answered, or waiting) at the window's end | ${n(r.backlog)} |
| server memory (VmRSS, sampled every 5 s): devices connected, before the load / window start / max / window end | ${r.memory.before} / ${r.memory.start} / ${r.memory.max} / ${r.memory.end} MiB |
| server memory at each minute of the window | ${r.memory.minutes.join(', ')} MiB |
| the bench's own event loop delay over the window, p99 / max | ${ms(r.loopP99)} / ${ms(r.loopMax)} ms |

Delay: the console's receipt of \`DeviceEventCreatedEvent\` minus its \`at\`, the event's time by the device's clock (the moment the simulator logged it and pushed it or queued it behind its unanswered push): the device's queue, the broker, the server's transaction, the outbox and the websocket. Counted after the load stopped and the devices pushed what they held (${r.drainS.toFixed(0)} s): ${n(r.generated)} events generated, ${n(r.acknowledged)} acknowledged to the devices, ${n(r.pendingAtEnd)} still held by a device${r.unresolved ? `, ${n(r.unresolved)} whose push never settled` : ''}; ${n(r.stored.rows)} rows stored (${n(r.stored.distinct_rows)} distinct device and event id). **Lost** (generated, no longer held by its device, not stored): ${n(r.lost)}; **stored twice**: ${n(r.stored.rows - r.stored.distinct_rows)}; stored but never generated: ${n(r.strangers)}. Consoles: events missed ${missed.join(', ')}; received twice ${n(twice)}${closed.length ? `; closed by the server: ${closed.join(', ')}` : ''}. Registering and connecting the devices took ${r.setupS.toFixed(1)} s.
Run: \`BENCH_DEVICES=${DEVICES} BENCH_RATE=${RATE} BENCH_SECONDS=${SECONDS} BENCH_WARMUP=${WARMUP} BENCH_CONSOLES=${CONSOLES} BENCH_BROKER=${BROKER} npm run bench -- device-events\`.`;
writeResults('device-events', md);
console.log('\nwritten to bench/RESULTS.md');
process.exit(0);
