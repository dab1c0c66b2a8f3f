import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const root = path.resolve(import.meta.dirname, '../..');
export const bin = path.join(root, 'apps/cli/bin/lintel.js');

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * Builds the CLI once per test run: the test files run in parallel, and a build while another file's
 * children load the bundle could hand them half a file. A lock folder serialises the builds, and a stamp
 * naming the vitest run (the forks' parent process) skips the ones after the first.
 */
export function buildCli(): { status: number | null; stderr: string } {
  const dist = path.join(root, 'apps/cli/dist');
  fs.mkdirSync(dist, { recursive: true });
  const lock = path.join(dist, '.build-lock');
  const stamp = path.join(dist, '.built-for');
  const run = String(process.ppid);
  for (let waited = 0; ; waited += 100) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch {
      // a lock left by a killed run is stale after a minute
      if (waited > 60_000) fs.rmSync(lock, { recursive: true, force: true });
      sleep(100);
    }
  }
  try {
    if (fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === run) return { status: 0, stderr: '' };
    const built = spawnSync(process.execPath, [path.join(root, 'scripts/build.mjs'), 'cli'], {
      cwd: root,
      encoding: 'utf8',
    });
    if (built.status === 0) fs.writeFileSync(stamp, run);
    return { status: built.status, stderr: built.stderr };
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

/** Runs the built CLI as a script would: no TTY, CI=true, its own config folder, no LINTEL_* from outside. */
export function lintel(
  args: string[],
  opts: { configDir: string; input?: string; env?: Record<string, string> },
): Promise<Run> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CI: 'true',
    LINTEL_CONFIG_DIR: opts.configDir,
    ...opts.env,
  };
  for (const key of ['LINTEL_TOKEN', 'LINTEL_SERVER', 'LINTEL_LANG']) if (!opts.env?.[key]) delete env[key];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(opts.input ?? '');
  });
}

const tmpDirs: string[] = [];

/** A config folder of its own (not yet created, as on a new machine). */
export function freshConfigDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-cli-'));
  tmpDirs.push(dir);
  return path.join(dir, 'config');
}

export function removeConfigDirs(): void {
  for (const dir of tmpDirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}
