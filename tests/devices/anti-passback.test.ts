/**
 * Anti-passback areas (issue 21 item 8) against a real server and simulated panels: an area of an entry panel
 * and an exit panel; a guest pass that entered (its door opened by the server after the one decision) is
 * refused a second entry with the catalogue's `anti_passback` until it left, and may enter again once it left;
 * the passages are ACS events; the access matrix shows the pass refused at the entry while it is inside; a
 * panel that refused the pass (it does not hold it) gets the reason from the platform's decision; the area's
 * reset lets a passage lapse (the server's clock moved, never slept).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { ManualClock } from '@lintel/server';
import { SimulatedDevice } from '@lintel/device-sim';
import { startTestServer, type TestServer } from '../support/server';
import { admin, everyFeatureOn, licence, raw, rootGroup, uid } from '../support/fixtures';
import { until } from './mqtt-clients';

const clock = new ManualClock(Date.parse('2026-11-27T10:00:00Z'));
let ts: TestServer;
let api: ApiClient;
let root: number;
const sims: SimulatedDevice[] = [];
const cmd = getCommand;

beforeAll(async () => {
  ts = await startTestServer({
    config: {
      clock,
      modules: ['events', 'devices', 'http'],
      mqtt: { port: 0, host: '127.0.0.1', shared: false, requestTimeoutMs: 2000, sweepMs: 0 },
      rateLimits: { guest_open: { limit: 100, windowS: 60 } },
    },
  });
  api = await admin(ts);
  root = await rootGroup(api);
  await licence(ts, everyFeatureOn());
});
afterAll(async () => {
  await Promise.all(sims.map((s) => s.stop().catch(() => undefined)));
  await ts?.close();
});

/** A panel on mqtt, its simulator on the server's clock, online. */
async function panel(name: string) {
  const serial = `APB-${uid()}`;
  const { data } = await cmd('device.create').run(
    { api },
    {
      name: `${name} ${serial}`,
      type: 'panel',
      serial_number: serial,
      domain_id: root,
      protocol: 'mqtt',
      device_login: 'admin',
      device_password: 'panel-secret',
    },
  );
  const c = await cmd('device.credentials').run({ api }, { id: data.id });
  const sim = new SimulatedDevice({
    serial,
    management: { protocol: 'mqtt', url: c.mqtt.url, login: c.login, password: c.password },
    heartbeatMs: 0,
    now: () => clock.now().getTime(),
  });
  sims.push(sim);
  await sim.start();
  await until(async () => (await cmd('device.get').run({ api }, { id: data.id })).status === 'online');
  return { id: data.id, name: data.name, sim };
}

const period = (from: string, to: string) => ({ from, to, from_u: `${from}Z`, to_u: `${to}Z` });
const info = (k: string) => raw(ts, null, 'GET', `/guest-access/key/${k}`);
const open = (k: string, device: string) =>
  raw(ts, null, 'POST', `/guest-access/key/${k}/open`, { body: { device } });

