// bench/sip-routing (issue 22): sipp places calls through Kamailio, routed by Lintel (Kamailio asks
// `sip.route` for each call, answered from memory; its timer process sends the answers and ends in batches to
// `sip.call_events`), against the same calls routed by Kamailio's static rule (its fallback: Lintel's address
// taken away over JSON-RPC), in the same run, alternating (static, Lintel, static, Lintel: BENCH_ROUNDS).
// Figures: call setup p50 / p99 (sipp's rtd: the authenticated INVITE to its 200 OK) and calls per second.
//
// - The built server (apps/server/dist/main.js) on PGlite in a fresh data folder, its Kamailio on free-ish
//   fixed loopback ports; two numbers made through the API: the caller (sipp, digest on each INVITE) and the
//   callee (sipp's built-in uas, registered first from the port it answers on).
// - BENCH_CALLS calls (default 500) at BENCH_RATE calls per second offered (default 1000), at most
//   BENCH_LIMIT at once (default 50), the offered rate above what either sustains: the rate is the one reached;
//   BENCH_ROUNDS rounds (default 2) of the static run then Lintel's, each after a warm-up of 20 calls. Lintel's
//   run ends when every call it placed is in the history (its writes come after the answers): that time and the
//   server's CPU (utime + stime of its process) per call are figures too.
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { machine, root, signIn, startServer, writeResults } from '../lib.mjs';

const CALLS = Number(process.env.BENCH_CALLS ?? 500);
const RATE = Number(process.env.BENCH_RATE ?? 1000);
const LIMIT = Number(process.env.BENCH_LIMIT ?? 50);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const PORT = 18571;
const SIP = 18572;
const WS = 18573;
const RPC = 18574;
const UAS = 18575;
const UAC = 18576;
const PASSWORD = 'Bench-password-1';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-bench-sip-'));
const scenarios = path.join(root, 'tests/sip/scenarios');

const sipp = (args) =>
  new Promise((resolve) => {
    execFile('sipp', args, { cwd: dir, timeout: 600_000, maxBuffer: 1 << 24 }, (err, stdout, stderr) =>
      resolve({ code: err ? (err.code ?? 1) : 0, out: `${stdout}\n${stderr}` }),
    );
  });
const rpc = async (method, params) => {
  const r = await fetch(`http://127.0.0.1:${RPC}/RPC`, {
    method: 'POST',
    body: JSON.stringify({ jsonrpc: '2.0', method, params, id: 1 }),
  });
  return (await r.json()).result;
};
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

/** CPU seconds (user + system) a process used so far, from /proc. */
const cpuOf = (pid) => {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
};

/** One run of `calls` calls; the setup times from sipp's rtt file, the rate from the wall clock. */
async function run(label, calls) {
  const inf = path.join(dir, 'calls.csv');
  fs.writeFileSync(inf, `SEQUENTIAL\n100;[authentication username=100 password=Caller1Pass];200\n`);
  for (const f of fs.readdirSync(dir)) if (f.endsWith('_rtt.csv')) fs.rmSync(path.join(dir, f));
  const started = performance.now();
  const r = await sipp([
    `127.0.0.1:${SIP}`,
    '-sf',
    path.join(root, 'bench/sip-routing/uac.xml'),
    '-inf',
    inf,
    '-i',
    '127.0.0.1',
    '-p',
    String(UAC),
    '-m',
    String(calls),
    '-r',
    String(RATE),
    '-l',
    String(LIMIT),
    '-nostdin',
    '-trace_rtt',
    '-rtt_freq',
    '1',
    '-recv_timeout',
    '10000',
    ...(process.env.BENCH_DEBUG ? ['-trace_err', '-trace_msg'] : []),
  ]);
  const seconds = (performance.now() - started) / 1000;
  const file = fs.readdirSync(dir).find((f) => f.endsWith('_rtt.csv'));
  const rows = file ? fs.readFileSync(path.join(dir, file), 'utf8').trim().split('\n').slice(1) : [];
  const times = rows
    .map((l) => Number(l.split(';')[1]))
    .filter(Number.isFinite)
    .sort((a, b) => a - b);
  const failed = /Failed call[^\n]*?(\d+)\s*$/m.exec(r.out)?.[1];
  if (process.env.BENCH_DEBUG) {
    console.log(r.out.slice(-2500));
    for (const f of fs
      .readdirSync(dir)
      .filter((x) => x.endsWith('_errors.log') || x.endsWith('_messages.log'))) {
      fs.copyFileSync(
        path.join(dir, f),
        path.join(os.tmpdir(), `sip-routing-${label.replace(/\W+/g, '-')}-${f.split('_').pop()}`),
      );
      fs.rmSync(path.join(dir, f));
    }
  }
  return {
    label,
    calls,
    seconds,
    cps: calls / seconds,
    p50: pct(times, 50),
    p99: pct(times, 99),
    ok: r.code === 0,
    failed,
    n: times.length,
  };
}

