/**
 * Issue 21 item 4, the sync to the devices, against the real gateway (the embedded broker): a device client
 * that is not ours (MQTT.js acting as a panel) receives an identifier given a rule on it, and its revocation,
 * as requests of the identifier API of ../shared/DEVICES.md — never a `replace`; a rule change touching many
 * identifiers is a few batch tasks per device carrying only the difference, and nothing when nothing
 * changed; a batch whose reply was lost is sent again and applied once; what a device refuses is a sync error
 * (not sent again until it changes or a resync); a full resync reads the device's own list and leaves it
 * holding exactly what the rules give. The simulator decides at the door from what it holds alone (its own
 * clock: a weekday window, a holiday, a pass limit, a revoke) and its decisions come back as the ACS log.
 * The job worker and the planner's timer do not run: `poll()` plans, `jobs.drain()` sends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import mqtt from 'mqtt';
import { getCommand } from '@lintel/commands';
import { deviceTopics, type ApiClient } from '@lintel/core';
import { ManualClock, backoffS } from '@lintel/server';
import type { SimulatedDevice } from '@lintel/device-sim';
import { startTestServer, type TestServer } from '../support/server';
import { admin, rootGroup, uid, userWith } from '../support/fixtures';
import { until } from './mqtt-clients';
import { settleAccessSync, simulatedPanel } from './panels';

const clock = new ManualClock(new Date('2026-11-25T08:00:00Z'));
let ts: TestServer;
let api: ApiClient;
let root: number;
let projectId: number;
const sims: SimulatedDevice[] = [];
const clients: mqtt.MqttClient[] = [];

beforeAll(async () => {
  ts = await startTestServer({
    config: {
      clock,
      modules: ['events', 'devices', 'http'],
      mqtt: {
        port: 0,
        host: '127.0.0.1',
        shared: false,
        requestTimeoutMs: 2_000,
        sweepMs: 0,
        taskAttempts: 3,
      },
      accessSync: { pollMs: 0, batchSize: 250, window: 16 },
    },
  });
  api = await admin(ts);
  root = await rootGroup(api);
  projectId = Number(
    (await sql<{ id: number }>`select project_id as id from domains where id = ${root}`.execute(db()))
      .rows[0]!.id,
  );
});
afterAll(async () => {
  await Promise.all(sims.map((s) => s.stop().catch(() => undefined)));
  await Promise.all(clients.map((c) => c.endAsync(true).catch(() => undefined)));
  await ts?.close();
});

const db = () => ts.server.context.db;
const cmd = getCommand;

const sync = () => settleAccessSync(ts);

async function device(serial = `ACS-${uid()}`) {
  const { data } = await cmd('device.create').run({ api }, {
    name: `Door ${serial}`,
    type: 'panel',
    serial_number: serial,
    domain_id: root,
    protocol: 'mqtt',
  } as never);
  const c = await cmd('device.credentials').run({ api }, { id: data.id });
  return { id: data.id, serial, credentials: c };
}

const simulated = () => simulatedPanel(api, { domain: root, sims, prefix: 'ACS' });

const digits = () => String(Math.floor(Math.random() * 9e9) + 1e8);
const card = async (extra: Record<string, unknown> = {}) =>
  (await cmd('identifier.create').run({ api }, { type: 'card', value: digits(), ...extra } as never)).data;
const rule = async (body: Record<string, unknown>) =>
  (await cmd('access_rule.create').run({ api }, { name: `Rule ${uid()}`, ...body } as never)).data;

/** Cards made straight in the table (as an import or a restored backup would): the triggers see them all the same. */
async function bulkCards(n: number): Promise<number[]> {
  const r = await sql<{ id: number }>`insert into identifiers (project_id, name, type, value)
    select ${projectId}, 'bulk ' || g, 'card', (${Math.floor(Math.random() * 1e6) * 10_000}::bigint + g)::text
    from generate_series(1, ${n}) g returning id`.execute(db());
  return r.rows.map((x) => Number(x.id));
}

const heldUids = (sim: SimulatedDevice) => [...sim.identifiers.keys()].sort();
const expected = (ids: number[]) => ids.map((i) => `identifier-${i}`).sort();

