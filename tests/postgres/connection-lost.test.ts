/**
 * What only PostgreSQL has: connections the database server may drop (a restart, a failover, an
 * administrator's pg_terminate_backend). An idle connection dropped must not end the Lintel server: it is
 * logged, and the next call opens a new one. Runs in the PostgreSQL pass of `npm test` (DATABASE_URL set).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import net from 'node:net';
import pg from 'pg';
import { sql } from 'kysely';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { freshDatabase, startTestServer, type TestServer } from '../support/server';
import { admin } from '../support/fixtures';

let ts: TestServer;
let api: ApiClient;

beforeAll(async () => {
  ts = await startTestServer();
  expect(ts.server.context.database.kind).toBe('postgres');
  api = await admin(ts);
});
afterAll(async () => {
  await ts?.close();
});

it('keeps answering after PostgreSQL drops its idle connections', async () => {
  // a few calls at once leave several idle connections in the pool
  await Promise.all([1, 2, 3, 4, 5].map(() => getCommand('user.list').run({ api }, {})));
  const url = new URL(ts.server.context.config.databaseUrl!);
  const database = url.pathname.slice(1);
  const killer = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await killer.connect();
  try {
    const killed = await killer.query(
      'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
      [database],
    );
    expect(killed.rowCount).toBeGreaterThan(0);
  } finally {
    await killer.end();
  }
  // at once, without waiting for the server to notice: pg_terminate_backend returns before the backends
  // end, so these calls find pooled connections that are dead or dying; reads must still be answered
  const replies = await Promise.all([1, 2, 3, 4].map(() => getCommand('user.list').run({ api }, {})));
  for (const users of replies) expect(users.meta.total).toBeGreaterThan(0);
  await expect.poll(() => ts.logs().includes('database connection lost'), { timeout: 10_000 }).toBe(true);
  const users = await getCommand('user.list').run({ api }, {});
  expect(users.meta.total).toBeGreaterThan(0);
});

/**
 * A TCP relay to PostgreSQL that can cut every connection it carries the way a firewall or a NAT that
 * forgot them does: silently, so the client learns it only when it next writes (the reset answers it).
 */
async function relayTo(target: URL): Promise<{ port: number; forget(): void; close(): Promise<void> }> {
  const pairs = new Set<{ client: net.Socket; upstream: net.Socket; forgotten: boolean }>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    const pair = { client, upstream, forgotten: false };
    pairs.add(pair);
    client.on('data', (chunk) => {
      if (pair.forgotten) {
        upstream.destroy();
        client.resetAndDestroy();
      } else upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!pair.forgotten) client.write(chunk);
    });
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    forget: () => pairs.forEach((p) => (p.forgotten = true)),
    close: () =>
      new Promise<void>((resolve) => {
        pairs.forEach((p) => (p.client.destroy(), p.upstream.destroy()));
        server.close(() => resolve());
      }),
  };
}

it('replaces a pooled connection that the network dropped silently, on its first use', async () => {
  const database = await freshDatabase();
  const target = new URL(database.url!);
  const relay = await relayTo(target);
  const relayed = new URL(target);
  relayed.host = `127.0.0.1:${relay.port}`;
  const other = await startTestServer({ database: relayed.toString(), config: { moduleStopBoundMs: 2_000 } });
  let closed = false;
  try {
    const client = await admin(other);
    await Promise.all([1, 2, 3, 4, 5].map(() => getCommand('user.list').run({ api: client }, {})));
    // a statement in flight when the network forgets its connection never hears its answer: it must not
    // keep the server from closing (a job's poll was caught so once, and the close waited for ever)
    const stranded = sql`select pg_sleep(0.5) as stranded`
      .execute(other.server.context.db)
      .catch((e: Error) => e);
    const watcher = new pg.Client({ connectionString: database.url });
    await watcher.connect();
    await expect
      .poll(
        async () =>
          (
            await watcher.query(
              `select count(*)::int as n from pg_stat_activity where query like 'select pg_sleep(0.5) as stranded%'`,
            )
          ).rows[0].n,
      )
      .toBe(1);
    // a module's work stranded the same way (the access-sync planner's poll, its table locked until the
    // network has forgotten the connection): the module's stop waits for it, and must not wait for ever
    const locker = new pg.Client({ connectionString: database.url });
    await locker.connect();
    await locker.query('begin');
    await locker.query('lock table access_sync_changes in access exclusive mode');
    const planning = other.server.context.accessSync.poll().catch((e: Error) => e);
    await expect
      .poll(
        async () =>
          (
            await watcher.query(
              `select count(*)::int as n from pg_stat_activity
                where query like 'select distinct project_id from access_sync_changes%' and wait_event_type = 'Lock'`,
            )
          ).rows[0].n,
      )
      .toBe(1);
    await watcher.end();
    relay.forget();
    await locker.query('commit');
    await locker.end();
    // every pooled connection is now dead, and nothing told the server: reads are still answered
    for (let i = 0; i < 3; i++) {
      const users = await getCommand('user.list').run({ api: client }, {});
      expect(users.meta.total).toBeGreaterThan(0);
    }
    await other.close();
    closed = true;
    expect(await stranded).toBeInstanceOf(Error);
    expect(await planning).toBeInstanceOf(Error);
    expect(other.logs()).toContain('module did not stop in time');
  } finally {
    if (!closed) await other.close();
    await relay.close();
    await database.drop();
  }
});
