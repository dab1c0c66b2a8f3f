// bench/fanout (issue 16): 1,000 websocket clients subscribed to one topic, and the delay from the cause of
// an event to its arrival at every client, on one server instance and on two sharing one PostgreSQL database
// (half the clients on each; the event caused on the first reaches the second through NOTIFY, and with
// REDIS_URL through Redis). The clients are the `ws` package speaking the protocol by hand, in this process.
//
// An event: `PATCH /api/v0/roles/{id}` (the permissions of a role changed) emits RoleChangedEvent on
// `private-app-changes`, which every signed-in console hears. Its delay at a client is the time from just
// before the request to the message's arrival: the request's own work (a transaction, the audit) is in it.
import os from 'node:os';
import pg from 'pg';
import WebSocket from 'ws';
import { machine, signIn, startServer, writeResults } from '../lib.mjs';

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 1000);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 40);
const PG = process.env.BENCH_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const PASSWORD = 'Bench-password-1';
const TOPIC = 'private-app-changes';

const admin = new pg.Client({ connectionString: PG });
await admin.connect();
const dbName = `lintel_bench_fanout_${process.pid}`;
await admin.query(`create database ${dbName}`);
const dbUrl = (() => {
  const u = new URL(PG);
  u.pathname = `/${dbName}`;
  return u.toString();
})();
const loadBefore = os.loadavg();

/** Opens a socket, waits for `connected`, subscribes; `onEvent(id, t)` at each event's arrival. */
function client(baseUrl, token, onEvent) {
  return new Promise((resolve, reject) => {
    const url = new URL('/api/v0/ws', baseUrl.replace(/^http/, 'ws'));
    url.searchParams.set('access_token', token);
    const ws = new WebSocket(url);
    ws.on('error', reject);
    ws.on('message', (data) => {
      const m = JSON.parse(String(data));
      if (m.topic === null && m.data?.type === 'connected')
        ws.send(JSON.stringify({ type: 'subscribe', topic: TOPIC }));
      else if (m.topic === TOPIC && m.data?.type === 'subscribed') resolve(ws);
      else if (m.topic === TOPIC && m.id !== undefined)
        onEvent(m.data.permissions ?? m.data, performance.now());
    });
  });
}

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

async function run(label, instances) {
  const servers = [];
  try {
    for (let i = 0; i < instances; i++)
      servers.push(
        await startServer({
          PORT: String(18531 + i),
          MQTT_PORT: String(18541 + i),
          LINTEL_ADMIN_PASSWORD: PASSWORD,
          DATABASE_URL: dbUrl,
        }),
      );
    const token = await signIn(servers[0].url, 'admin', PASSWORD);
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const role = await (
      await fetch(`${servers[0].url}/api/v0/roles`, {
        method: 'PUT',
        headers: auth,
        body: JSON.stringify({ name: `fanout ${label}`, permissions: ['users.view'], available_roles: [] }),
      })
    ).json();
    const roleId = role.data.id;
    // arrivals per event number: [instance index, time]
    const arrivals = new Map();
    let current = -1;
    let sentAt = 0;
    let waiting = null;
    const sockets = [];
    const t0 = performance.now();
    for (let i = 0; i < CLIENTS; i++) {
      const at = i % instances;
      sockets.push(
        await client(servers[at].url, token, (_data, t) => {
          const list = arrivals.get(current) ?? arrivals.set(current, []).get(current);
          list.push([at, t - sentAt]);
          if (list.length >= CLIENTS && waiting) waiting();
        }),
      );
    }
    const connectS = (performance.now() - t0) / 1000;
    const rssBefore = await Promise.all(servers.map((s) => rss(s.pid)));
    let lost = 0;
    for (let e = 0; e < EVENTS; e++) {
      current = e;
      const done = new Promise((r) => (waiting = r));
      sentAt = performance.now();
      const res = await fetch(`${servers[0].url}/api/v0/roles/${roleId}`, {
        method: 'PATCH',
        headers: auth,
        body: JSON.stringify({ permissions: e % 2 ? ['users.view'] : ['users.view', 'roles.view'] }),
      });
      if (!res.ok) throw new Error(`role update failed: ${res.status} ${await res.text()}`);
      const timeout = new Promise((r) => setTimeout(() => r('timeout'), 10_000));
      if ((await Promise.race([done, timeout])) === 'timeout')
        lost += CLIENTS - (arrivals.get(e)?.length ?? 0);
    }
    const rssAfter = await Promise.all(servers.map((s) => rss(s.pid)));
    for (const s of sockets) s.terminate();
    const all = [...arrivals.values()].flat();
    const by = (inst) =>
      all
        .filter(([i]) => inst === undefined || i === inst)
        .map(([, d]) => d)
        .sort((x, y) => x - y);
    const row = (name, d) =>
      `| ${label} | ${name} | ${d.length.toLocaleString('en')} | ${pct(d, 50).toFixed(1)} | ${pct(d, 99).toFixed(1)} | ${d.at(-1)?.toFixed(1)} |`;
    const rows = [row('every client', by())];
    if (instances > 1) {
      rows.push(row('clients on the instance that caused it', by(0)));
      rows.push(row('clients on the other instance', by(1)));
    }
    const duplicates = Math.max(0, all.length - CLIENTS * EVENTS + lost);
    console.log(rows.join('\n'));
    return { rows, lost, duplicates, connectS, rssBefore, rssAfter };
  } finally {
    for (const s of servers.reverse()) await s.stop();
  }
}

async function rss(pid) {
  const fs = await import('node:fs');
  const m = /VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : NaN;
}

let one, two;
try {
  one = await run('one instance', 1);
  two = await run('two instances (NOTIFY)', 2);
} finally {
  await admin.query(`drop database if exists ${dbName} with (force)`);
  await admin.end();
}
const loadAfter = os.loadavg();

const md = `## fanout — ${CLIENTS.toLocaleString('en')} websocket clients on one topic, one instance and two

${new Date().toISOString().slice(0, 10)} · ${machine()} · load average before ${loadBefore.map((x) => x.toFixed(1)).join(', ')}, after ${loadAfter.map((x) => x.toFixed(1)).join(', ')}.
${CLIENTS.toLocaleString('en')} clients (the \`ws\` package, in the bench's own process, on the same 2 cores as the servers and PostgreSQL), all subscribed to \`${TOPIC}\`; ${EVENTS} events, each a role's permissions changed through \`PATCH /api/v0/roles/{id}\` on the first instance, the next sent once every client had the previous one. Delay: from just before the request to the message's arrival at a client (the request's transaction and audit included). Two instances: half the clients on each, one PostgreSQL database, events between them by NOTIFY.

| setup | clients | deliveries | p50 ms | p99 ms | max ms |
|---|---|---|---|---|---|
${[...one.rows, ...two.rows].join('\n')}

Lost: ${one.lost} (one instance), ${two.lost} (two); delivered twice: ${one.duplicates}, ${two.duplicates}. Connecting and subscribing every client: ${one.connectS.toFixed(1)} s, ${two.connectS.toFixed(1)} s. Server memory (VmRSS) with the clients connected, before and after the events: one instance ${one.rssBefore[0]} → ${one.rssAfter[0]} MiB; two instances ${two.rssBefore.join(' + ')} → ${two.rssAfter.join(' + ')} MiB.`;
writeResults('fanout', md);
console.log('\nwritten to bench/RESULTS.md');