describe('a device that is not ours', () => {
  it('receives an identifier given a rule on it, and its revocation, as identifier API requests', async () => {
    const d = await device();
    const topics = deviceTopics(d.serial);
    const panel = await mqtt.connectAsync(d.credentials.mqtt.url, {
      clientId: d.serial,
      username: d.credentials.login,
      password: d.credentials.password,
      clean: true,
      reconnectPeriod: 0,
    });
    clients.push(panel);
    const got: Array<{ request_id: string; method: string; uri: string; body: unknown }> = [];
    panel.on('message', (topic, payload) => {
      if (topic !== topics.request) return;
      const req = JSON.parse(payload.toString()) as (typeof got)[number];
      got.push(req);
      const body = req.method === 'GET' ? { items: [], total: 0, page: 1, limit: 500 } : { applied: true };
      void panel.publishAsync(
        topics.response,
        JSON.stringify({ request_id: req.request_id, status: 200, body }),
        {
          qos: 1,
        },
      );
    });
    await panel.subscribeAsync(topics.request, { qos: 1 });
    await panel.publishAsync(topics.status, 'online', { qos: 1, retain: true });
    await until(async () => (await cmd('device.get').run({ api }, { id: d.id })).status === 'online');

    const owner = `Ann ${uid()}`;
    const user = await userWith(ts, api, { permissions: [], domains: [root], name: owner });
    const id = await card({ owner: user.id });
    await rule({ devices: [d.id], users: [user.id] });
    await sync();
    const put = got.filter((r) => r.method === 'PUT');
    expect(put.map((r) => r.uri)).toEqual([`/api/v1/access/identifier/item/identifier-${id.id}`]);
    expect(put[0]!.body).toMatchObject({
      uid: `identifier-${id.id}`,
      identifier_owner: { name: owner, type: 'owner' },
      identifier_type: 'card',
      identifier_number: id.value,
      lock: 'all',
      valid: { time: { is_permanent: true }, passes: { is_permanent: true } },
      time_profiles: [],
    });
    expect(put[0]!.request_id).toMatch(/^task-\d+-0$/);

    await cmd('identifier.revoke').run({ api }, { id: id.id });
    await sync();
    expect(got.filter((r) => r.method === 'DELETE').map((r) => r.uri)).toEqual([
      `/api/v1/access/identifier/item/identifier-${id.id}`,
    ]);
    // no request of the sync ever said `replace`, nor went to the old wholesale uri
    expect(got.some((r) => JSON.stringify(r.body ?? null).includes('replace'))).toBe(false);
    expect(got.some((r) => r.uri.startsWith('/api/v1/access/sync'))).toBe(false);
    const tasks = (await cmd('device.tasks').run({ api }, { device_id: d.id })).data;
    expect(tasks.every((t) => t.kind === 'entities' && t.state === 'completed')).toBe(true);
  });
});

