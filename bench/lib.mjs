// Shared by the benchmarks: start the built server as its own process, wait for it, sign in, and write
// figures into bench/RESULTS.md with the date and the machine.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export function machine() {
  const cpu = os.cpus()[0]?.model ?? 'unknown cpu';
  return `${os.cpus().length} × ${cpu.trim()}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.type()} ${os.release()}, Node ${process.version}`;
}

export async function waitFor(url, ms = 60_000) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    try {
      const r = await fetch(url);
      if (r.ok) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no answer from ${url}`);
}

/**
 * Starts apps/server/dist/main.js (or another build, `main`) with this environment and Node's own options
 * (`execArgv`, e.g. `--cpu-prof`); resolves when /server-info answers.
 */
export async function startServer(env, main = path.join(root, 'apps/server/dist/main.js'), execArgv = []) {
  const child = spawn(process.execPath, [...execArgv, main], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    // BENCH_SERVER_LOG=<file>: the server's output (its own lines and Kamailio's) kept there
    stdio: [
      'ignore',
      process.env.BENCH_SERVER_LOG ? fs.openSync(process.env.BENCH_SERVER_LOG, 'a') : 'ignore',
      'inherit',
    ],
  });
  const url = `http://127.0.0.1:${env.PORT}`;
  await waitFor(`${url}/api/v0/server-info`);
  return {
    url,
    pid: child.pid,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', resolve);
        child.kill('SIGTERM');
      }),
  };
}

export async function signIn(url, login, password) {
  const r = await fetch(`${url}/api/v0/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ login, password }),
  });
  if (!r.ok) throw new Error(`login failed: ${r.status} ${await r.text()}`);
  return (await r.json()).sessions[0].token;
}

/** Replaces this benchmark's section of bench/RESULTS.md (between its markers), keeping the others. */
export function writeResults(name, markdown) {
  const file = path.join(root, 'bench', 'RESULTS.md');
  const head =
    '# Benchmark results\n\nEach section is written by its benchmark (`npm run bench -- <name>`); ratios are measured in one run on one machine.\n';
  let text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : head;
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  const block = `${start}\n${markdown.trim()}\n${end}`;
  const re = new RegExp(`${start}[\\s\\S]*?${end}`);
  text = re.test(text) ? text.replace(re, block) : `${text.trimEnd()}\n\n${block}\n`;
  fs.writeFileSync(file, text);
}

/** A free TCP port on loopback (other servers run beside the benchmarks'). */
export function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = s.address().port;
      s.close(() => resolve(port));
    });
  });
}

/** clock ticks a second of /proc's utime and stime (Linux's USER_HZ) */
const CLK_TCK = 100;

/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat; NaN when it is gone (or not Linux). */
export function cpuOf(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / CLK_TCK;
  } catch {
    return NaN;
  }
}

/** The PostgreSQL backends serving database `db` now, on this machine (their process title names it). */
export function backendsOf(db) {
  const out = [];
  let dirs = [];
  try {
    dirs = fs.readdirSync('/proc');
  } catch {
    return out;
  }
  for (const d of dirs) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8');
      if (cmd.startsWith('postgres:') && cmd.includes(` ${db} `)) out.push(Number(d));
    } catch {
      /* gone */
    }
  }
  return out;
}

/**
 * CPU of a set of processes over a window: `pids()` is asked every `everyMs` (processes come and go, e.g.
 * pgbench's backends), each one's CPU read then; `stop()` gives the CPU seconds they used since the start
 * (a process already there at the start counts from its CPU then, one born later from 0; one that ended
 * counts up to its last reading, at most `everyMs` before its end).
 */
export function watchCpu(pids, everyMs = 100) {
  const first = new Map();
  const last = new Map();
  for (const p of pids()) {
    const t = cpuOf(p);
    if (Number.isFinite(t)) first.set(p, t);
  }
  const sample = () => {
    for (const p of pids()) {
      const t = cpuOf(p);
      if (!Number.isFinite(t)) continue;
      if (!first.has(p)) first.set(p, 0);
      last.set(p, t);
    }
  };
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      let s = 0;
      for (const [p, t] of last) s += t - first.get(p);
      return s;
    },
  };
}