/** What the figures say (kept with them; revise when the routing changes). */
const READING = `**Still far from the aim on this machine** (load average 10–15 on its 2 cores, shared by five agents): 0.095–0.13
of the static rate, p99 1.2–1.7 s against 0.1 s. Measured (a CPU profile, \`BENCH_CPU_PROF\`; the routes alone in a loop;
\`BENCH_DEBUG=1\`: sipp's message traces and the server's metrics): the server answers \`sip.route\` in 2–4 ms by its own
clock (metrics: 85% under 5 ms, none over 50 ms) and spends 11–12 ms of CPU a call, two thirds of it PGlite running the
call's writes on the server's thread; the \`sip\` principal costs nothing (a secret read once, compared in constant
time). What made most calls fail was Kamailio's: its 2 SIP workers wait for Lintel (http_client is synchronous;
Debian 5.6 has no http_async_client), so while both waited nothing else was handled; its transaction layer then
sent the INVITE again to the phone called after 500 ms, sipp's uas took that for an unexpected request and dropped
the call, and the caller's BYE timed out 10 s later (6–76 of 500 failed a run before; a failed call stretches the run by
its timeout, which is most of the gap in calls/s). Changed: the INVITE's transaction made before asking Lintel
(\`t_newtran\`: 100 Trying at once, retransmissions absorbed), the uas answers a retransmitted INVITE as a phone does
(and a BYE overtaking the ACK), the calls' writes wait while calls keep coming (up to 2 s) and are then written in
short transactions with the event loop between them, and \`sip.call_events\` is answered once queued: 0–11 failed.
8 SIP workers instead of 2 did not help here (22.6 and 25.6 calls/s in one round each): the server, not the workers, is the
bottleneck. What is left is the server's CPU a call (its share of 2 cores under this load) and a TCP connection per
route request (http_client keeps connections only for a named \`httpcon\`, whose URL is fixed when the configuration is
rendered). Next: the calls' writes off the server's thread (PostgreSQL, or PGlite in a worker), fewer rows a call, a
named keep-alive connection (an \`httpcon\` with Lintel's address, and the \`sip\` secret as its basic credentials).`;

