// A vitest setup file (vitest.config.ts, setupFiles): when a test file's hooks are done, the CPU its fork
// used — the process itself and the children it waited for (the CLI, Chromium's browser process, Kamailio,
// backup children) — is written to .test-results/cpu/, and scripts/test.mjs prints the files that cost most.
// CPU time, unlike wall time, hardly moves with what else runs on a shared machine. A fork may run several
// files one after another (vitest's `isolate: false`), so a file's figures are the counters' growth since the
// fork's previous file ended (or since the fork started): its imports, its hooks and its tests. PostgreSQL's
// backends are not children: the storage pass's database work is not in these figures.
//
// Chromium's pages are not counted that way: its renderers are children of its zygote, which nobody of ours
// waits for when the browser closes (a page busy for 3 s added 1.8 s to the fork's children). So the
// renderers and the zygote are read from /proc every half second while the file runs, each process's last
// reading kept: what a renderer spends in its last half second is missed.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { chromiumWasStarted, forgetChromium } from './chromium';

const root = path.resolve(import.meta.dirname, '../..');
const dir = path.join(root, '.test-results', 'cpu');
// clock ticks a second for /proc/<pid>/stat: 100 on Linux
const TICK_MS = 10;

function cpuFromProc(): { self: number; children: number } | null {
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    // the fields after the command's name (which may hold spaces) in parentheses
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime, stime, cutime, cstime are fields 14-17 of the whole line: 12-15 after the name's
    const n = (i: number) => Number(f[i]);
    return { self: (n(11) + n(12)) * TICK_MS, children: (n(13) + n(14)) * TICK_MS };
  } catch {
    return null;
  }
}

/** utime + stime of a process (ms) and whether it is one of Chromium's zygotes or renderers, or null. */
function chromiumChild(pid: string): number | null {
  try {
    const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    if (!/--type=(renderer|zygote)/.test(cmd)) return null;
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * TICK_MS;
  } catch {
    return null;
  }
}

/** Every process under this one (by parent pid), from one read of /proc. */
function descendants(): string[] {
  const parentOf = new Map<string, string>();
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      parentOf.set(pid, stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]!);
    } catch {
      // gone between the listing and the read
    }
  }
  const under = new Set([String(process.pid)]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, parent] of parentOf)
      if (!under.has(pid) && under.has(parent)) {
        under.add(pid);
        grew = true;
      }
  }
  under.delete(String(process.pid));
  return [...under];
}

/** the last CPU reading of each Chromium renderer or zygote seen under this fork (pid → ms) */
const renderers = new Map<string, number>();
function sampleRenderers(): void {
  // a file that started no browser has no renderer to find: no walk of /proc (about 2 % of a browser
  // file's fork in a profile of tests/e2e/tables; every file of the parallel phase paid it for nothing)
  if (!chromiumWasStarted()) return;
  for (const pid of descendants()) {
    const ms = chromiumChild(pid);
    if (ms !== null) renderers.set(pid, Math.max(ms, renderers.get(pid) ?? 0));
  }
}

/** Where the fork's counters stood when its previous file ended (kept on the process: this module may be
 * evaluated again for each file). */
interface Mark {
  self: number;
  children: number;
  at: number;
}
const marks = globalThis as { __lintelCpuMark?: Mark };

let started = 0;
let sampler: NodeJS.Timeout | undefined;
beforeAll(() => {
  started = Date.now();
  renderers.clear();
  // set again when this file launches Chromium (tests/support/chromium.ts)
  forgetChromium();
  // only where /proc is (Linux) and only while a browser may run: a file without Chromium finds none
  if (fs.existsSync('/proc/self/stat')) {
    sampler = setInterval(sampleRenderers, 500);
    sampler.unref();
  }
});

afterAll((suite) => {
  const file = (suite as { filepath?: string }).filepath;
  if (sampler) clearInterval(sampler);
  const cpu = cpuFromProc();
  if (!file || !cpu) return;
  const browserMs = [...renderers.values()].reduce((sum, ms) => sum + ms, 0);
  const since: Mark = marks.__lintelCpuMark ?? {
    self: 0,
    children: 0,
    at: Date.now() - process.uptime() * 1000,
  };
  marks.__lintelCpuMark = { ...cpu, at: Date.now() };
  const self = cpu.self - since.self;
  const children = cpu.children - since.children;
  fs.mkdirSync(dir, { recursive: true });
  const name = path.relative(root, file);
  fs.writeFileSync(
    path.join(dir, `${name.replace(/[^\w.-]+/g, '_')}.json`),
    JSON.stringify({
      file: name,
      cpuMs: self + children + browserMs,
      selfMs: self,
      childrenMs: children + browserMs,
      browserMs,
      // from the fork's start or its previous file's end (the file's imports) and from the file's first hook
      forkMs: Date.now() - since.at,
      testsMs: Date.now() - started,
    }),
  );
});
