/**
 * `lintel devices events list|export` (and `lintel device-events …`), generated from the journal's
 * declaration: `--where` in the filter language, a time range, every row with `--all`, the export to a file.
 */
import fs from 'node:fs';
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import { startTestServer, type TestServer } from '../support/server';
import { admin, rootGroup, tokenOf, uid } from '../support/fixtures';
import { bin, buildCli, freshConfigDir, lintel, removeConfigDirs } from './support';

let ts: TestServer;
let dir: string;
let deviceId: number;
let token: string;
let push: (body: unknown) => Promise<Response>;
const n = uid();

beforeAll(async () => {
  const built = buildCli();
  expect(built.status, built.stderr).toBe(0);
  ts = await startTestServer();
  dir = freshConfigDir();
  const r = await lintel(['login', '--server', ts.url, '--login', ts.adminLogin, '--password-stdin'], {
    configDir: dir,
    input: `${ts.adminPassword}\n`,
  });
  expect(r.code, r.stderr).toBe(0);
  const api = await admin(ts);
  const serial = `CLI-${n}`;
  deviceId = (
    await getCommand('device.create').run(
      { api },
      { name: serial, type: 'panel', serial_number: serial, domain_id: await rootGroup(api) },
    )
  ).data.id;
  token = tokenOf(api);
  const c = await getCommand('device.credentials').run({ api }, { id: deviceId });
  push = (body: unknown) =>
    fetch(`${ts.url}/api/v0/device-gateway/logs`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Basic ${Buffer.from(`${c.login}:${c.password}`).toString('base64')}`,
      },
      body: JSON.stringify(body),
    });
  const res = await push({
    events: [
      { event_id: `${n}-1`, kind: 'identifier_used', identifier_number: '100', lock: 1, result: 'granted' },
      { event_id: `${n}-2`, kind: 'identifier_refused', identifier_number: '200', result: 'denied' },
      { event_id: `${n}-3`, kind: 'alarm', reason: 'smoke', result: 'triggered' },
    ],
  });
  expect(res.status).toBe(200);
});
afterAll(async () => {
  await ts?.close();
  removeConfigDirs();
});

type Events = { data: { event_id: string; kind: string }[] };

it('lists device events under `devices events`, filtered with --where', async () => {
  const r = await lintel(['devices', 'events', 'list', '--where', 'kind = identifier_refused', '--json'], {
    configDir: dir,
  });
  expect(r.code, r.stderr).toBe(0);
  expect((JSON.parse(r.stdout) as Events).data.map((e) => e.event_id)).toEqual([`${n}-2`]);
  const any = await lintel(
    ['device-events', 'list', '--where', 'identifier_number = 100 or reason = smoke', '--json'],
    { configDir: dir },
  );
  expect(any.code, any.stderr).toBe(0);
  expect((JSON.parse(any.stdout) as Events).data.map((e) => e.event_id)).toEqual([`${n}-3`, `${n}-1`]);
  // a person reads a table
  const table = await lintel(['devices', 'events', 'list'], { configDir: dir });
  expect(table.code, table.stderr).toBe(0);
  expect(table.stdout).toContain('identifier_used');
  // a field that is not filterable is refused, with the catalogue's words
  const bad = await lintel(['devices', 'events', 'list', '--where', 'image = x'], { configDir: dir });
  expect(bad.code).not.toBe(0);
});

it('exports them to CSV', async () => {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-ev-')), 'events.csv');
  const r = await lintel(['devices', 'events', 'export', '--format', 'csv', '-o', out], { configDir: dir });
  expect(r.code, r.stderr).toBe(0);
  const text = fs.readFileSync(out, 'utf8');
  expect(text).toContain(`${n}-1`);
  expect(text).toContain('smoke');
});

/** `lintel devices events watch` as a child process: its output so far, a wait on it, and its end. */
function watch(args: string[]) {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CI: 'true',
    LINTEL_CONFIG_DIR: freshConfigDir(),
    LINTEL_TOKEN: token,
    LINTEL_SERVER: ts.url,
  };
  delete env.LINTEL_LANG;
  const child = spawn(process.execPath, [bin, 'devices', 'events', 'watch', ...args], { env });
  const out = { stdout: '', stderr: '' };
  let wake: (() => void) | null = null;
  child.stdout.on('data', (d: Buffer) => ((out.stdout += d.toString()), wake?.()));
  child.stderr.on('data', (d: Buffer) => ((out.stderr += d.toString()), wake?.()));
  const exited = new Promise<number | null>((resolve) =>
    child.on('close', (code) => (resolve(code), wake?.())),
  );
  const until = async (done: () => boolean) => {
    while (!done()) {
      if (child.exitCode !== null) throw new Error(`the CLI ended: ${out.stderr}`);
      await new Promise<void>((r) => (wake = r));
    }
  };
  return { child, out, exited, until };
}

it('watches them live: `lintel devices events watch --json`, one line per stored event; Ctrl-C ends it', async () => {
  const { child, out, exited, until } = watch(['--json']);
  try {
    await until(() => out.stderr.includes('Watching'));
    expect(
      (await push({ events: [{ event_id: `${n}-live`, kind: 'call', number: '12', result: 'missed' }] }))
        .status,
    ).toBe(200);
    await until(() => out.stdout.includes('\n'));
    const line = JSON.parse(out.stdout.trim().split('\n')[0]!) as {
      topic: string;
      data: Record<string, unknown>;
    };
    expect(line).toMatchObject({
      topic: 'private-devices',
      data: { type: 'DeviceEventCreatedEvent', deviceId, kind: 'call', result: 'missed' },
    });
    child.kill('SIGINT');
    expect(await exited).toBe(0);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
});

it('a person watching reads the device by its name and the event in words, not its ids (issue 25 item 6)', async () => {
  const api = await admin(ts);
  await getCommand('device.update').run({ api }, { id: deviceId, name: `Lobby door ${n}` });
  const { child, out, exited, until } = watch([]);
  try {
    await until(() => out.stderr.includes('Watching'));
    const pushed = await push({
      events: [
        { event_id: `${n}-words`, kind: 'identifier_refused', identifier_number: '300', result: 'denied' },
      ],
    });
    expect(pushed.status).toBe(200);
    await until(() => out.stdout.includes('\n'));
    const line = out.stdout.trim().split('\n')[0]!;
    expect(line).toContain(`Lobby door ${n}`);
    expect(line).toMatch(/Identifier refused/i);
    expect(line).not.toMatch(/deviceId=|domainId=|DeviceEventCreatedEvent/);
    child.kill('SIGINT');
    expect(await exited).toBe(0);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
});
