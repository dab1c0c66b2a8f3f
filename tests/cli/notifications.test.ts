/**
 * `lintel notifications …`, generated from the registry's `notification.*` commands: the built CLI as a
 * child process against a real server lists the signed-in user's notifications by tab, marks one read and
 * then all, and answers someone else's id with the catalogue's "not found".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { notify } from '@lintel/server';
import { admin, userWith } from '../support/fixtures';
import { startTestServer, type TestServer } from '../support/server';
import { buildCli, freshConfigDir, lintel, removeConfigDirs } from './support';

let ts: TestServer;
let api: ApiClient;
let dir: string;
let me: { id: number; projectId: number };

beforeAll(async () => {
  const built = buildCli();
  expect(built.status, built.stderr).toBe(0);
  ts = await startTestServer();
  api = await admin(ts);
  dir = freshConfigDir();
  const r = await lintel(['login', '--server', ts.url, '--login', ts.adminLogin, '--password-stdin'], {
    configDir: dir,
    input: `${ts.adminPassword}\n`,
  });
  expect(r.code, r.stderr).toBe(0);
  const p = await getCommand('profile.get').run({ api }, {});
  me = { id: p.id, projectId: p.project.id };
});

afterAll(async () => {
  await ts?.close();
  removeConfigDirs();
});

const cli = (args: string[]) => lintel(['notifications', ...args], { configDir: dir });

async function send(recipients: number[], name: string) {
  const ctx = ts.server.context;
  await ctx.outbox.unit(() =>
    ctx.db
      .transaction()
      .execute((trx) =>
        notify(ctx, trx, { projectId: me.projectId, recipients, type: 'device_offline', data: { name } }),
      ),
  );
}

describe('lintel notifications', () => {
  it('lists, marks one read and then all', async () => {
    await send([me.id], 'Gate 1');
    await send([me.id], 'Gate 2');
    const list = await cli(['list', '--type', 'important', '--json']);
    expect(list.code, list.stderr).toBe(0);
    const page = JSON.parse(list.stdout) as {
      data: { id: number; data: { name: string } }[];
      meta: { total: number };
    };
    expect(page.meta.total).toBe(2);
    expect(page.data.map((n) => n.data.name)).toEqual(['Gate 2', 'Gate 1']);

    const read = await cli(['read', String(page.data[0]!.id), '--json']);
    expect(read.code, read.stderr).toBe(0);
    expect(JSON.parse(read.stdout).read_at).not.toBeNull();

    const all = await cli(['read-all', '--json']);
    expect(all.code, all.stderr).toBe(0);
    expect(JSON.parse(all.stdout)).toEqual({ count: 1 });
    expect((await getCommand('notification.unread').run({ api }, {})).meta.total).toBe(0);
  });

  it('someone else’s notification: not found, and it stays unread', async () => {
    const root = (await getCommand('profile.get').run({ api }, {})).domains[0]!.id;
    const other = await userWith(ts, api, { permissions: [], domains: [root] });
    await send([other.id], 'Not yours');
    const theirs = await ts.server.context.db
      .selectFrom('notifications')
      .select('id')
      .where('user_id', '=', other.id)
      .executeTakeFirstOrThrow();
    const r = await cli(['read', String(theirs.id)]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/not found/i);
    const left = await getCommand('notification.unread').run({ api: await other.client() }, {});
    expect(left.meta.total).toBe(1);
  });
});