describe('anti-passback per area', () => {
  let entry: Awaited<ReturnType<typeof panel>>;
  let exit: Awaited<ReturnType<typeof panel>>;
  let area: number;
  let pass: { key_id: string; data: { id: number; value: string } };
  const tokens: Record<'in' | 'out', string> = { in: '', out: '' };

  it('is a family: an area of entry and exit devices, listed with them', async () => {
    entry = await panel('Turnstile in');
    exit = await panel('Turnstile out');
    const made = await cmd('access_area.create').run({ api }, {
      name: `Lobby ${uid()}`,
      entry_devices: [entry.id],
      exit_devices: [exit.id],
    } as never);
    area = made.data.id;
    expect(made.data).toMatchObject({
      entry_devices: [{ id: entry.id, name: entry.name }],
      exit_devices: [{ id: exit.id, name: exit.name }],
      reset_after_min: null,
    });
    const rule = (
      await cmd('access_rule.create').run({ api }, {
        name: `Lobby guests ${uid()}`,
        devices: [entry.id, exit.id],
        is_shareable: true,
      } as never)
    ).data.id;
    pass = (await cmd('guest_access.create').run({ api }, {
      selectedAccessRules: [rule],
      restrictPeriod: true,
      validatePeriod: period('2026-11-27T09:00:00', '2026-11-27T18:00:00'),
      restrictPassCount: false,
    } as never)) as typeof pass;
    const doors = (await info(pass.key_id)).body.devices as Array<{ name: string; token: string }>;
    tokens.in = doors.find((d) => d.name === entry.name)!.token;
    tokens.out = doors.find((d) => d.name === exit.name)!.token;
  });

  it('refuses a second entry before an exit, and lets in again once it left', async () => {
    expect((await open(pass.key_id, tokens.in)).status).toBe(200);
    const again = await open(pass.key_id, tokens.in);
    expect([again.status, again.body.message]).toEqual([403, 'anti_passback']);
    expect(entry.sim.locks[1].opened).toBe(1);

    // inside: the matrix says so at the entry, not at the exit
    const matrix = async () =>
      new Map(
        (await cmd('access_matrix.list').run({ api }, { type: 'qr', limit: 1000 } as never)).data
          .filter((r) => r.identifier.id === pass.data.id)
          .map((r) => [r.device.id, r.reason]),
      );
    expect(await matrix()).toEqual(
      new Map([
        [entry.id, 'anti_passback'],
        [exit.id, null],
      ]),
    );

    clock.advance(60_000);
    expect((await open(pass.key_id, tokens.out)).status).toBe(200);
    // left: not again by the exit, but in by the entry
    expect((await open(pass.key_id, tokens.out)).body.message).toBe('anti_passback');
    expect(await matrix()).toEqual(
      new Map([
        [entry.id, null],
        [exit.id, 'anti_passback'],
      ]),
    );
    clock.advance(60_000);
    expect((await open(pass.key_id, tokens.in)).status).toBe(200);
    expect([entry.sim.locks[1].opened, exit.sim.locks[1].opened]).toEqual([2, 1]);

    // each passage is in the ACS log, granted, naming the door and the rule
    const log = await sql<{ device_id: number; decision: string; rule_id: number | null }>`
      select device_id, decision, rule_id from acs_events where identifier_id = ${pass.data.id}
      order by created_at, id`.execute(ts.server.context.db);
    expect(log.rows.map((r) => [r.device_id, r.decision])).toEqual([
      [entry.id, 'granted'],
      [exit.id, 'granted'],
      [entry.id, 'granted'],
    ]);
    expect(log.rows.every((r) => r.rule_id !== null)).toBe(true);
  });

  it('names anti-passback as the reason a panel refused a pass that is inside', async () => {
    clock.advance(60_000);
    // the panel holds no guest passes (nothing synced it): it refuses an unknown one; the platform says why
    const r = await entry.sim.presentCard(pass.data.value, 1, 'qr');
    expect(r).toMatchObject({ granted: false, acknowledged: true });
    const logged = await sql<{ decision: string; reason: string | null }>`
      select decision, reason from acs_events where event_id = ${r.event_id}`.execute(ts.server.context.db);
    expect(logged.rows).toEqual([{ decision: 'denied', reason: 'anti_passback' }]);
  });

  it('lets a passage lapse after the area reset time', async () => {
    await cmd('access_area.update').run({ api }, { id: area, reset_after_min: 5 } as never);
    expect((await open(pass.key_id, tokens.in)).body.message).toBe('anti_passback');
    clock.advance(5 * 60_000);
    expect((await open(pass.key_id, tokens.in)).status).toBe(200);
    expect((await open(pass.key_id, tokens.in)).body.message).toBe('anti_passback');
  });

  it('stops counting when the area is deleted', async () => {
    await cmd('access_area.delete').run({ api }, { id: area });
    expect((await open(pass.key_id, tokens.in)).status).toBe(200);
  });
});
