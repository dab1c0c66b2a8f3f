/**
 * The rest of spec part 2 §7's device calls (docs/decisions.md "Device commands, the rest"), against the real
 * gateway (the embedded broker) with the simulator as the device: the raw list and its scope; a protocol set
 * to none stops the device's tasks and refuses new ones with the catalogue code; "init device" sends the
 * whole configuration and every entity; an entity the device refuses is a sync error, listed until a later
 * sync is taken; an unknown device calling over HTTP lands in the pool, capped, and is registered from it.
 * The job worker does not run: `jobs.drain()` sends what is due.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { getCommand, POOL_LIMIT } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { ManualClock, POOL_REFRESH_MS } from '@lintel/server';
import { SimulatedDevice } from '@lintel/device-sim';
import { startTestServer, type TestServer } from '../support/server';
import { admin, failure, group, raw, rootGroup, uid, userWith } from '../support/fixtures';
import { until } from './mqtt-clients';

const clock = new ManualClock();
let ts: TestServer;
let api: ApiClient;
let root: number;
const sims: SimulatedDevice[] = [];

beforeAll(async () => {
  ts = await startTestServer({
    config: {
      clock,
      modules: ['events', 'devices', 'http'],
      mqtt: { port: 0, host: '127.0.0.1', shared: false, requestTimeoutMs: 300, sweepMs: 0, taskAttempts: 3 },
    },
  });
  api = await admin(ts);
  root = await rootGroup(api);
});
afterAll(async () => {
  await Promise.all(sims.map((s) => s.stop().catch(() => undefined)));
  await ts?.close();
});

const drain = () => ts.server.context.jobs.drain();

async function register(opts: { domain?: number; type?: 'panel' | 'monitor'; name?: string } = {}) {
  const serial = `CMD-${uid()}`;
  const { data } = await getCommand('device.create').run(
    { api },
    {
      name: opts.name ?? `Panel ${serial}`,
      type: opts.type ?? 'panel',
      serial_number: serial,
      domain_id: opts.domain ?? root,
      protocol: 'mqtt',
    },
  );
  const c = await getCommand('device.credentials').run({ api }, { id: data.id });
  const sim = new SimulatedDevice({
    serial,
    management: { protocol: 'mqtt', url: c.mqtt.url, login: c.login, password: c.password },
    heartbeatMs: 0,
  });
  sims.push(sim);
  return { id: data.id, serial, sim };
}

async function online(d: { id: number; sim: SimulatedDevice }) {
  await d.sim.start();
  await until(async () => (await getCommand('device.get').run({ api }, { id: d.id })).status === 'online');
}

const tasksOf = async (deviceId: number) =>
  (await getCommand('device.tasks').run({ api }, { device_id: deviceId })).data;

describe('device.raw_list', () => {
  it('lists the devices the caller sees, light, by name; search and type narrow it', async () => {
    const tag = uid();
    const sub = await group(api, `Raw ${tag}`, root);
    const a = await register({ domain: sub, name: `Raw ${tag} a` });
    const b = await register({ domain: sub, name: `Raw ${tag} b`, type: 'monitor' });
    const outside = await register({ name: `Raw ${tag} outside` });

    const all = await getCommand('device.raw_list').run({ api }, { search: `raw ${tag}` });
    expect(all.data.map((d) => d.id)).toEqual([a.id, b.id, outside.id]);
    expect(all.data[0]).toEqual({
      id: a.id,
      name: `Raw ${tag} a`,
      serial_number: a.serial,
      type: 'panel',
      status: 'offline',
      protocol: 'mqtt',
      domain_id: sub,
    });
    // by serial number, and by type
    expect(
      (await getCommand('device.raw_list').run({ api }, { search: b.serial.toLowerCase() })).data.map(
        (d) => d.id,
      ),
    ).toEqual([b.id]);
    expect(
      (await getCommand('device.raw_list').run({ api }, { search: tag, type: 'monitor' })).data.map(
        (d) => d.id,
      ),
    ).toEqual([b.id]);
    // `%` is a character, not a wildcard
    expect((await getCommand('device.raw_list').run({ api }, { search: '%' })).data).toEqual([]);

    // a user who sees the subgroup's devices only
    const viewer = await userWith(ts, api, { permissions: ['devices.view'], domains: [sub] });
    const mine = await getCommand('device.raw_list').run({ api: await viewer.client() }, { search: tag });
    expect(mine.data.map((d) => d.id)).toEqual([a.id, b.id]);
  });
});

describe('device.set_protocol', () => {
  it('none stops the open tasks and refuses init, restart, settings, entities and retry', async () => {
    const d = await register();
    // offline: the restart waits
    const { task } = await getCommand('device.restart').run({ api }, { id: d.id });
    expect(task.state).toBe('waiting');

    const set = await getCommand('device.set_protocol').run({ api }, { id: d.id, protocol: 'none' });
    expect(set).toEqual({ id: d.id, protocol: 'none', stopped_tasks: 1 });
    expect((await tasksOf(d.id))[0]).toMatchObject({
      id: task.id,
      state: 'stopped',
      error: 'device_protocol_none',
    });
    expect((await getCommand('device.get').run({ api }, { id: d.id })).protocol).toBe('none');

    for (const id of [
      'device.restart',
      'device.reinit',
      'device.apply_settings',
      'device.init_apply',
    ] as const)
      expect((await failure(getCommand(id).run({ api }, { id: d.id }))).code).toBe('device_protocol_none');
    expect((await failure(getCommand('device.sync_entities').run({ api }, { id: d.id }))).code).toBe(
      'device_protocol_none',
    );
    const retry = await failure(getCommand('device.task_retry').run({ api }, { id: task.id }));
    expect([retry.status, retry.code]).toEqual([409, 'device_protocol_none']);
    expect((await failure(getCommand('device.info').run({ api }, { id: d.id }))).code).toBe(
      'device_protocol_none',
    );
    // a settings change is stored, and makes no task
    await getCommand('device.update').run(
      { api },
      { id: d.id, device_settings: { sip: { talk_timeout: 50 } } },
    );
    expect(await tasksOf(d.id)).toHaveLength(1);

    // audited, with what changed
    const audit = await sql<{
      data: { changes: unknown };
    }>`select data from audit_events where entity = 'device' and entity_id = ${d.id} and action = 'update'
      order by id limit 1`.execute(ts.server.context.db);
    expect(audit.rows[0]!.data.changes).toEqual({ protocol: { from: 'mqtt', to: 'none' } });

    // back on mqtt: the stopped task may be retried, and reaches the device
    await getCommand('device.set_protocol').run({ api }, { id: d.id, protocol: 'mqtt' });
    await online(d);
    await getCommand('device.task_retry').run({ api }, { id: task.id });
    expect(await drain()).toBe(1);
    expect((await tasksOf(d.id)).find((t) => t.id === task.id)).toMatchObject({ state: 'completed' });
    expect(d.sim.applied.restart).toBe(1);
  });

  it('a protocol that is not one is refused (422); an unknown device is not found', async () => {
    const d = await register();
    const bad = await raw(ts, api, 'PUT', `/devices/${d.id}/protocol`, { body: { protocol: 'ftp' } });
    expect(bad.status).toBe(422);
    const missing = await failure(
      getCommand('device.set_protocol').run({ api }, { id: 999_999, protocol: 'http' }),
    );
    expect(missing.code).toBe('item_not_found');
  });
});

describe('device.init_apply and entities', () => {
  it('init sends the settings with management, replacing, then reads what the device holds', async () => {
    const d = await register();
    await online(d);
    d.sim.addIdentifier({
      uid: 'installer-card',
      identifier_type: 'card',
      identifier_number: '100',
      lock: 'all',
    });
    const { tasks } = await getCommand('device.init_apply').run({ api }, { id: d.id });
    expect(tasks.map((t) => t.kind)).toEqual(['init', 'entities']);
    expect(tasks.map((t) => t.state)).toEqual(['queued', 'new']);
    // the init, then the entities task queued as it completes
    expect(await drain()).toBe(2);
    expect((await tasksOf(d.id)).map((t) => t.state)).toEqual(['completed', 'completed']);
    expect(d.sim.applied.reinit).toBe(1);
    expect(d.sim.settings).toMatchObject({
      management: { heartbeat: true, realtime_logging: true },
      sip: { talk_timeout: 120 },
    });
    // the entities task read the device's lists (never a `replace`: what it holds is removed by name, by the
    // planner, tests/devices/access-sync.test.ts)
    expect(d.sim.requests.filter((r) => r.method === 'GET').map((r) => r.uri.split('?')[0])).toEqual([
      '/api/v1/access/identifier/items',
      '/api/v1/access/identifier/time_profiles',
    ]);
    expect(
      d.sim.requests.some(
        (r) => JSON.stringify(r.body ?? null).includes('replace') && r.uri !== '/api/v1/settings',
      ),
    ).toBe(false);
    const ledger = await sql<{ key: string; state: string }>`select key, state from device_access_ledger
      where device_id = ${d.id}`.execute(ts.server.context.db);
    expect(ledger.rows).toEqual([{ key: 'installer-card', state: 'held' }]);
    expect(await getCommand('device.sync_errors').run({ api }, { id: d.id })).toEqual({
      identifiers: [],
      schedules: [],
    });
  });
});

describe('the pool of unregistered devices', () => {
  const heartbeat = (serial: string, password = 'whatever-it-is') =>
    fetch(`${ts.url}/api/v0/device-gateway/heartbeat`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${serial}:${password}`).toString('base64')}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ firmware_version: '3.1.0' }),
    });

  it('an unknown device calling over HTTP is kept; an installer registers it, and it gets in', async () => {
    const serial = `POOL-${uid()}`;
    expect((await heartbeat(serial)).status).toBe(401);
    // a waiting device's heartbeats are written once a minute, not each time (issue 20 item 8)
    clock.advance(POOL_REFRESH_MS);
    expect((await heartbeat(serial)).status).toBe(401);
    const pool = await getCommand('device.pool').run({ api }, {});
    expect(pool.data.find((p) => p.serial_number === serial)).toMatchObject({
      firmware_version: '3.1.0',
      contacts: 2,
      last_seen_at: clock.now().toISOString(),
    });
    // a malformed serial is not kept
    expect((await heartbeat('bad/serial')).status).toBe(401);
    expect((await getCommand('device.pool').run({ api }, {})).data.map((p) => p.serial_number)).not.toContain(
      'bad/serial',
    );

    const sub = await group(api, `Pool ${uid()}`, root);
    const made = await getCommand('device.from_pool').run(
      { api },
      { serial_number: serial, domain_id: sub, name: 'Adopted panel' },
    );
    expect(made).toMatchObject({ name: 'Adopted panel', serial_number: serial });
    const device = await getCommand('device.get').run({ api }, { id: made.id });
    expect(device).toMatchObject({
      domain_id: sub,
      protocol: 'http',
      type: 'panel',
      ip_address: '127.0.0.1',
    });
    expect((await getCommand('device.pool').run({ api }, {})).data.map((p) => p.serial_number)).not.toContain(
      serial,
    );
    // with the credentials Lintel issued it, the device gets in
    const c = await getCommand('device.credentials').run({ api }, { id: made.id });
    expect((await heartbeat(serial, c.password)).status).toBe(200);
    // not twice
    expect(
      (
        await failure(
          getCommand('device.from_pool').run(
            { api },
            { serial_number: serial, domain_id: sub, name: 'Again' },
          ),
        )
      ).code,
    ).toBe('item_not_found');
  });

  it('is capped: past the limit a newcomer is not noted, one already kept is', async () => {
    const db = ts.server.context.db;
    const kept = `KEPT-${uid()}`;
    expect((await heartbeat(kept)).status).toBe(401);
    const have = Number(
      (await sql<{ n: number }>`select count(*)::int as n from device_pool`.execute(db)).rows[0]!.n,
    );
    await sql`insert into device_pool (serial_number) select 'FILL-' || g from generate_series(1, ${POOL_LIMIT - have}) g`.execute(
      db,
    );
    const late = `LATE-${uid()}`;
    expect((await heartbeat(late)).status).toBe(401);
    clock.advance(POOL_REFRESH_MS);
    expect((await heartbeat(kept)).status).toBe(401);
    const rows = await sql<{
      serial_number: string;
      contacts: number;
    }>`select serial_number, contacts from device_pool where serial_number in (${kept}, ${late})`.execute(db);
    expect(rows.rows).toEqual([{ serial_number: kept, contacts: 2 }]);
    await sql`delete from device_pool where serial_number like 'FILL-%'`.execute(db);
  });
});