let server;
let uas;
try {
  server = await startServer(
    {
      PORT: String(PORT),
      LINTEL_ADMIN_PASSWORD: PASSWORD,
      LINTEL_DATA_DIR: dir,
      LINTEL_SIP_HOST: '127.0.0.1',
      LINTEL_SIP_PORT: String(SIP),
      LINTEL_SIP_WS_PORT: String(WS),
      LINTEL_SIP_WS_PLAIN: '1',
      LINTEL_SIP_RPC_PORT: String(RPC),
      MQTT_PORT: String(PORT + 10),
    },
    undefined,
    // BENCH_CPU_PROF=<folder>: the server's CPU profile (node --cpu-prof), to see where the time goes
    process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [],
  );
  const token = await signIn(server.url, 'admin', PASSWORD);
  const api = async (method, p, body) => {
    const r = await fetch(`${server.url}/api/v0${p}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
    });
    if (!r.ok) throw new Error(`${method} ${p}: ${r.status} ${await r.text()}`);
    return r.json();
  };
  const group = (await api('GET', '/domains/full')).data?.[0]?.id ?? 1;
  for (const [number, password] of [
    ['100', 'Caller1Pass'],
    ['200', 'Callee2Pass'],
  ])
    await api('PUT', '/sip-numbers', { number, name: `Bench ${number}`, domain_id: group, password });
  // the callee registers from the port its uas answers on
  for (let i = 0; ; i++) {
    const inf = path.join(dir, 'callee.csv');
    fs.writeFileSync(inf, 'SEQUENTIAL\n200;[authentication username=200 password=Callee2Pass]\n');
    const reg = await sipp([
      `127.0.0.1:${SIP}`,
      '-sf',
      path.join(scenarios, 'register.xml'),
      '-inf',
      inf,
      '-m',
      '1',
      '-i',
      '127.0.0.1',
      '-p',
      String(UAS),
      '-nostdin',
      '-timeout',
      '20s',
    ]);
    if (reg.code === 0) break;
    if (i > 50) throw new Error(`the callee did not register: ${reg.out.slice(-500)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  uas = spawn(
    'sipp',
    ['-sf', path.join(root, 'bench/sip-routing/uas.xml'), '-i', '127.0.0.1', '-p', String(UAS), '-nostdin'],
    { cwd: dir, stdio: 'ignore' },
  );
  await new Promise((r) => setTimeout(r, 500));
  const route = (await rpc('htable.get', ['lintel', 'route']))?.item?.value;
  // static: Kamailio's own rule, Lintel's address taken away (its fallback)
  const historyCount = async () => (await api('GET', '/call-history?limit=1')).meta.total;
  const rounds = [];
  for (let i = 0; i < ROUNDS; i++) {
    await rpc('htable.sets', ['lintel', 'route', 'http://127.0.0.1:1/none']);
    await run('warm-up', 20);
    const fixed = await run('static Kamailio rule', CALLS);
    await rpc('htable.sets', ['lintel', 'route', route]);
    await run('warm-up', 20);
    const before = await historyCount();
    const cpu0 = cpuOf(server.pid);
    const t0 = performance.now();
    const lintel = await run("Lintel's routing", CALLS);
    // every call of the run in the history: Lintel's writes, after the answers, are done
    // (a call Kamailio routed by its fallback, Lintel not answering in time, is not Lintel's to write: the count
    // may stop short of CALLS; the time is that of the last row seen arriving, the wait ends 2 s after it)
    let n = await historyCount();
    let changedAt = performance.now();
    while (n < before + CALLS && performance.now() - changedAt < 2000) {
      await new Promise((r) => setTimeout(r, 100));
      const m = await historyCount();
      if (m !== n) [n, changedAt] = [m, performance.now()];
    }
    lintel.written = (changedAt - t0) / 1000;
    lintel.historyRows = (await historyCount()) - before;
    lintel.cpuMsPerCall = ((cpuOf(server.pid) - cpu0) * 1000) / (CALLS + 0);
    rounds.push({ fixed, lintel });
    if (process.env.BENCH_DEBUG) {
      const m = await fetch(`${server.url}/api/v0/metrics`, {
        headers: { authorization: `Bearer ${token}` },
      });
      console.log(
        (await m.text())
          .split('\n')
          .filter((l) => l.includes('/sip/'))
          .join('\n'),
      );
    }
  }
  const cell = (x) => (Number.isFinite(x) ? x.toFixed(1) : '–');
  const load = os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(', ');
  const line = (r, i) =>
    `| ${i + 1} | ${r.label} | ${r.calls} | ${r.n} | ${r.ok ? 'yes' : `no (${r.failed ?? '?'} failed)`} | ${cell(r.cps)} | ${cell(r.p50)} | ${cell(r.p99)} | ${r.written === undefined ? '' : `${cell(r.written)} s, ${r.historyRows} rows`} | ${r.cpuMsPerCall === undefined ? '' : cell(r.cpuMsPerCall)} |`;
  const ratio = (f) => Math.min(...rounds.map(f));
  writeResults(
    'sip-routing',
    `## sip-routing — calls through Kamailio routed by Lintel, against Kamailio's static rule

${new Date().toISOString().slice(0, 10)} · ${machine()} · load average after ${load} · server on PGlite, Kamailio 5.6 (2 UDP workers), sipp 3.6 on loopback.
Each call: INVITE challenged, INVITE with digest, 100/180/200, ACK, BYE; setup = the authenticated INVITE to its 200 OK (sipp rtd). ${CALLS} calls offered at ${RATE}/s, at most ${LIMIT} at once, ${ROUNDS} rounds alternating. Lintel's routing: Kamailio asks \`sip.route\` (http_client: synchronous, a TCP connection per query; answered from the route cache; the call's writes wait while calls keep coming, up to 2 s, \`sip/call-writer.ts\`) and queues the answer and end for its timer process, which posts them in batches to \`sip.call_events\` (no SIP worker waits). Static: the same template with Lintel's address taken away (its fallback: ring the number dialled). "Written": from the first call of the run until every call is in the history; CPU: the server process's utime + stime over that time, per call.

| round | routing | calls | measured | all completed | calls/s | setup p50 ms | setup p99 ms | written | server CPU ms/call |
|---|---|---|---|---|---|---|---|---|---|
${rounds.flatMap((r, i) => [line(r.fixed, i), line(r.lintel, i)]).join('\n')}

Worst round: ratio of rates ${ratio((r) => r.lintel.cps / r.fixed.cps).toFixed(3)}; p99 difference ${cell(-ratio((r) => r.fixed.p99 - r.lintel.p99))} ms (aim: ≥ 0.8 of the static rate, p99 within 20 ms).

${READING}`,
  );
  console.log(JSON.stringify(rounds, null, 2));
} finally {
  if (uas) uas.kill('SIGTERM');
  await server?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