describe('the difference, batched, idempotent', () => {
  it(
    'a rule over 600 identifiers is three tasks per device (batches of 250); an unchanged plan sends nothing',
    { timeout: 240_000 },
    async () => {
      const a = await simulated();
      const b = await simulated();
      const ids = await bulkCards(600);
      const r = await rule({ devices: [a.id, b.id], identifiers: ids });
      const planned = await ts.server.context.accessSync.poll();
      expect(planned.reduce((s, o) => s + o.tasks, 0)).toBe(6);
      expect(planned.reduce((s, o) => s + o.requests, 0)).toBe(1200);
      await sync();
      expect(heldUids(a.sim)).toEqual(expected(ids));
      expect(heldUids(b.sim)).toEqual(expected(ids));
      expect([a.sim.writes, b.sim.writes]).toEqual([600, 600]);

      // a change that changes no device's holding (the rule renamed) plans nothing
      await cmd('access_rule.update').run({ api }, { id: r.id, name: `Renamed ${uid()}` } as never);
      const none = await ts.server.context.accessSync.poll();
      expect(none.reduce((s, o) => s + o.requests, 0)).toBe(0);

      // a schedule on the rule changes every item (its time profile): one profile and 600 items per device
      const s = (
        await cmd('schedule.create').run({ api }, {
          name: `Weekdays ${uid()}`,
          valid_from: '2026-01-01',
          repeat_days: ['mon', 'tue', 'wed', 'thu', 'fri'],
        } as never)
      ).data;
      await cmd('access_rule.update').run({ api }, { id: r.id, time_rules: [s.id] } as never);
      const again = await ts.server.context.accessSync.poll();
      expect(again.reduce((sum, o) => sum + o.requests, 0)).toBe(2 * 601);
      await sync();
      expect(a.sim.timeProfiles.has(`schedule-${s.id}`)).toBe(true);
      expect(a.sim.identifiers.get(`identifier-${ids[0]}`)!.time_profiles).toEqual([`schedule-${s.id}`]);

      // one identifier removed from the rule: one DELETE per device, nothing else
      const before = [a.sim.writes, b.sim.writes];
      await cmd('access_rule.update').run({ api }, { id: r.id, identifiers: ids.slice(1) } as never);
      await sync();
      expect([a.sim.writes - before[0]!, b.sim.writes - before[1]!]).toEqual([1, 1]);
      expect(heldUids(a.sim)).toEqual(expected(ids.slice(1)));
      expect(a.sim.requests.filter((q) => q.method === 'DELETE').map((q) => q.uri)).toEqual([
        `/api/v1/access/identifier/item/identifier-${ids[0]}`,
      ]);
    },
  );

  it('a batch whose reply was lost is sent again with the same request ids and applied once', async () => {
    const d = await simulated();
    const ids = [(await card()).id, (await card()).id];
    await rule({ devices: [d.id], identifiers: ids });
    await ts.server.context.accessSync.poll();
    // the device applies the batch but its replies are lost: the task is retried after its back-off
    d.sim.fault = 'mute';
    expect(await ts.server.context.jobs.drain()).toBe(1);
    expect(d.sim.writes).toBe(2);
    d.sim.fault = 'none';
    clock.advance(60_000);
    await sync();
    const [task] = (await cmd('device.tasks').run({ api }, { device_id: d.id })).data;
    expect(task).toMatchObject({ kind: 'entities', state: 'completed', attempts: 2 });
    // sent twice, applied once: a device counting its writes counted two
    expect(d.sim.requests.filter((q) => q.method === 'PUT')).toHaveLength(4);
    expect(d.sim.writes).toBe(2);
    expect(heldUids(d.sim)).toEqual(expected(ids));
  });
});

describe('a batch that failed for good', () => {
  it('is planned again after a back-off: the device gets what it carried without another change', async () => {
    const { jobs, accessSync } = ts.server.context;
    const d = await simulated();
    const ids = [(await card()).id, (await card()).id];
    await rule({ devices: [d.id], identifiers: ids });
    await accessSync.poll();
    // the device answers nothing: each attempt times out, and after the last (3 here) the batch is an error
    d.sim.fault = 'silent';
    const batch = async () => (await cmd('device.tasks').run({ api }, { device_id: d.id })).data[0]!;
    for (let attempt = 1; attempt <= 3; attempt++) {
      if (attempt > 1) clock.advance(backoffS(jobs.settings, attempt - 1) * 1000);
      expect(await jobs.drain()).toBe(1);
    }
    expect(await batch()).toMatchObject({ kind: 'entities', state: 'error', attempts: 3 });
    d.sim.fault = 'none';
    expect(heldUids(d.sim)).toEqual([]);
    // nothing changed since: before the back-off nothing is planned
    clock.advance(299_000);
    await sync();
    expect(heldUids(d.sim)).toEqual([]);
    // the back-off's end asks for a new plan, which sends the batch's cards again
    clock.advance(1_000);
    await sync();
    expect(heldUids(d.sim)).toEqual(expected(ids));
    expect(await batch()).toMatchObject({ kind: 'entities', state: 'completed' });
  });
});

