// bench/dialer: the web dialer in Chromium against Lintel and a real Kamailio — the time from the caller's
// INVITE to the callee's ringing card, and from Alt+A to the first audio bytes, p50 / p99 over BENCH_CALLS
// calls (default 50); each split into the SIP part (Kamailio, the websockets) and the console's own part.
// The measuring runs in a process of its own (measure.ts, through vite-node, as bench/backup does).
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { machine, root, writeResults } from '../lib.mjs';

const r = spawnSync(
  path.join(root, 'node_modules/.bin/vite-node'),
  [path.join(root, 'bench/dialer/measure.ts')],
  {
    cwd: root,
    env: process.env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 * 1024 * 1024,
  },
);
if (r.status !== 0) process.exit(r.status ?? 1);
const { calls, samples: each, cpuMsPerCall: cpu } = JSON.parse(r.stdout.trim().split('\n').pop());
const span = (from, to) => each.map((c) => c[to] - c[from]);
const samples = {
  ring: span('inviteOut', 'ring'),
  ringSip: span('inviteOut', 'inviteIn'),
  ringConsole: span('inviteIn', 'ring'),
  media: span('accept', 'media'),
  mediaOk: span('accept', 'okOut'),
  mediaFlow: span('okOut', 'media'),
};
const pct = (xs, p) => {
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};
const row = (label, xs, aim) =>
  `| ${label} | ${pct(xs, 50)} | ${pct(xs, 99)} | ${Math.max(...xs)} | ${aim} |`;
const date = new Date().toISOString().slice(0, 10);
const load = os
  .loadavg()
  .map((x) => x.toFixed(1))
  .join(', ');
writeResults(
  'dialer',
  `## dialer — INVITE to the ringing card, Alt+A to media, in Chromium through Kamailio

${date} · ${machine()} · load average ${load}.
${calls} calls, one after the other, between two concierges' pages of one Chromium (fake audio device, WebRTC on loopback, no ICE servers) registered over the SIP websocket of a Kamailio run by Lintel. Every instant is a page's own \`Date.now()\`: the caller's INVITE leaving its websocket, the INVITE reaching the callee's, the ringing card in the callee's DOM (a MutationObserver), the callee's Alt+A, its 200 OK leaving, the first audio bytes in its WebRTC stats (polled every 5 ms). Milliseconds; the p99 of 50 calls is their slowest.

| what | p50 | p99 | max | aim |
|---|---|---|---|---|
${row('**INVITE → ringing card**', samples.ring, 'p99 < 300')}
${row('… of which Kamailio and the websockets (the 407 challenge, the INVITE again with credentials)', samples.ringSip, '')}
${row('… of which the callee’s console (sip.js, reducer, React)', samples.ringConsole, '')}
${row('**Alt+A → first audio bytes**', samples.media, 'p99 < 500')}
${row('… of which the answer (media devices, SDP) until the 200 OK leaves', samples.mediaOk, '')}
${row('… of which ICE, DTLS and the first packets', samples.mediaFlow, '')}

CPU a call (from INVITE to hang-up, both pages; utime + stime from /proc over the ${calls} calls, divided by them): Lintel's server with the bench's driver (one process) ${cpu.lintel.toFixed(1)} ms, Kamailio ${cpu.kamailio.toFixed(1)} ms, Chromium (both pages, its GPU and network processes) ${cpu.chromium.toFixed(1)} ms, other ${cpu.other.toFixed(1)} ms.

Run: \`npm run bench -- dialer\` (\`BENCH_CALLS=50\`).`,
);
console.log(
  JSON.stringify(
    Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, { p50: pct(v, 50), p99: pct(v, 99) }])),
  ),
);
