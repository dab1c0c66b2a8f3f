/**
 * Issue 11, item 5: two server instances started at the same moment on one fresh PostgreSQL database both
 * come up. One migrates and creates the first project under an advisory lock; the other waits for it, then
 * finds the migrations applied and the project there. Runs in the PostgreSQL pass (DATABASE_URL set).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, expect, it } from 'vitest';
import pg from 'pg';
import { getCommand } from '@lintel/commands';
import { ApiClient, MemorySessionStore } from '@lintel/core';
import { createServer, loadConfig, type LintelServer } from '@lintel/server';

const base = process.env.DATABASE_URL!;
const name = `lintel_t_${randomBytes(6).toString('hex')}`;
const servers: LintelServer[] = [];
const storage = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-storage-'));

async function admin(sql: string) {
  const c = new pg.Client({ connectionString: base });
  await c.connect();
  try {
    return await c.query(sql);
  } finally {
    await c.end();
  }
}

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await admin(`drop database if exists ${name} with (force)`);
  fs.rmSync(storage, { recursive: true, force: true });
});

it('two instances started at once on one new database both come up and serve', async () => {
  await admin(`create database ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  const password = `Admin-${randomBytes(6).toString('hex')}`;
  const config = () =>
    loadConfig(
      {},
      {
        port: 0,
        host: '127.0.0.1',
        dataDir: 'memory://',
        storageDir: storage,
        databaseUrl: url.toString(),
        adminPassword: password,
        logLevel: 'silent',
        // each its own embedded broker on a free port (several instances on one machine share a broker by
        // MQTT_URL in production; this test is about the database)
        mqtt: { port: 0, host: '127.0.0.1', shared: false, requestTimeoutMs: 5_000, sweepMs: 0 },
      },
    );

  const started = await Promise.allSettled([createServer(config()), createServer(config())]);
  for (const s of started) if (s.status === 'fulfilled') servers.push(s.value);
  expect(started.map((s) => (s.status === 'rejected' ? String(s.reason) : 'up'))).toEqual(['up', 'up']);

  // each answers, on the same data: one project, one administrator, every migration applied once
  for (const server of servers) {
    const address = (await server.listen()).replace('0.0.0.0', '127.0.0.1');
    const reply = await getCommand('session.login').run(
      { api: new ApiClient({ baseUrl: address, store: new MemorySessionStore() }) },
      { login: 'admin', password },
    );
    const api = new ApiClient({ baseUrl: address, store: new MemorySessionStore({ ...reply.sessions[0]! }) });
    expect((await getCommand('user.list').run({ api }, {})).meta.total).toBe(1);
  }
  const projects = await servers[0]!.context.db.selectFrom('projects').select('uid').execute();
  expect(projects.map((p) => p.uid)).toEqual(['default']);
  const applied = await servers[0]!.context.db.selectFrom('schema_migrations').select('name').execute();
  expect(applied.length).toBe(new Set(applied.map((m) => m.name)).size);
  expect(applied.length).toBeGreaterThan(0);
});
