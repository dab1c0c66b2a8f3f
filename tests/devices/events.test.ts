/**
 * Device events (issue 16 item 7): what devices push, over HTTP (Basic auth) and over MQTT (`mosquitto_pub`
 * as the device, through the machine's Mosquitto and the embedded broker), stored once per device event id,
 * answered only once stored, filtered with the lists' language, exported, scoped by the device's group, sent
 * live on `private-devices` to the consoles that may read them and no others. Bad pushes are refused with a
 * catalogue code and never crash the server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { getCommand, type DeviceEvent } from '@lintel/commands';
import { deviceTopics, type ApiClient } from '@lintel/core';
import { ManualClock, deviceEventStore, retentionKind } from '@lintel/server';
import { startTestServer, type TestServer } from '../support/server';
import { admin, failure, group, raw, rootGroup, tokenOf, uid, userWith } from '../support/fixtures';
import { RawSocket } from '../support/ws';
import { mosquittoPub, mosquittoSub, type BrokerAddress } from './mqtt-clients';

/** A 1×1 PNG. */
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

interface Dev {
  id: number;
  serial: string;
  login: string;
  password: string;
  broker: BrokerAddress;
}

async function makeDevice(
  api: ApiClient,
  domain: number,
  protocol: 'http' | 'mqtt',
  mosquitto: boolean,
): Promise<Dev> {
  const serial = `EV-${uid()}`;
  const { data } = await getCommand('device.create').run(
    { api },
    { name: `Panel ${serial}`, type: 'panel', serial_number: serial, domain_id: domain, protocol },
  );
  const c = await getCommand('device.credentials').run({ api }, { id: data.id });
  const url = new URL(c.mqtt.url);
  const broker: BrokerAddress = mosquitto
    ? { host: '127.0.0.1', port: 1883 }
    : { host: url.hostname, port: Number(url.port), username: c.login, password: c.password };
  return { id: data.id, serial, login: c.login, password: c.password, broker };
}

