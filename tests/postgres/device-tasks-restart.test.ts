/**
 * Device tasks and events outlive the server (and its embedded broker): tasks made on one server — one
 * queued for an online device, one waiting for an offline one — are completed by a new server on the same
 * PostgreSQL database once the devices reach it, each applied once; a card presented while the server is
 * down opens the door all the same (the device decides from what was synced to it), and its event reaches
 * the new server: no event lost, none stored twice. Runs in the PostgreSQL pass (DATABASE_URL set).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { SimulatedDevice } from '@lintel/device-sim';
import { freshDatabase, startTestServer, type TestServer } from '../support/server';
import { admin, rootGroup, signIn, uid } from '../support/fixtures';
import { until } from '../devices/mqtt-clients';

// no job worker: what runs is what the test drains
const config = {
  modules: ['events', 'devices', 'http'],
  mqtt: { port: 0, host: '127.0.0.1', shared: false, requestTimeoutMs: 2_000, sweepMs: 0 },
};
let database: Awaited<ReturnType<typeof freshDatabase>> | undefined;
const servers: TestServer[] = [];
const sims: SimulatedDevice[] = [];

afterAll(async () => {
  await Promise.all(sims.map((s) => s.stop().catch(() => undefined)));
  for (const s of servers) await s.close().catch(() => undefined);
  await database?.drop();
});

async function simFor(api: ApiClient, id: number, serial: string) {
  const c = await getCommand('device.credentials').run({ api }, { id });
  return { protocol: 'mqtt' as const, url: c.mqtt.url, login: c.login, password: c.password, serial };
}

describe('device tasks across a server restart', () => {
  it('the pending tasks complete on a new server on the same database', async () => {
    database = await freshDatabase();
    const a = await startTestServer({ database: database.url, config });
    servers.push(a);
    let api = await admin(a);
    const root = await rootGroup(api);
    const make = async () => {
      const serial = `RST-${uid()}`;
      const { data } = await getCommand('device.create').run(
        { api },
        { name: serial, type: 'panel', serial_number: serial, domain_id: root, protocol: 'mqtt' },
      );
      return { id: data.id, serial };
    };
    const status = async (id: number) => (await getCommand('device.get').run({ api }, { id })).status;
    const on = await make();
    const off = await make();
    const m = await simFor(api, on.id, on.serial);
    const simOn = new SimulatedDevice({ serial: on.serial, management: m, heartbeatMs: 0 });
    sims.push(simOn);
    await simOn.start();
    await until(async () => (await status(on.id)) === 'online');

    simOn.addIdentifier({ identifier_type: 'card', identifier_number: '4242', lock: 'all' });
    const before = await simOn.presentCard('4242', 1);
    expect(before).toMatchObject({ granted: true, acknowledged: true });

    const queued = (await getCommand('device.restart').run({ api }, { id: on.id })).task;
    const waiting = (await getCommand('device.apply_settings').run({ api }, { id: off.id })).task;
    expect([queued.state, waiting.state]).toEqual(['queued', 'waiting']);
    // the server (and its broker) goes before anything was sent
    await a.close();
    await simOn.kill();
    expect(simOn.applied.restart).toBe(0);
    // the platform is down: the door opens all the same, and the device keeps the event
    const during = await simOn.presentCard('4242', 1);
    expect(during).toMatchObject({ granted: true, acknowledged: false });
    expect(simOn.locks[1].opened).toBe(2);
    expect(simOn.pendingLogs).toHaveLength(1);
    const kept = { ...simOn.pendingLogs[0]! };

    const b = await startTestServer({ database: database.url, config });
    servers.push(b);
    // the administrator made by the first server
    api = await signIn(b, a.adminLogin, a.adminPassword);
    // the devices reach the new server's broker
    Object.assign(simOn.opts, { management: await simFor(api, on.id, on.serial) });
    await simOn.start();
    const simOff = new SimulatedDevice({
      serial: off.serial,
      management: await simFor(api, off.id, off.serial),
      heartbeatMs: 0,
    });
    sims.push(simOff);
    await simOff.start();
    await until(async () => (await status(off.id)) === 'online');
    expect(await b.server.context.jobs.drain()).toBe(2);

    const states = async () =>
      (await getCommand('device.tasks').run({ api }, {})).data.map((t) => [t.id, t.state, t.attempts]);
    expect(await states()).toEqual([
      [waiting.id, 'completed', 1],
      [queued.id, 'completed', 1],
    ]);
    expect(simOn.applied.restart).toBe(1);
    expect(simOff.applied.settings).toBe(1);

    // the kept event goes with the next heartbeat; sent once more, it is still stored once
    await simOn.heartbeat();
    const events = async () =>
      (
        await getCommand('device_event.list').run(
          { api },
          { filters: [{ field: 'device', rule: 'equals', value: String(on.id) }] },
        )
      ).data.map((e) => e.event_id);
    await until(async () => (await events()).length === 2);
    // acknowledged once stored
    await until(async () => simOn.pendingLogs.length === 0);
    simOn.pendingLogs.push(kept);
    expect(await simOn.flushLogs()).toBe(true);
    expect((await events()).sort()).toEqual([before.event_id, during.event_id].sort());
  });
});
