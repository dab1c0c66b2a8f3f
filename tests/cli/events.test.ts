/**
 * `lintel events watch`, the built CLI as a child process: a live tail of the websocket, NDJSON with
 * --json, refused topics with the exit codes scripts rely on, and an end with 0 on Ctrl-C and on a
 * reader that went away.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin, tokenOf, userWith } from '../support/fixtures';
import { bin, buildCli, freshConfigDir, removeConfigDirs } from './support';

let ts: TestServer;
let api: ApiClient;
let rootGroup: number;
const children: ChildProcessWithoutNullStreams[] = [];

beforeAll(async () => {
  const built = buildCli();
  expect(built.status, built.stderr).toBe(0);
  ts = await startTestServer();
  api = await admin(ts);
  rootGroup = (await getCommand('profile.get').run({ api }, {})).domains[0]!.id;
});
afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await ts?.close();
  removeConfigDirs();
});

/** `lintel events watch …` running as the given session, its output collected as it comes. */
function watch(token: string, args: string[] = []) {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CI: 'true',
    LINTEL_CONFIG_DIR: freshConfigDir(),
    LINTEL_TOKEN: token,
    LINTEL_SERVER: ts.url,
  };
  delete env.LINTEL_LANG;
  const child = spawn(process.execPath, [bin, 'events', 'watch', ...args], { env });
  children.push(child);
  let stdout = '';
  let stderr = '';
  let wake: (() => void) | null = null;
  child.stdout.on('data', (d) => ((stdout += d), wake?.()));
  child.stderr.on('data', (d) => ((stderr += d), wake?.()));
  const exited = new Promise<number | null>((resolve) =>
    child.on('close', (code) => (resolve(code), wake?.())),
  );
  let ended = false;
  void exited.then(() => (ended = true));
  const until = async (done: () => boolean) => {
    while (!done()) {
      if (ended) throw new Error(`the CLI ended; stdout: ${stdout}\nstderr: ${stderr}`);
      await new Promise<void>((r) => (wake = r));
    }
  };
  return { child, exited, until, stdout: () => stdout, stderr: () => stderr };
}

const holder = () => userWith(ts, api, { permissions: ['users.view'], domains: [rootGroup] });

describe('lintel events watch', () => {
  it('--json prints each event as one JSON line, the user’s own and the app’s; Ctrl-C ends it with 0', async () => {
    const u = await holder();
    const w = watch(tokenOf(await u.client()), ['--json']);
    await w.until(() => w.stderr().includes('Watching'));
    expect(w.stderr()).toContain(`private-users.${u.id}`);
    await getCommand('role.update').run({ api }, { id: u.roleId, permissions: [] });
    const other = await holder();
    await getCommand('user.update').run({ api }, { id: u.id, role: other.roleId });
    await w.until(() => w.stdout().trim().split('\n').length === 2);
    const lines = w
      .stdout()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { topic: string; id: number; data: Record<string, unknown> });
    expect(lines).toEqual([
      {
        topic: 'private-app-changes',
        id: expect.any(Number),
        data: { type: 'RoleChangedEvent', roleId: u.roleId, projectId: expect.any(Number) },
      },
      {
        topic: `private-users.${u.id}`,
        id: expect.any(Number),
        data: { type: 'ProfileChangedEvent', userId: u.id, projectId: expect.any(Number) },
      },
    ]);
    w.child.kill('SIGINT');
    expect(await w.exited).toBe(0);
  });

  it('prints a line a person reads; a reader that goes away ends it with 0', async () => {
    const u = await holder();
    const w = watch(tokenOf(await u.client()), ['--topic', 'private-app-changes']);
    await w.until(() => w.stderr().includes('Watching private-app-changes.'));
    await getCommand('role.update').run({ api }, { id: u.roleId, permissions: [] });
    await w.until(() => w.stdout().includes('\n'));
    expect(w.stdout()).toMatch(
      new RegExp(
        `^\\d\\d:\\d\\d:\\d\\d  private-app-changes  RoleChangedEvent  roleId=${u.roleId} projectId=\\d+\\n$`,
      ),
    );
    // the reader closes its end (`| head -1`): the next write meets a closed pipe
    w.child.stdout.destroy();
    await getCommand('role.update').run({ api }, { id: u.roleId, permissions: ['users.view'] });
    expect(await w.exited).toBe(0);
  });

  it('a topic the user may not read exits 4, an unknown one 5, each saying why', async () => {
    const u = await holder();
    const v = await holder();
    const token = tokenOf(await u.client());
    const refused = watch(token, ['--topic', `private-users.${v.id}`]);
    expect(await refused.exited).toBe(4);
    expect(refused.stderr()).toContain(`private-users.${v.id}: Method or action is prohibited`);
    expect(refused.stderr()).toContain('None of the topics can be watched.');
    const unknown = watch(token, ['--topic', 'private-nothing']);
    expect(await unknown.exited).toBe(5);
    expect(unknown.stderr()).toContain('private-nothing: Item not found');
  });

  it('a session that is not valid exits 3', async () => {
    const w = watch('not-a-token', ['--topic', 'private-app-changes']);
    expect(await w.exited).toBe(3);
  });
});
