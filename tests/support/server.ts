import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import pg from 'pg';
import {
  createServer,
  defaultDeviceLimits,
  loadConfig,
  loadSipConfig,
  type Config,
  type LintelServer,
} from '@lintel/server';
import { ApiClient, MemorySessionStore, type StoredSession } from '@lintel/core';
import { pgliteTemplate, postgresTemplate } from './database-template';

export interface TestServer {
  url: string;
  adminLogin: string;
  adminPassword: string;
  server: LintelServer;
  /** everything the server logged so far */
  logs(): string;
  /** an API client of its own (no session yet) */
  client(session?: StoredSession | null): ApiClient;
  close(): Promise<void>;
}

const useTemplate = process.env.LINTEL_TEST_TEMPLATE !== '0';
const repoRoot = path.resolve(import.meta.dirname, '../..');
export const builtWebDir = path.join(repoRoot, 'apps/web/dist');

/**
 * A fresh database per server: a new PostgreSQL database when DATABASE_URL is set (dropped afterwards),
 * else PGlite in memory. Empty, unless `migrated`: then a copy of the migrated template
 * (./database-template.ts).
 */
export async function freshDatabase(
  opts: { migrated?: boolean } = {},
): Promise<{ url?: string; drop(): Promise<void> }> {
  const base = process.env.DATABASE_URL;
  if (!base) return { drop: async () => undefined };
  const name = `lintel_t_${randomBytes(6).toString('hex')}`;
  const template = opts.migrated ? ` template ${await postgresTemplate(base)}` : '';
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create database ${name}${template}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

/**
 * `database`: the URL of a PostgreSQL database another test server already uses (two instances on one
 * database); it is left for that server to drop.
 */
export async function startTestServer(
  opts: { webDir?: string; config?: Partial<Config>; database?: string } = {},
): Promise<TestServer> {
  const db = opts.database
    ? { url: opts.database, drop: async () => undefined }
    : await freshDatabase({ migrated: useTemplate && !opts.config?.databaseUrl });
  const adminPassword = `Admin-${randomBytes(6).toString('hex')}`;
  let logText = '';
  const logStream = new Writable({
    write(chunk, _enc, cb) {
      logText += chunk.toString();
      cb();
    },
  });
  const storageDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-storage-'));
  const webDir =
    opts.webDir ?? (fs.existsSync(path.join(builtWebDir, 'index.html')) ? builtWebDir : undefined);
  const config = loadConfig(
    {},
    {
      port: 0,
      host: '127.0.0.1',
      dataDir: 'memory://',
      // PGlite starts from a dump with the migrations applied (./database-template.ts); a test that gives a
      // data folder of its own (config.dataDir) starts from nothing, as a real first start does
      // (LINTEL_TEST_TEMPLATE=0: from nothing, to measure what the template saves)
      ...(db.url || opts.config?.dataDir || !useTemplate ? {} : { pgliteTemplate: await pgliteTemplate() }),
      storageDir,
      databaseUrl: db.url,
      adminPassword,
      webDir,
      logLevel: 'debug',
      logStream,
      // no evaluation licence: a test that needs a licence grants one (fixtures' grantLicence)
      licences: { publicKeys: [], cloudTimeoutMs: 10_000, evaluationDays: 0 },
      // the embedded MQTT broker on a free port of loopback; no sweep timer (tests call devices.sweep())
      mqtt: { port: 0, host: '127.0.0.1', shared: false, requestTimeoutMs: 5_000, sweepMs: 0 },
      // the simulated devices answer on loopback: the operator's switch that allows it (off by default)
      devices: { ...defaultDeviceLimits, allowLoopback: true },
      // closed by default (LINTEL_SELF_REGISTRATION_OPEN); the tests of self-registration need it open
      selfRegistrationOpen: true,
      // no SIP server unless the test asks for one (tests/sip start Kamailio on free ports)
      sip: loadSipConfig({ LINTEL_SIP: 'off' }),
      ...opts.config,
    },
  );
  const server = await createServer(config);
  const address = await server.listen();
  const url = address.replace('0.0.0.0', '127.0.0.1');
  server.context.config.publicUrl = url;
  return {
    url,
    adminLogin: config.adminLogin,
    adminPassword,
    server,
    logs: () => logText,
    client: (session = null) => new ApiClient({ baseUrl: url, store: new MemorySessionStore(session) }),
    async close() {
      await server.close();
      await db.drop();
      fs.rmSync(storageDir, { recursive: true, force: true });
      // backups of an in-memory database go beside the storage folder (apps/server/src/backup/service.ts)
      fs.rmSync(`${storageDir}-backups`, { recursive: true, force: true });
    },
  };
}
