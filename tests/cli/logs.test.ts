/**
 * `lintel logs` against a real server (issue 24 item 3): list the logs, show a log's newest lines (filtered,
 * paged with the cursor it names, as JSON), follow it as `tail -f`, download it to a file, clear it (a
 * script must say --yes); bad usage is exit 2.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server';
import { bin, buildCli, freshConfigDir, lintel, removeConfigDirs } from './support';

let ts: TestServer;
let dir: string;
let configDir: string;

beforeAll(async () => {
  expect(buildCli().status).toBe(0);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-cli-logs-'));
  ts = await startTestServer();
  configDir = freshConfigDir();
  const login = await lintel(['login', '--server', ts.url, '--login', ts.adminLogin, '--password-stdin'], {
    configDir,
    input: `${ts.adminPassword}\n`,
  });
  expect(login.code, login.stderr).toBe(0);
}, 120_000);
afterAll(async () => {
  await ts?.close();
  removeConfigDirs();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const run = (...args: string[]) => lintel(args, { configDir });

it('lists the logs, shows and pages one, downloads it and clears it', async () => {
  const list = await run('logs', 'list', '--json');
  expect(list.code, list.stderr).toBe(0);
  expect((JSON.parse(list.stdout) as { data: Array<{ name: string }> }).data.map((s) => s.name)).toEqual([
    'server',
    'jobs',
    'events',
  ]);
  const text = await run('logs', 'list');
  expect(text.stdout).toMatch(/^server\s+system log/m);

  for (let i = 0; i < 4; i++) ts.server.context.log.warn({ n: i }, `cli line ${i}`);
  const shown = await run('logs', 'show', 'server', '--grep', 'cli line', '-n', '2');
  expect(shown.code, shown.stderr).toBe(0);
  const lines = shown.stdout.trim().split('\n');
  expect(lines).toHaveLength(2);
  expect(lines[0]).toMatch(/^\d{4}-\d\d-\d\dT\S+ WARN {2}cli line 2 \{"n":2\}$/);
  expect(lines[1]).toContain('cli line 3');
  const cursor = /--before (\S+)/.exec(shown.stderr)?.[1];
  expect(cursor).toMatch(/^0:\d+$/);
  const older = await run(
    'logs',
    'tail',
    'server',
    '--grep',
    'cli line',
    '-n',
    '2',
    '--before',
    cursor!,
    '--json',
  );
  expect(older.code, older.stderr).toBe(0);
  const page = JSON.parse(older.stdout) as { data: Array<{ message: string }>; before: string | null };
  expect(page.data.map((l) => l.message)).toEqual(['cli line 0', 'cli line 1']);
  // the page is full: whether anything older matches is known by asking for it
  const oldest = await run(
    'logs',
    'show',
    'server',
    '--grep',
    'cli line',
    '--before',
    page.before!,
    '--json',
  );
  expect(JSON.parse(oldest.stdout)).toMatchObject({ data: [], before: null });
  const warn = await run('logs', 'show', 'server', '--level', 'error', '--grep', 'cli line');
  expect(warn.stdout).toBe('');

  const file = path.join(dir, 'server.log');
  const saved = await run('logs', 'download', 'server', '-o', file, '--json');
  expect(saved.code, saved.stderr).toBe(0);
  expect(JSON.parse(saved.stdout)).toMatchObject({ name: 'server', file });
  const content = fs.readFileSync(file, 'utf8');
  expect(content).toContain('"msg":"cli line 3"');
  expect(content.indexOf('cli line 0')).toBeLessThan(content.indexOf('cli line 3'));
  const piped = await run('logs', 'download', 'jobs', '-o', '-');
  expect(piped.stdout).toMatch(/"kind":"events.prune"/);

  // a script must say --yes to clear
  const asked = await run('logs', 'clear', 'jobs');
  expect(asked.code).toBe(2);
  expect(fs.statSync(path.join(ts.server.context.logFiles.dir, 'jobs.log')).size).toBeGreaterThan(0);
  const cleared = await run('logs', 'clear', 'jobs', '--yes', '--json');
  expect(cleared.code, cleared.stderr).toBe(0);
  expect(JSON.parse(cleared.stdout)).toMatchObject({ data: { name: 'jobs' } });
  expect((await run('logs', 'show', 'jobs')).stdout).toBe('');
});

it('follows a log as lines are written', async () => {
  const child = spawn(process.execPath, [bin, 'logs', 'show', 'server', '--grep', 'followed', '-f'], {
    env: { ...process.env, CI: 'true', LINTEL_CONFIG_DIR: configDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  try {
    const end = Date.now() + 20_000;
    let n = 0;
    while (!/followed 2/.test(out)) {
      if (Date.now() > end) throw new Error(`not followed: ${out}`);
      ts.server.context.log.info(`followed ${n++}`);
      await new Promise((r) => setTimeout(r, 400));
    }
    const seen = out.match(/followed \d+/g)!;
    // each line once, in order
    expect(seen).toEqual([...new Set(seen)]);
  } finally {
    child.kill();
  }
});

it('refuses a log it does not know and a bad level with exit 2', async () => {
  const bad = await run('logs', 'show', 'passwords');
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain('server, sip, jobs, events');
  expect((await run('logs', 'show', 'server', '--level', 'loud')).code).toBe(2);
  expect((await run('logs', 'show', 'server', '-n', '0')).code).toBe(2);
});