describe('refusals and the full resync', () => {
  it('what the device refuses is a sync error, not sent again until a resync; a resync leaves exactly the rules', async () => {
    const d = await simulated();
    const ids = [(await card()).id, (await card()).id, (await card()).id];
    const refused = `identifier-${ids[1]}`;
    d.sim.refuse.add(refused);
    const r = await rule({ devices: [d.id], identifiers: ids });
    await sync();
    expect(heldUids(d.sim)).toEqual(expected([ids[0]!, ids[2]!]));
    const errors = await cmd('device.sync_errors').run({ api }, { id: d.id });
    expect(errors.identifiers.map((e) => [e.key, e.error])).toEqual([
      [refused, '422: refused by the device'],
    ]);

    // another change does not send the refused item again
    const more = (await card()).id;
    await cmd('access_rule.update').run({ api }, { id: r.id, identifiers: [...ids, more] } as never);
    await sync();
    expect(d.sim.requests.filter((q) => q.uri.endsWith(refused))).toHaveLength(1);

    // the panel lost a card, an installer added one of his own, and it takes the refused one now
    d.sim.identifiers.delete(`identifier-${ids[0]}`);
    d.sim.addIdentifier({
      uid: 'installer-card',
      identifier_type: 'card',
      identifier_number: '77',
      lock: 'all',
    });
    d.sim.refuse.clear();
    const { task } = await cmd('device.sync_entities').run({ api }, { id: d.id });
    expect(task.kind).toBe('entities');
    await sync();
    expect(heldUids(d.sim)).toEqual(expected([...ids, more]));
    expect((await cmd('device.sync_errors').run({ api }, { id: d.id })).identifiers).toEqual([]);
    expect(d.sim.requests.some((q) => JSON.stringify(q.body ?? null).includes('replace'))).toBe(false);
  });
});

