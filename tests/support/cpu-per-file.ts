// A vitest setup file (vitest.config.ts, setupFiles): when a test file's hooks are done, the CPU its fork
// used — the process itself and the children it waited for (the CLI, Chromium, Kamailio, backup children)
// — is written to .test-results/cpu/, and scripts/test.mjs prints the files that cost most. CPU time, unlike
// wall time, hardly moves with what else runs on a shared machine. A fork runs one file (vitest's isolate),
// so the counters from the process's start are the file's. PostgreSQL's backends are not children: the
// storage pass's database work is not in these figures.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';

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

let started = 0;
beforeAll(() => {
  started = Date.now();
});

afterAll((suite) => {
  const file = (suite as { filepath?: string }).filepath;
  const cpu = cpuFromProc();
  if (!file || !cpu) return;
  fs.mkdirSync(dir, { recursive: true });
  const name = path.relative(root, file);
  fs.writeFileSync(
    path.join(dir, `${name.replace(/[^\w.-]+/g, '_')}.json`),
    JSON.stringify({
      file: name,
      cpuMs: cpu.self + cpu.children,
      selfMs: cpu.self,
      childrenMs: cpu.children,
      // from the fork's start (its boot and the file's imports) and from the file's first hook
      forkMs: Math.round(process.uptime() * 1000),
      testsMs: Date.now() - started,
    }),
  );
});
