/**
 * Issue 25, item 1: a first start that cannot bind its port must not lock the administrator out. The built
 * server (apps/server/dist/main.js, as `npm start` runs it) on an empty data folder:
 * - with PORT held by another program it says so in one line, without a stack, and creates nothing;
 * - started, then killed before anyone signed in (the printed password lost), the next start prints a new
 *   password that signs in (the lost one no longer does);
 * - once the administrator has signed in, a start prints no password.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freshConfigDir, lintel, removeConfigDirs, root } from './support';

const main = path.join(root, 'apps/server/dist/main.js');
let dataDir: string;
let configDir: string;
const children = new Set<ChildProcess>();

beforeAll(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-first-start-'));
  configDir = freshConfigDir();
});
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
  removeConfigDirs();
});

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });

interface Started {
  child: ChildProcess;
  port: number;
  stdout: string;
  stderr: string;
  code: number | null;
}

/** Runs the built server on the test's data folder until it says it runs, or exits. */
async function start(port: number): Promise<Started> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.DATABASE_URL;
  delete env.MQTT_URL;
  delete env.LINTEL_ADMIN_PASSWORD;
  const child = spawn(process.execPath, [main], {
    env: {
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
      MQTT_PORT: String(await freePort()),
      LOG_LEVEL: 'warn',
      LINTEL_DATA_DIR: dataDir,
      LINTEL_CONFIG_DIR: configDir,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const s: Started = { child, port, stdout: '', stderr: '', code: null };
  child.stdout!.on('data', (c: Buffer) => (s.stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (s.stderr += c.toString()));
  await new Promise<void>((resolve) => {
    child.stdout!.on('data', () => {
      if (s.stdout.includes('Lintel is running')) resolve();
    });
    child.once('exit', (code) => {
      s.code = code;
      children.delete(child);
      resolve();
    });
  });
  return s;
}

async function stop(s: Started, signal: NodeJS.Signals): Promise<void> {
  if (s.code !== null || s.child.exitCode !== null) return;
  const exited = new Promise((r) => s.child.once('exit', r));
  s.child.kill(signal);
  await exited;
  children.delete(s.child);
}

/** The password the start printed, if any: the line after the "sign in" sentence. */
const printedPassword = (s: Started) => /sign[- ]in[^\n]*\n\s*\n\s+(\S+)\s*\n/.exec(s.stdout)?.[1];

const login = (port: number, password: string) =>
  fetch(`http://127.0.0.1:${port}/api/v0/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ login: 'admin', password }),
  });

it('a busy port is said in one line and creates nothing; a lost first password is made again until the first sign-in', async () => {
  // another program holds the port
  const holder = net.createServer();
  const busyPort = await new Promise<number>((resolve) =>
    holder.listen(0, '127.0.0.1', () => resolve((holder.address() as net.AddressInfo).port)),
  );
  try {
    const refused = await start(busyPort);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toBe(`port ${busyPort} is in use: set PORT`);
    expect(refused.stdout).not.toMatch(/password/i);
    // nothing was created: the data folder is as it was
    expect(fs.readdirSync(dataDir)).toEqual([]);
  } finally {
    await new Promise((r) => holder.close(r));
  }

  // a first start whose password is lost: killed before anyone signed in
  const first = await start(await freePort());
  expect(first.code).toBeNull();
  const lost = printedPassword(first);
  expect(lost).toBeTruthy();
  await stop(first, 'SIGKILL');

  // the next start prints a new password, which signs in; the lost one does not
  const second = await start(await freePort());
  expect(second.code).toBeNull();
  const fresh = printedPassword(second);
  expect(fresh).toBeTruthy();
  expect(fresh).not.toBe(lost);
  expect((await login(second.port, lost!)).status).toBe(401);
  expect((await login(second.port, fresh!)).status).toBe(200);
  await stop(second, 'SIGTERM');

  // signed in once: the next start prints no password, and the password stays
  const third = await start(await freePort());
  expect(third.code).toBeNull();
  expect(printedPassword(third)).toBeUndefined();
  expect(third.stdout).not.toMatch(/password/i);
  expect((await login(third.port, fresh!)).status).toBe(200);

  // `lintel login` with no server named proposes the one running here, on its own port (it proposed 8080)
  const cli = await lintel(['login', '--login', 'admin', '--password-stdin', '--json'], {
    configDir,
    input: fresh!,
  });
  expect(cli.stderr).toBe('');
  expect(JSON.parse(cli.stdout)).toMatchObject({ server: `http://localhost:${third.port}`, login: 'admin' });
  await stop(third, 'SIGTERM');
  // a server that stopped no longer says it is there
  expect(fs.existsSync(path.join(configDir, 'local-server.json'))).toBe(false);
}, 240_000);

it('PORT=0: the system chooses the port; the banner and the address `lintel login` proposes name it, not 0', async () => {
  const s = await start(0);
  try {
    expect(s.code).toBeNull();
    const url = /Lintel is running at (\S+)/.exec(s.stdout)?.[1];
    expect(url).toMatch(/^http:\/\/localhost:\d+$/);
    const port = Number(new URL(url!).port);
    expect(port).toBeGreaterThan(0);
    // the server answers there: its API refuses a wrong password with the catalogue's code
    const refused = await login(port, 'not the password');
    expect(refused.status).toBe(401);
    expect(JSON.parse(fs.readFileSync(path.join(configDir, 'local-server.json'), 'utf8'))).toMatchObject({
      url,
    });
  } finally {
    await stop(s, 'SIGTERM');
  }
}, 120_000);