describe('the simulator at the door and the ACS log', () => {
  it('decides from what it holds on its own clock; each decision comes back as an ACS event with its reason', async () => {
    const d = await simulated();
    const s = (
      await cmd('schedule.create').run({ api }, {
        name: `Office ${uid()}`,
        valid_from: '2026-01-01',
        repeat_days: ['mon', 'tue', 'wed', 'thu', 'fri'],
      } as never)
    ).data;
    const id = await card();
    const guest = await card({ passes_restrict_active: true, passes_restrict_max_count: 2 });
    await rule({ devices: [d.id], identifiers: [id.id], time_rules: [s.id] });
    await rule({ devices: [d.id], identifiers: [guest.id] });
    await cmd('holiday.create').run({ api }, { name: `Day off ${uid()}`, date: '2026-12-02' } as never);
    await sync();
    // Wednesday 25 November 2026, 10:00 and 19:00 in the project's zone (UTC+2); Wednesday 2 December, a holiday
    d.sim.setClock('2026-11-25T08:00:00Z');
    expect(await d.sim.presentCard(id.value)).toMatchObject({ granted: true, acknowledged: true });
    d.sim.setClock('2026-11-25T17:00:00Z');
    expect(await d.sim.presentCard(id.value)).toMatchObject({ granted: false, reason: 'outside_schedule' });
    d.sim.setClock('2026-12-02T08:00:00Z');
    expect(await d.sim.presentCard(id.value)).toMatchObject({ granted: false, reason: 'holiday' });
    // a pass limit of 2: twice, then refused
    d.sim.setClock('2026-11-25T08:00:00Z');
    expect((await d.sim.presentCard(guest.value)).granted).toBe(true);
    expect((await d.sim.presentCard(guest.value)).granted).toBe(true);
    expect(await d.sim.presentCard(guest.value)).toMatchObject({
      granted: false,
      reason: 'pass_limit_reached',
    });
    expect((await cmd('identifier.get').run({ api }, { id: guest.id })).passes_count).toBe(2);
    // revoked: the panel no longer holds it; the log says why
    await cmd('identifier.revoke').run({ api }, { id: id.id });
    await sync();
    expect(d.sim.identifiers.has(`identifier-${id.id}`)).toBe(false);
    expect(await d.sim.presentCard(id.value)).toMatchObject({ granted: false, reason: 'unknown' });

    // in the order they were stored (their times are the device's clock, which the test moved about)
    const log = (
      await cmd('acs_event.list').run({ api }, {
        filters: [{ field: 'device', rule: 'equals', value: d.id }],
      } as never)
    ).data.sort((x, y) => x.id - y.id);
    expect(log.map((e) => [e.identifier_number, e.decision, e.reason])).toEqual([
      [id.value, 'granted', null],
      [id.value, 'denied', 'outside_schedule'],
      [id.value, 'denied', 'holiday'],
      [guest.value, 'granted', null],
      [guest.value, 'granted', null],
      [guest.value, 'denied', 'pass_limit_reached'],
      [id.value, 'denied', 'identifier_revoked'],
    ]);
    expect(log[0]).toMatchObject({ device: { id: d.id }, identifier: { id: id.id }, owner_type: 'user' });
    expect(log[0]!.rule).not.toBeNull();
  });

  it('keeps a pass limit across panels: a pass at one leaves the other what is left of the limit', async () => {
    const a = await simulated();
    const b = await simulated();
    const limited = await card({ passes_restrict_active: true, passes_restrict_max_count: 2 });
    await rule({ devices: [a.id, b.id], identifiers: [limited.id] });
    await sync();
    for (const d of [a, b]) d.sim.setClock('2026-11-25T08:00:00Z');
    // one pass at each panel: the limit of 2 is reached, whichever panel counted them
    expect((await a.sim.presentCard(limited.value)).granted).toBe(true);
    await sync();
    expect((await b.sim.presentCard(limited.value)).granted).toBe(true);
    await sync();
    expect((await cmd('identifier.get').run({ api }, { id: limited.id })).passes_count).toBe(2);
    for (const d of [a, b])
      expect(await d.sim.presentCard(limited.value)).toMatchObject({
        granted: false,
        reason: 'pass_limit_reached',
      });
    expect((await cmd('identifier.get').run({ api }, { id: limited.id })).passes_count).toBe(2);
    // the limit raised to 3: one pass more, at either panel
    await cmd('identifier.update').run({ api }, { id: limited.id, passes_restrict_max_count: 3 } as never);
    await sync();
    expect((await b.sim.presentCard(limited.value)).granted).toBe(true);
    await sync();
    expect(await a.sim.presentCard(limited.value)).toMatchObject({
      granted: false,
      reason: 'pass_limit_reached',
    });
    expect((await cmd('identifier.get').run({ api }, { id: limited.id })).passes_count).toBe(3);
  });

  it('keeps a pass limit when a panel lost its counter with the item: its passes count as elsewhere', async () => {
    const d = await simulated();
    const limited = await card({ passes_restrict_active: true, passes_restrict_max_count: 2 });
    const r = await rule({ devices: [d.id], identifiers: [limited.id] });
    await sync();
    d.sim.setClock('2026-11-25T08:00:00Z');
    expect((await d.sim.presentCard(limited.value)).granted).toBe(true);
    // the rule gone, the panel removes the item (and its counter); back, it holds what is left of the limit
    await cmd('access_rule.delete').run({ api }, { id: r.id });
    await sync();
    expect(d.sim.identifiers.has(`identifier-${limited.id}`)).toBe(false);
    await rule({ devices: [d.id], identifiers: [limited.id] });
    await sync();
    expect((await d.sim.presentCard(limited.value)).granted).toBe(true);
    expect(await d.sim.presentCard(limited.value)).toMatchObject({
      granted: false,
      reason: 'pass_limit_reached',
    });
    expect((await cmd('identifier.get').run({ api }, { id: limited.id })).passes_count).toBe(2);

    // a limit of 4, two passes more; then the panel loses the item by itself and a resync reads its list:
    // given again, it holds what is left (none of its lost counter)
    await cmd('identifier.update').run({ api }, { id: limited.id, passes_restrict_max_count: 4 } as never);
    await sync();
    expect((await d.sim.presentCard(limited.value)).granted).toBe(true);
    d.sim.identifiers.delete(`identifier-${limited.id}`);
    await cmd('device.sync_entities').run({ api }, { id: d.id });
    await sync();
    expect((await d.sim.presentCard(limited.value)).granted).toBe(true);
    expect(await d.sim.presentCard(limited.value)).toMatchObject({
      granted: false,
      reason: 'pass_limit_reached',
    });
    expect((await cmd('identifier.get').run({ api }, { id: limited.id })).passes_count).toBe(4);
  });
});
