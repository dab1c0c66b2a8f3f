/**
 * Issue 21 item 4, crash safety: the server is killed (a child process, SIGKILL) while it syncs 2,000
 * identifiers to 5 simulated panels. A new server on the same database — PostgreSQL in the PostgreSQL pass,
 * the same PGlite folder otherwise — finishes the sync: every panel holds exactly the set the rule gives,
 * and each item was applied once (a panel counts its writes; a request id sent again is answered, not
 * applied again). The 10,000 × 20 runs the same test with the sizes set (below).
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, expect, it } from 'vitest';
import { sql } from 'kysely';
import pg from 'pg';
import { getCommand } from '@lintel/commands';
import { SimulatedDevice } from '@lintel/device-sim';
import { freshDatabase, startTestServer } from '../support/server';
import { admin, rootGroup, uid } from '../support/fixtures';
import { until } from './mqtt-clients';

const repoRoot = path.resolve(import.meta.dirname, '../..');
// the suite's size; the 10,000 x 20 is run with LINTEL_CRASH_IDENTIFIERS=10000 LINTEL_CRASH_PANELS=20
// (its figures in bench/RESULTS.md, access-sync)
const IDENTIFIERS = Number(process.env.LINTEL_CRASH_IDENTIFIERS ?? 2_000);
const PANELS = Number(process.env.LINTEL_CRASH_PANELS ?? 5);

const sims: SimulatedDevice[] = [];
const children: ChildProcess[] = [];
let database: Awaited<ReturnType<typeof freshDatabase>> | undefined;
const logs: string[] = [];
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-crash-'));

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await Promise.all(sims.map((s) => s.kill().catch(() => undefined)));
  await database?.drop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** Where each device's queue stands (its tasks by state, their jobs), printed when a panel does not converge. */
async function queues(): Promise<string> {
  if (!database?.url) return '(PGlite: the folder is the server child’s)';
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const tasks = await client.query(`select t.device_id, t.id, t.state, t.attempts, t.error,
        j.id as job, j.state as job_state, j.attempts as job_attempts, j.run_at, j.locked_until, j.last_error
      from device_tasks t left join jobs j on j.kind = 'device.task' and (j.payload->>'taskId')::bigint = t.id
      where t.state not in ('completed') order by t.device_id, t.id`);
    const devices = await client.query(`select id, status, last_heartbeat_at from devices order by id`);
    const changes = await client.query(`select count(*) from access_sync_changes`);
    const ledger = await client.query(`select device_id, state, task_id is null as free, count(*)
      from device_access_ledger group by 1, 2, 3 order by 1, 2, 3`);
    return JSON.stringify(
      { devices: devices.rows, open: tasks.rows, changes: changes.rows, ledger: ledger.rows },
      null,
      1,
    );
  } finally {
    await client.end();
  }
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });

