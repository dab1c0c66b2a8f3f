// bench/pglite-load: 200 keep-alive connections looping `GET /api/v0/users` for 20 s against the built
// server on the embedded database (PGlite), the load from a process of its own. Counts the replies that
// took over 10 s and over 2 s, the 503s, p50/p99, and the server's event-loop delay (its /server-info
// does not show it, so the server is started with LINTEL_BENCH_LOOP_LOG=1, which logs the histogram).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { machine, root, signIn, startServer, writeResults } from '../lib.mjs';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 200);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const PASSWORD = 'Bench-password-1';
const PATH = '/api/v0/users';

function runClient(url, token) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'bench/pglite-load/client.mjs')], {
      env: { ...process.env, URL: `${url}${PATH}`, TOKEN: token, CONNECTIONS, SECONDS },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`client ${code}`))));
  });
}

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

function figures({ replies, errors }) {
  const ms = replies.map((r) => r[0]).sort((a, b) => a - b);
  const firsts = replies.filter((r) => r[2]);
  return {
    replies: replies.length,
    errors,
    over10: replies.filter((r) => r[0] > 10_000).length,
    over10first: firsts.filter((r) => r[0] > 10_000).length,
    over2: replies.filter((r) => r[0] > 2_000).length,
    s503: replies.filter((r) => r[1] === 503).length,
    other: replies.filter((r) => r[1] !== 200 && r[1] !== 503).length,
    p50: pct(ms, 50),
    p99: pct(ms, 99),
    max: ms.at(-1) ?? 0,
  };
}

async function measure(label, env, main) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-bench-'));
  const loopFile = path.join(dataDir, '..', `${path.basename(dataDir)}.loop.json`);
  const server = await startServer(
    {
      NODE_OPTIONS: `--import ${path.join(root, 'bench/pglite-load/loop-delay.mjs')}`,
      LOOP_DELAY_FILE: loopFile,
      PORT: '18511',
      LINTEL_ADMIN_PASSWORD: PASSWORD,
      LINTEL_DATA_DIR: dataDir,
      ...env,
    },
    main && path.join(root, main),
  );
  let f;
  try {
    const token = await signIn(server.url, 'admin', PASSWORD);
    process.kill(server.pid, 'SIGUSR2');
    f = figures(await runClient(server.url, token));
  } finally {
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  const loop = JSON.parse(fs.readFileSync(loopFile, 'utf8'));
  fs.rmSync(loopFile);
  console.log(label, JSON.stringify(f), 'loop delay', JSON.stringify(loop));
  return { label, ...f, loop };
}

// [label, environment, build (default apps/server/dist/main.js)]: e.g. an older build beside it, to compare
// in one run (the machine is shared, so runs at different times are not comparable)
const variants = JSON.parse(process.env.BENCH_VARIANTS ?? '[["as built", {}]]');
const rows = [];
for (const [label, env, main] of variants) rows.push(await measure(label, env, main));

const md = `## pglite-load — ${CONNECTIONS} connections looping \`GET ${PATH}\` on PGlite for ${SECONDS} s

${new Date().toISOString().slice(0, 10)} · ${machine()} · the load from a separate process (bench/pglite-load/client.mjs,
one keep-alive connection per loop, a reply timed from the request's start, connect included).

| server | replies | > 10 s | > 2 s | 503 | other non-200 | socket errors | p50 ms | p99 ms | max ms | loop delay p99 / max ms |
|---|---|---|---|---|---|---|---|---|---|---|
${rows.map((r) => `| ${r.label} | ${r.replies} | ${r.over10} | ${r.over2} | ${r.s503} | ${r.other} | ${r.errors} | ${r.p50} | ${r.p99} | ${r.max} | ${r.loop.p99} / ${r.loop.max} |`).join('\n')}`;
writeResults('pglite-load', md);
console.log(md);