/** A push over HTTP, as a device sends it: `POST /api/v0/device-gateway/logs` with Basic auth. */
async function pushHttp(ts: TestServer, d: Pick<Dev, 'login' | 'password'>, body: unknown) {
  const res = await fetch(`${ts.url}/api/v0/device-gateway/logs`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Basic ${Buffer.from(`${d.login}:${d.password}`).toString('base64')}`,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const card = (event_id: string, number: string, extra: Record<string, unknown> = {}) => ({
  event_id,
  kind: 'identifier_used',
  identifier_type: 'card',
  identifier_number: number,
  lock: 1,
  result: 'granted',
  ...extra,
});

const list = (
  api: ApiClient,
  args: Parameters<ReturnType<typeof getCommand<'device_event.list'>>['run']>[1],
) => getCommand('device_event.list').run({ api }, args);

describe('device events over HTTP', () => {
  let ts: TestServer;
  let api: ApiClient;
  let root: number;

  beforeAll(async () => {
    ts = await startTestServer();
    api = await admin(ts);
    root = await rootGroup(api);
  });
  afterAll(async () => {
    await ts?.close();
  });

  it('stores what a device pushes, once per event id: a push sent again is answered and stored once', async () => {
    const d = await makeDevice(api, root, 'http', false);
    const n = uid();
    const push = {
      events: [
        card(`${n}-1`, '1234567', { time: '2026-01-02T03:04:05.000Z' }),
        {
          event_id: `${n}-2`,
          kind: 'identifier_refused',
          identifier_type: 'inputCode',
          identifier_number: '999',
          lock: 2,
          result: 'denied',
          reason: 'unknown',
        },
      ],
    };
    const first = await pushHttp(ts, d, push);
    expect(first).toEqual({ status: 200, body: { stored: [`${n}-1`, `${n}-2`], duplicates: 0 } });
    // the acknowledgement was lost: the device sends the same push again
    const again = await pushHttp(ts, d, push);
    expect(again).toEqual({ status: 200, body: { stored: [`${n}-1`, `${n}-2`], duplicates: 2 } });
    const got = await list(api, {
      filters: [{ field: 'device', rule: 'equals', value: String(d.id) }],
    });
    expect(got.meta.total).toBe(2);
    const [refused, used] = got.data as [DeviceEvent, DeviceEvent];
    expect(used).toMatchObject({
      device: { id: d.id, name: `Panel ${d.serial}` },
      serial_number: d.serial,
      domain: { id: root },
      kind: 'identifier_used',
      identifier_type: 'card',
      identifier_number: '1234567',
      lock: 1,
      result: 'granted',
      created_at: '2026-01-02T03:04:05.000Z',
      event_id: `${n}-1`,
      image: null,
    });
    // the device's word for an identifier type is the platform's
    expect(refused).toMatchObject({
      kind: 'identifier_refused',
      identifier_type: 'access_code',
      reason: 'unknown',
    });
  });

  it('keeps an event’s picture under /storage/logs/ and serves it by a signed URL', async () => {
    const d = await makeDevice(api, root, 'http', false);
    const reply = await pushHttp(ts, d, { events: [card(`img-${uid()}`, '42', { image: PNG })] });
    expect(reply.status).toBe(200);
    const got = await list(api, { filters: [{ field: 'device', rule: 'equals', value: String(d.id) }] });
    // a short signed URL (tests/devices/event-pictures.test.ts: who may get it)
    const image = got.data[0]!.image!;
    expect(image).toMatch(/^\/storage\/logs\/[0-9a-f]{24}\.png\?exp=\d+&sig=[\w-]+$/);
    const res = await fetch(`${ts.url}${image}`);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(Buffer.from(PNG, 'base64'))).toBe(true);
  });

  it('refuses bad pushes with a catalogue code, and the server goes on', async () => {
    const d = await makeDevice(api, root, 'http', false);
    const bad = [
      'not json',
      {},
      { events: [] },
      { events: [{ kind: 'identifier_used' }] },
      { events: [card('x y', '1')] },
      { events: [card('a', '1', { kind: 'exploded' })] },
      { events: [card('a', '1', { lock: 3 })] },
      { events: [card('a', '1', { time: 'yesterday' })] },
      { events: [card('a', '1', { extra: true })] },
      { events: Array.from({ length: 101 }, (_, i) => card(`m${i}`, '1')) },
    ];
    for (const body of bad) {
      const r = await pushHttp(ts, d, body);
      expect([400, 422], JSON.stringify(body).slice(0, 80)).toContain(r.status);
      expect(['check_fields_data', 'wrong_parameters', 'invalid_data_sent']).toContain(r.body.error_code);
    }
    const notImage = await pushHttp(ts, d, {
      events: [card('b', '1', { image: Buffer.from('hello').toString('base64') })],
    });
    expect(notImage).toMatchObject({ status: 400, body: { error_code: 'invalid_file' } });
    // a wrong password is no device; a person's session may not push
    expect(
      (await pushHttp(ts, { login: d.login, password: 'wrong' }, { events: [card('c', '1')] })).status,
    ).toBe(401);
    const person = await raw(ts, api, 'POST', '/device-gateway/logs', { body: { events: [card('d', '1')] } });
    expect(person.status).toBe(401);
    // nothing was stored, and the server still stores a good push
    expect(
      (await list(api, { filters: [{ field: 'device', rule: 'equals', value: String(d.id) }] })).meta.total,
    ).toBe(0);
    expect((await pushHttp(ts, d, { events: [card('ok', '1')] })).status).toBe(200);
  });

  it('filters with the lists’ language and a time range, and exports what the list shows', async () => {
    const d = await makeDevice(api, root, 'http', false);
    const n = uid();
    await pushHttp(ts, d, {
      events: [
        card(`${n}-a`, '111', { time: '2026-03-01T10:00:00Z' }),
        card(`${n}-b`, '222', { time: '2026-03-02T10:00:00Z', result: 'denied', kind: 'identifier_refused' }),
        {
          event_id: `${n}-c`,
          kind: 'alarm',
          reason: 'smoke',
          result: 'triggered',
          time: '2026-03-03T10:00:00Z',
        },
        { event_id: `${n}-d`, kind: 'door_opened', reason: 'button', lock: 2, time: '2026-03-04T10:00:00Z' },
      ],
    });
    const mine = { field: 'device', rule: 'equals', value: String(d.id) } as const;
    const refused = await list(api, {
      filters: [mine, { field: 'kind', rule: 'equals', value: 'identifier_refused' }],
    });
    expect(refused.data.map((e) => e.identifier_number)).toEqual(['222']);
    const either = await list(api, {
      filters: [
        { field: 'identifier_number', rule: 'equals', value: '111' },
        { field: 'reason', rule: 'equals', value: 'smoke' },
      ],
      match: 'any',
    });
    expect(either.data.filter((e) => e.device?.id === d.id).map((e) => e.event_id)).toEqual([
      `${n}-c`,
      `${n}-a`,
    ]);
    const range = await list(api, {
      filters: [mine],
      from: '2026-03-02T00:00:00Z',
      to: '2026-03-04T00:00:00Z',
    });
    expect(range.data.map((e) => e.event_id)).toEqual([`${n}-c`, `${n}-b`]);
    // keyset paging: every row once
    const p1 = await list(api, { filters: [mine], limit: 3 });
    const p2 = await list(api, { filters: [mine], limit: 3, cursor: p1.meta.next! });
    expect([...p1.data, ...p2.data].map((e) => e.event_id)).toEqual([`${n}-d`, `${n}-c`, `${n}-b`, `${n}-a`]);
    // a field that is not filterable, or a bad value, is check_fields_data
    const e = await failure(list(api, { filters: [{ field: 'image', rule: 'equals', value: 'x' }] }));
    expect(e.code).toBe('check_fields_data');
    // the export: the list's rows, every one, NDJSON and CSV
    const all = await getCommand('device_event.export').run({ api }, { filters: [mine], format: 'ndjson' });
    expect(all.map((r) => r.event_id)).toEqual([`${n}-d`, `${n}-c`, `${n}-b`, `${n}-a`]);
    const csv = await raw(ts, api, 'GET', '/devices/events/export', {
      query: { format: 'csv', filters: [mine], sort: 'created_at' },
    });
    expect(csv.status).toBe(200);
    const lines = String(csv.body).trim().split(/\r?\n/);
    expect(lines).toHaveLength(5);
    expect(lines[0]).toContain('identifier_number');
    expect(lines[1]).toContain('111');
    expect(lines[4]).toContain('button');
  });

  it('shows a user only the events of the devices his groups reach, and only with the permission', async () => {
    const a = await group(api, `A ${uid()}`, root);
    const b = await group(api, `B ${uid()}`, root);
    const inA = await makeDevice(api, a, 'http', false);
    const inB = await makeDevice(api, b, 'http', false);
    const n = uid();
    await pushHttp(ts, inA, { events: [card(`${n}-a`, '1')] });
    await pushHttp(ts, inB, { events: [card(`${n}-b`, '2')] });
    const viewerB = await (
      await userWith(ts, api, { permissions: ['devices.view_events', 'devices.view'], domains: [b] })
    ).client();
    const seen = await list(viewerB, {});
    expect(seen.data.map((e) => e.event_id)).toEqual([`${n}-b`]);
    const exported = await getCommand('device_event.export').run({ api: viewerB }, { format: 'ndjson' });
    expect(exported.map((e) => e.event_id)).toEqual([`${n}-b`]);
    // seeing devices is not seeing their events
    const noEvents = await (
      await userWith(ts, api, { permissions: ['devices.view_all'], domains: [b] })
    ).client();
    expect((await failure(list(noEvents, {}))).status).toBe(403);
    // the events permission with the whole view reaches every group
    const all = await (
      await userWith(ts, api, { permissions: ['devices.view_events', 'devices.view_all'], domains: [b] })
    ).client();
    const every = (await list(all, { search: n })).data;
    expect(every).toEqual([]);
    const both = await list(all, {
      filters: [{ field: 'event_id', rule: 'begins_with', value: n }],
    });
    expect(both.data.map((e) => e.event_id).sort()).toEqual([`${n}-a`, `${n}-b`]);
  });

  it('sends each stored event live to the consoles that may read it, and not to others', async () => {
    const a = await group(api, `A ${uid()}`, root);
    const b = await group(api, `B ${uid()}`, root);
    const inA = await makeDevice(api, a, 'http', false);
    const inB = await makeDevice(api, b, 'http', false);
    const userA = await (
      await userWith(ts, api, { permissions: ['devices.view_events', 'devices.view'], domains: [a] })
    ).client();
    const userB = await (
      await userWith(ts, api, { permissions: ['devices.view_events', 'devices.view'], domains: [b] })
    ).client();
    const plain = await (await userWith(ts, api, { permissions: ['users.view'], domains: [a] })).client();
    const sa = await RawSocket.signedIn(ts.url, tokenOf(userA));
    const sb = await RawSocket.signedIn(ts.url, tokenOf(userB));
    const sp = await RawSocket.signedIn(ts.url, tokenOf(plain));
    expect((await sa.subscribe('private-devices')).data.type).toBe('subscribed');
    expect((await sb.subscribe('private-devices')).data.type).toBe('subscribed');
    // no device permission: the topic is not his
    expect((await sp.subscribe('private-devices')).data).toMatchObject({
      type: 'error',
      error_code: 'method_prohibited',
    });
    const n = uid();
    await pushHttp(ts, inA, { events: [card(`${n}-a`, '1')] });
    // sent again: no second event
    await pushHttp(ts, inA, { events: [card(`${n}-a`, '1')] });
    await pushHttp(ts, inB, { events: [card(`${n}-b`, '2')] });
    const isEvent = (deviceId: number) => (m: { data: { type: string; deviceId?: unknown } }) =>
      m.data.type === 'DeviceEventCreatedEvent' && m.data.deviceId === deviceId;
    const got = await sa.next(isEvent(inA.id));
    expect(got).toMatchObject({
      topic: 'private-devices',
      data: { kind: 'identifier_used', result: 'granted', domainId: a },
    });
    // B hears of B's event, which came after A's; A's never reached him
    await sb.next(isEvent(inB.id));
    expect(sb.messages.filter(isEvent(inA.id))).toEqual([]);
    // and A, who also heard his own once, hears nothing of B's by the time a later event of A comes
    await pushHttp(ts, inA, { events: [card(`${n}-a2`, '3')] });
    await sa.until(() => sa.messages.filter(isEvent(inA.id)).length === 2);
    expect(sa.messages.filter(isEvent(inB.id))).toEqual([]);
    for (const s of [sa, sb, sp]) s.ws.close();
  });
});

describe('the retention of device events', () => {
  const clock = new ManualClock(Date.parse('2026-06-15T12:00:00Z'));
  let ts: TestServer;
  let api: ApiClient;

  beforeAll(async () => {
    ts = await startTestServer({ config: { clock, retentionDays: { device_event: 30 } } });
    api = await admin(ts);
  });
  afterAll(async () => {
    await ts?.close();
  });

  it('the daily job keeps the configured days by the server clock', async () => {
    const d = await makeDevice(api, await rootGroup(api), 'http', false);
    const n = uid();
    // the device's clock says when; a time ahead of the platform's is stored as the platform's
    await pushHttp(ts, d, {
      events: [
        card(`${n}-old`, '1', { time: '2026-05-01T00:00:00Z' }),
        card(`${n}-new`, '2', { time: '2026-06-10T00:00:00Z' }),
        card(`${n}-ahead`, '3', { time: '2027-01-01T00:00:00Z' }),
      ],
    });
    const mine = { filters: [{ field: 'device', rule: 'equals', value: String(d.id) }] } as const;
    const all = await list(api, mine);
    expect(all.data.map((e) => [e.event_id, e.created_at])).toEqual([
      [`${n}-ahead`, '2026-06-15T12:00:00.000Z'],
      [`${n}-new`, '2026-06-10T00:00:00.000Z'],
      [`${n}-old`, '2026-05-01T00:00:00.000Z'],
    ]);
    const { jobs, db } = ts.server.context;
    const kind = retentionKind(deviceEventStore);
    await jobs.enqueue(db, kind, {}, { idempotencyKey: `${kind}:test` });
    await jobs.drain();
    // the job may have been taken by the instance's own worker: wait until it is done
    await jobs.idle();
    expect((await list(api, mine)).data.map((e) => e.event_id)).toEqual([`${n}-ahead`, `${n}-new`]);
  });
});

for (const which of ['mosquitto', 'embedded'] as const) {
  describe(`device events over MQTT (${which === 'mosquitto' ? "the machine's Mosquitto" : 'the embedded broker'})`, () => {
    let ts: TestServer;
    let api: ApiClient;
    let root: number;

    beforeAll(async () => {
      ts = await startTestServer({
        config: {
          mqtt: {
            ...(which === 'mosquitto' ? { url: 'mqtt://127.0.0.1:1883', shared: true } : { shared: false }),
            port: 0,
            host: '127.0.0.1',
            requestTimeoutMs: 5_000,
            sweepMs: 0,
          },
        },
      });
      api = await admin(ts);
      root = await rootGroup(api);
    });
    afterAll(async () => {
      await ts?.close();
    });

    it('a push on server/request/v0/{serial} is stored once and answered on server/response/v0/{serial}', async () => {
      const d = await makeDevice(api, root, 'mqtt', which === 'mosquitto');
      const t = deviceTopics(d.serial);
      const replies = mosquittoSub(d.broker, t.push_reply, { count: 3, waitS: 15 });
      await replies.subscribed;
      const n = uid();
      const push = (request_id: string, body: unknown) =>
        mosquittoPub(d.broker, t.push, JSON.stringify({ request_id, method: 'POST', uri: '/logs', body }));
      const events = {
        events: [
          card(`${n}-1`, '555'),
          { event_id: `${n}-2`, kind: 'call', number: '101', result: 'missed' },
        ],
      };
      expect((await push('r1', events)).code).toBe(0);
      // the same push again (its answer lost), then one that is not a push of logs at all
      expect((await push('r2', events)).code).toBe(0);
      expect((await push('r3', { events: [{ event_id: 'x', kind: 'nothing' }] })).code).toBe(0);
      const answers = (await replies.messages).map(
        (m) => JSON.parse(m.slice(m.indexOf(' ') + 1)) as Record<string, unknown>,
      );
      const byId = Object.fromEntries(answers.map((a) => [a.request_id, a]));
      expect(byId.r1).toEqual({
        request_id: 'r1',
        status: 200,
        body: { stored: [`${n}-1`, `${n}-2`], duplicates: 0 },
      });
      expect(byId.r2).toEqual({
        request_id: 'r2',
        status: 200,
        body: { stored: [`${n}-1`, `${n}-2`], duplicates: 2 },
      });
      expect(byId.r3).toMatchObject({
        request_id: 'r3',
        status: 422,
        body: { error_code: 'check_fields_data' },
      });
      const got = await list(api, { filters: [{ field: 'device', rule: 'equals', value: String(d.id) }] });
      expect(got.data.map((e) => [e.event_id, e.kind]).sort()).toEqual([
        [`${n}-1`, 'identifier_used'],
        [`${n}-2`, 'call'],
      ]);
    });

    it('a device moved to another group after its pushes: its next push is filed under the new group; removed, its push is dropped', async () => {
      // the gateway takes a push of logs for the device as it last read it (issue 26): a change since is seen
      // when the push is written, and the device is read again
      const d = await makeDevice(api, root, 'mqtt', which === 'mosquitto');
      const t = deviceTopics(d.serial);
      const replies = mosquittoSub(d.broker, t.push_reply, { count: 2, waitS: 15 });
      await replies.subscribed;
      const n = uid();
      const push = (request_id: string, event_id: string) =>
        mosquittoPub(
          d.broker,
          t.push,
          JSON.stringify({
            request_id,
            method: 'POST',
            uri: '/logs',
            body: { events: [card(event_id, '556')] },
          }),
        );
      const domainOf = async (event_id: string) =>
        (await list(api, { filters: [{ field: 'device', rule: 'equals', value: String(d.id) }] })).data.find(
          (e) => e.event_id === event_id,
        )?.domain?.id;
      expect((await push('m1', `${n}-before`)).code).toBe(0);
      await expect.poll(() => domainOf(`${n}-before`), { timeout: 10_000 }).toBe(root);
      const tower = await group(api, `Tower ${n}`, root);
      await getCommand('device.update').run({ api }, { id: d.id, domain_id: tower });
      expect((await push('m2', `${n}-after`)).code).toBe(0);
      const answers = (await replies.messages).map(
        (m) => JSON.parse(m.slice(m.indexOf(' ') + 1)) as Record<string, unknown>,
      );
      expect(answers.map((a) => [a.request_id, a.status])).toEqual([
        ['m1', 200],
        ['m2', 200],
      ]);
      expect(await domainOf(`${n}-before`)).toBe(root);
      expect(await domainOf(`${n}-after`)).toBe(tower);
      // the machine's Mosquitto lets anyone publish (the embedded broker no longer lets in a device set to http
      // or removed): set to http, then removed, each next push is neither stored nor answered
      if (which === 'mosquitto') {
        const dropped = () => ts.logs().split('mqtt: a message of a device removed or changed').length - 1;
        const stays = async (id: string, change: () => Promise<unknown>) => {
          const late = mosquittoSub(d.broker, t.push_reply, { count: 1, waitS: 15 });
          await late.subscribed;
          const before = dropped();
          await change();
          expect((await push(`m-${id}`, `${n}-${id}`)).code).toBe(0);
          await expect.poll(dropped, { timeout: 10_000 }).toBe(before + 1);
          late.stop();
          expect(await late.messages).toEqual([]);
          const stored =
            await sql`select event_id from device_events where event_id = ${`${n}-${id}`}`.execute(
              ts.server.context.db,
            );
          expect(stored.rows).toEqual([]);
        };
        const protocol = (p: 'http' | 'mqtt') =>
          getCommand('device.set_protocol').run({ api }, { id: d.id, protocol: p });
        await stays('http', () => protocol('http'));
        await protocol('mqtt');
        // a push of logs while set to mqtt again: read afresh (it was forgotten), stored, remembered as it is now
        expect((await push('m-back', `${n}-back`)).code).toBe(0);
        await expect.poll(() => domainOf(`${n}-back`), { timeout: 10_000 }).toBe(tower);
        await stays('removed', () => getCommand('device.delete').run({ api }, { id: d.id }));
      }
    });

    if (which === 'embedded')
      it('a device may read the answers on its own serial only', async () => {
        const d = await makeDevice(api, root, 'mqtt', false);
        const other = await makeDevice(api, root, 'mqtt', false);
        const sub = mosquittoSub(d.broker, deviceTopics(other.serial).push_reply, { count: 1, waitS: 2 });
        await sub.subscribed;
        expect(
          ts.server.context.devices.embedded!.refusals.some(
            (r) => r.action === 'subscribe' && r.topic === deviceTopics(other.serial).push_reply,
          ),
        ).toBe(true);
        sub.stop();
        // its own answers it may read
        const own = mosquittoSub(d.broker, deviceTopics(d.serial).push_reply, { count: 1, waitS: 2 });
        await own.subscribed;
        expect(
          ts.server.context.devices.embedded!.refusals.some(
            (r) => r.topic === deviceTopics(d.serial).push_reply,
          ),
        ).toBe(false);
        own.stop();
      });
  });
}