/** A server of its own process on the database (or PGlite folder) of the test; resolves once it listens. */
async function serverChild(port: number, mqttPort: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [path.join(repoRoot, 'apps/server/dist/main.js')], {
    env: {
      ...process.env,
      ...(database?.url ? { DATABASE_URL: database.url } : { DATABASE_URL: '' }),
      LINTEL_DATA_DIR: dataDir,
      LINTEL_STORAGE_DIR: path.join(dataDir, 'storage'),
      PORT: String(port),
      HOST: '127.0.0.1',
      MQTT_PORT: String(mqttPort),
      MQTT_HOST: '127.0.0.1',
      LINTEL_SIP: 'off',
      LOG_LEVEL: 'warn',
      LINTEL_ADMIN_PASSWORD: 'Crash-test-password-1',
      // a job the killed server held is taken again within its lease (a running job extends it)
      LINTEL_JOBS_LEASE_S: '10',
      LINTEL_ACCESS_SYNC_MS: '200',
      LINTEL_ACCESS_SYNC_BATCH: '100',
      LINTEL_DEVICE_REQUEST_TIMEOUT_MS: '5000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => ((out += d.toString()), logs.push(d.toString())));
  child.stderr!.on('data', (d: Buffer) => ((out += d.toString()), logs.push(d.toString())));
  await until(async () => {
    if (child.exitCode !== null) throw new Error(`the server exited: ${out}`);
    return fetch(`http://127.0.0.1:${port}/api/v0/server-info`)
      .then((r) => r.status < 500)
      .catch(() => false);
  }, 60_000);
  return child;
}

it(
  'a server killed mid-sync: every panel converges to exactly the rule, each item applied once',
  // the bounds below only stop a stuck run: under a loaded machine the sync is slow, not wrong
  { timeout: 600_000 },
  async () => {
    database = await freshDatabase();
    const mqttPort = await freePort();
    // the setup: devices, 2,000 cards and one rule over them, planned by no one yet
    const setup = await startTestServer({
      database: database.url,
      config: {
        ...(database.url ? {} : { dataDir }),
        modules: ['events', 'devices', 'http'],
        mqtt: { port: mqttPort, host: '127.0.0.1', shared: false, requestTimeoutMs: 5_000, sweepMs: 0 },
        accessSync: { pollMs: 0 },
      },
    });
    const api = await admin(setup);
    const root = await rootGroup(api);
    const devices: Array<{ id: number; serial: string; login: string; password: string; url: string }> = [];
    for (let i = 0; i < PANELS; i++) {
      const serial = `CRASH-${uid()}`;
      const { data } = await getCommand('device.create').run({ api }, {
        name: serial,
        type: 'panel',
        serial_number: serial,
        domain_id: root,
        protocol: 'mqtt',
      } as never);
      const c = await getCommand('device.credentials').run({ api }, { id: data.id });
      devices.push({
        id: data.id,
        serial,
        login: c.login,
        password: c.password,
        url: `mqtt://127.0.0.1:${mqttPort}`,
      });
    }
    const db = setup.server.context.db;
    const project = (
      await sql<{ id: number }>`select project_id as id from domains where id = ${root}`.execute(db)
    ).rows[0]!.id;
    const ids = (
      await sql<{ id: number }>`insert into identifiers (project_id, name, type, value)
      select ${project}, 'crash ' || g, 'card', (7000000000 + g)::text from generate_series(1, ${IDENTIFIERS}) g
      returning id`.execute(db)
    ).rows.map((r) => Number(r.id));
    await getCommand('access_rule.create').run({ api }, {
      name: `Everyone ${uid()}`,
      devices: devices.map((d) => d.id),
      identifiers: ids,
    } as never);
    await setup.server.close();

    // the first server starts the sync and is killed in the middle of it
    const first = await serverChild(await freePort(), mqttPort);
    for (const d of devices) {
      const sim = new SimulatedDevice({
        serial: d.serial,
        management: { protocol: 'mqtt', url: d.url, login: d.login, password: d.password },
        // heartbeats keep them online for the server's offline sweep (three missed: offline)
        heartbeatMs: 2_000,
      });
      sims.push(sim);
      await sim.start();
    }
    const total = () => sims.reduce((s, x) => s + x.writes, 0);
    const progress = process.env.AS_TIMING
      ? setInterval(
          () =>
            console.log(
              'writes',
              total(),
              sims.map((x) => x.requests.length).join(' '),
              logs.join('').slice(-2000),
            ),
          5000,
        )
      : null;
    // killed in the middle of the sync (about a third of it sent)
    await until(async () => total() >= IDENTIFIERS * PANELS * 0.3, 200_000).catch((e: Error) => {
      console.log('LOGS', logs.join('').slice(-6000));
      throw e;
    });
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    if (progress) setTimeout(() => clearInterval(progress), 200_000);
    const atKill = total();
    expect(atKill).toBeLessThan(IDENTIFIERS * PANELS);

    // a new server on the same database: the devices reconnect, the sync goes on where the ledger says
    await serverChild(await freePort(), mqttPort);
    // the panels connect to it anew (their state — what they hold, the request ids they applied — is kept)
    for (const s of sims) {
      await s.kill();
      await s.start();
    }
    const want = ids.map((i) => `identifier-${i}`).sort();
    await until(
      async () => sims.every((s) => s.identifiers.size === IDENTIFIERS) && total() >= IDENTIFIERS * PANELS,
      300_000,
    ).catch(async (e: Error) => {
      console.log('HELD', sims.map((s) => s.identifiers.size).join(' '), 'LOGS', logs.join('').slice(-6000));
      console.log('QUEUES', await queues());
      throw e;
    });
    for (const s of sims) {
      expect([...s.identifiers.keys()].sort()).toEqual(want);
      // each item applied once, however often its request came (a counting device counted IDENTIFIERS)
      expect(s.writes).toBe(IDENTIFIERS);
      expect(s.requests.some((r) => JSON.stringify(r.body ?? null).includes('replace'))).toBe(false);
    }
  },
);
