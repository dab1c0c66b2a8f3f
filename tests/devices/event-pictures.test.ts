/**
 * Issue 20 item 6: event pictures. A device cannot fill the disk — a quota per device and in all, a picture
 * over it refused on the device's own answer (its event kept), the room given back by the journal's retention
 * with the event and its file — and a picture is served only to whoever may read its event: with a bearer
 * token the events' gate and view scope are checked, else the short signed URL the events list handed out
 * must hold. Pictures pass the image guard. And what a device pushes over HTTP takes the devices' budget and
 * fair queue, as over MQTT. On PGlite and (with DATABASE_URL) PostgreSQL.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { getCommand, type DeviceEvent } from '@lintel/commands';
import { deviceTopics, type ApiClient } from '@lintel/core';
import { ManualClock, deviceEventStore, retentionKind } from '@lintel/server';
import { startTestServer, type TestServer } from '../support/server';
import { admin, group, rootGroup, tokenOf, uid, userWith } from '../support/fixtures';
import { defaultDeviceLimits } from '../../apps/server/src/config';
import { mosquittoPub, mosquittoSub, type BrokerAddress } from './mqtt-clients';

/** A 1×1 PNG (70 bytes). */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
/** The same PNG with its IHDR twice (the second one says 16000 × 16000): what the image guard refuses. */
const TWO_HEADERS = (() => {
  const ihdr = Buffer.from(PNG.subarray(8, 8 + 25));
  const big = Buffer.from(ihdr);
  big.writeUInt32BE(16000, 8);
  big.writeUInt32BE(16000, 12);
  return Buffer.concat([PNG.subarray(0, 33), big, PNG.subarray(33)]);
})();

const clock = new ManualClock(Date.parse('2026-06-15T12:00:00Z'));
const PUSH_LIMIT = 6;

let ts: TestServer;
let api: ApiClient;
let root: number;

beforeAll(async () => {
  ts = await startTestServer({
    config: {
      clock,
      retentionDays: { device_event: 30 },
      devices: {
        ...defaultDeviceLimits,
        allowLoopback: true,
        pushLimit: PUSH_LIMIT,
        pushWindowS: 3600,
        picturesPerDevice: 3 * PNG.length,
      },
    },
  });
  api = await admin(ts);
  root = await rootGroup(api);
});
afterAll(async () => {
  await ts?.close();
});

interface Dev {
  id: number;
  serial: string;
  login: string;
  password: string;
  broker: BrokerAddress;
}

async function makeDevice(domain: number, protocol: 'http' | 'mqtt' = 'http'): Promise<Dev> {
  const serial = `PIC-${uid()}`;
  const { data } = await getCommand('device.create').run(
    { api },
    { name: `Panel ${serial}`, type: 'panel', serial_number: serial, domain_id: domain, protocol },
  );
  const c = await getCommand('device.credentials').run({ api }, { id: data.id });
  const url = new URL(c.mqtt.url);
  return {
    id: data.id,
    serial,
    login: c.login,
    password: c.password,
    broker: { host: url.hostname, port: Number(url.port), username: c.login, password: c.password },
  };
}

async function pushHttp(d: Dev, body: unknown) {
  const res = await fetch(`${ts.url}/api/v0/device-gateway/logs`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Basic ${Buffer.from(`${d.login}:${d.password}`).toString('base64')}`,
    },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const shot = (event_id: string, image: Buffer = PNG) => ({
  event_id,
  kind: 'identifier_used',
  identifier_type: 'card',
  identifier_number: '77',
  lock: 1,
  result: 'granted',
  image: image.toString('base64'),
});

const eventsOf = async (as: ApiClient, d: Dev) =>
  (
    await getCommand('device_event.list').run(
      { api: as },
      { filters: [{ field: 'device', rule: 'equals', value: String(d.id) }] },
    )
  ).data as DeviceEvent[];

const picturesDir = () => path.join(ts.server.context.config.storageDir, 'logs');
const filesNow = () => (fs.existsSync(picturesDir()) ? fs.readdirSync(picturesDir()).length : 0);
const nameOf = (url: string) => /\/storage\/logs\/([0-9a-f]{24}\.(?:png|jpg))/.exec(url)![1]!;
const get = (p: string, token?: string) =>
  fetch(`${ts.url}${p}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
const usage = async (deviceId: number) => {
  const db = ts.server.context.db;
  const t = await sql<{ bytes: string }>`select bytes from device_picture_total`.execute(db);
  const d = await sql<{ bytes: string }>`
    select bytes from device_picture_usage where device_id = ${deviceId}`.execute(db);
  return { total: Number(t.rows[0]!.bytes), device: Number(d.rows[0]?.bytes ?? 0) };
};

describe('who gets a picture', () => {
  it('an anonymous GET of a picture is refused; the signed URL the list hands out works until it expires', async () => {
    const d = await makeDevice(root);
    expect((await pushHttp(d, { events: [shot(`a-${uid()}`)] })).status).toBe(200);
    const [event] = await eventsOf(api, d);
    const url = event!.image!;
    expect(url).toMatch(/^\/storage\/logs\/[0-9a-f]{24}\.png\?exp=\d+&sig=[A-Za-z0-9_-]+$/);
    const plain = `/storage/logs/${nameOf(url)}`;
    // the picture's own path, without a signature or a token: refused (it was served to anyone)
    expect((await get(plain)).status).toBe(401);
    // however it is spelled, the static route of /storage/ does not serve the pictures' directory
    for (const spelled of [
      `/storage/logs/./${nameOf(url)}`,
      `/storage/%6Cogs/${nameOf(url)}`,
      `/storage/avatars/../logs/${nameOf(url)}`,
    ])
      expect([401, 404], spelled).toContain((await get(spelled)).status);
    const signed = await get(url);
    expect(signed.status).toBe(200);
    expect(signed.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await signed.arrayBuffer()).equals(PNG)).toBe(true);
    // a signature of another picture, or a changed expiry, holds for nothing
    const sig = new URL(url, ts.url).searchParams;
    expect((await get(`${plain}?exp=${Number(sig.get('exp')) + 60}&sig=${sig.get('sig')}`)).status).toBe(401);
    expect((await get(`${plain}?exp=${sig.get('exp')}&sig=${'A'.repeat(43)}`)).status).toBe(401);
    // past its time the URL is refused; the list hands out a new one
    clock.advance(16 * 60_000);
    expect((await get(url)).status).toBe(401);
    const [again] = await eventsOf(api, d);
    expect((await get(again!.image!)).status).toBe(200);
  });

  it('a user who cannot see the device cannot get its picture, with his token or without', async () => {
    const a = await group(api, `A ${uid()}`, root);
    const b = await group(api, `B ${uid()}`, root);
    const d = await makeDevice(a);
    expect((await pushHttp(d, { events: [shot(`s-${uid()}`)] })).status).toBe(200);
    const [event] = await eventsOf(api, d);
    const plain = `/storage/logs/${nameOf(event!.image!)}`;
    const reader = await (
      await userWith(ts, api, { permissions: ['devices.view_events', 'devices.view'], domains: [a] })
    ).client();
    const outsider = await (
      await userWith(ts, api, { permissions: ['devices.view_events', 'devices.view'], domains: [b] })
    ).client();
    const noEvents = await (
      await userWith(ts, api, { permissions: ['devices.view_all'], domains: [a] })
    ).client();
    // the reader of the event gets it with his bearer token alone
    const ok = await get(plain, tokenOf(reader));
    expect(ok.status).toBe(200);
    expect(Buffer.from(await ok.arrayBuffer()).equals(PNG)).toBe(true);
    // one whose groups do not reach the device, and one who sees devices but not their events: not found
    expect((await get(plain, tokenOf(outsider))).status).toBe(404);
    expect((await get(plain, tokenOf(noEvents))).status).toBe(404);
    // and the outsider's list never hands him a signed URL of it
    expect((await eventsOf(outsider, d)).length).toBe(0);
    // a token that is no session is no reader
    expect((await get(plain, 'not-a-token')).status).toBe(401);
  });
});

describe('how much a device may keep', () => {
  it('pictures over the device’s quota are refused in its answer, their events kept, nothing written', async () => {
    const d = await makeDevice(root);
    const other = await makeDevice(root);
    const n = uid();
    const before = filesNow();
    // the quota holds three: the fourth of one push is refused, the others stored
    const first = await pushHttp(d, {
      events: [shot(`${n}-1`), shot(`${n}-2`), shot(`${n}-3`), shot(`${n}-4`)],
    });
    expect(first).toEqual({
      status: 200,
      body: { stored: [`${n}-1`, `${n}-2`, `${n}-3`, `${n}-4`], duplicates: 0, pictures_refused: [`${n}-4`] },
    });
    expect(filesNow()).toBe(before + 3);
    expect(await usage(d.id)).toMatchObject({ device: 3 * PNG.length });
    const got = await eventsOf(api, d);
    expect(got.map((e) => [e.event_id, e.image !== null]).sort()).toEqual([
      [`${n}-1`, true],
      [`${n}-2`, true],
      [`${n}-3`, true],
      [`${n}-4`, false],
    ]);
    // the same push again stores nothing twice and takes no more room
    const again = await pushHttp(d, {
      events: [shot(`${n}-1`), shot(`${n}-2`), shot(`${n}-3`), shot(`${n}-4`)],
    });
    expect(again.body).toMatchObject({ duplicates: 4 });
    expect(await usage(d.id)).toMatchObject({ device: 3 * PNG.length });
    // another device is not held back by this one's quota
    expect((await pushHttp(other, { events: [shot(`${n}-o`)] })).body).toEqual({
      stored: [`${n}-o`],
      duplicates: 0,
    });
    expect(filesNow()).toBe(before + 4);
  });

  it('a device over its quota is refused on its own topic over MQTT', async () => {
    const d = await makeDevice(root, 'mqtt');
    const t = deviceTopics(d.serial);
    const n = uid();
    const replies = mosquittoSub(d.broker, t.push_reply, { count: 2, waitS: 15 });
    await replies.subscribed;
    const push = (request_id: string, events: unknown[]) =>
      mosquittoPub(
        d.broker,
        t.push,
        JSON.stringify({ request_id, method: 'POST', uri: '/logs', body: { events } }),
      );
    expect((await push('full', [shot(`${n}-1`), shot(`${n}-2`), shot(`${n}-3`)])).code).toBe(0);
    expect((await push('over', [shot(`${n}-4`)])).code).toBe(0);
    const answers = (await replies.messages).map(
      (m) => JSON.parse(m.slice(m.indexOf(' ') + 1)) as Record<string, unknown>,
    );
    const byId = Object.fromEntries(answers.map((a) => [a.request_id, a]));
    expect(byId.full).toEqual({
      request_id: 'full',
      status: 200,
      body: { stored: [`${n}-1`, `${n}-2`, `${n}-3`], duplicates: 0 },
    });
    expect(byId.over).toEqual({
      request_id: 'over',
      status: 200,
      body: { stored: [`${n}-4`], duplicates: 0, pictures_refused: [`${n}-4`] },
    });
  });

  it('all devices together stay within the overall quota', async () => {
    const config = ts.server.context.config.devices;
    const d = await makeDevice(root);
    const e = await makeDevice(root);
    const { total } = await usage(d.id);
    config.picturesTotal = total + PNG.length;
    try {
      const n = uid();
      expect((await pushHttp(d, { events: [shot(`${n}-d`)] })).body).not.toHaveProperty('pictures_refused');
      expect((await pushHttp(e, { events: [shot(`${n}-e`)] })).body).toMatchObject({
        pictures_refused: [`${n}-e`],
      });
      expect((await usage(d.id)).total).toBe(total + PNG.length);
    } finally {
      config.picturesTotal = defaultDeviceLimits.picturesTotal;
    }
  });

  it('the retention deletes old pictures with their events and gives their room back', async () => {
    const d = await makeDevice(root);
    const n = uid();
    const now = clock.now().getTime();
    const day = 24 * 3600_000;
    expect(
      (
        await pushHttp(d, {
          events: [
            { ...shot(`${n}-old`), time: new Date(now - 40 * day).toISOString() },
            { ...shot(`${n}-new`), time: new Date(now - day).toISOString() },
          ],
        })
      ).status,
    ).toBe(200);
    const got = await eventsOf(api, d);
    const old = nameOf(got.find((x) => x.event_id === `${n}-old`)!.image!);
    const kept = nameOf(got.find((x) => x.event_id === `${n}-new`)!.image!);
    expect(fs.existsSync(path.join(picturesDir(), old))).toBe(true);
    const before = await usage(d.id);
    expect(before.device).toBe(2 * PNG.length);
    const { jobs, db } = ts.server.context;
    const kind = retentionKind(deviceEventStore);
    await jobs.enqueue(db, kind, {}, { idempotencyKey: `${kind}:pictures-${n}` });
    await jobs.drain();
    // the job may have been taken by the instance's own worker: wait until it is done
    await jobs.idle();
    expect((await eventsOf(api, d)).map((x) => x.event_id)).toEqual([`${n}-new`]);
    expect(fs.existsSync(path.join(picturesDir(), old))).toBe(false);
    expect(fs.existsSync(path.join(picturesDir(), kept))).toBe(true);
    const after = await usage(d.id);
    expect(after.device).toBe(PNG.length);
    expect(after.total).toBeLessThanOrEqual(before.total - PNG.length);
  });
});

describe('what a device pushes', () => {
  it('a picture goes through the image guard: a PNG with a second header is refused', async () => {
    const d = await makeDevice(root);
    const before = filesNow();
    const r = await pushHttp(d, { events: [shot(`g-${uid()}`, TWO_HEADERS)] });
    expect(r).toMatchObject({ status: 400, body: { error_code: 'invalid_file' } });
    expect(filesNow()).toBe(before);
  });

  it('pushes over HTTP take the device’s budget, as over MQTT: past it 429 with the seconds to wait', async () => {
    const d = await makeDevice(root);
    const other = await makeDevice(root);
    const n = uid();
    for (let i = 0; i < PUSH_LIMIT; i++)
      expect((await pushHttp(d, { events: [{ event_id: `${n}-${i}`, kind: 'door_opened' }] })).status).toBe(
        200,
      );
    const over = await pushHttp(d, { events: [{ event_id: `${n}-over`, kind: 'door_opened' }] });
    expect(over).toMatchObject({ status: 429, body: { error_code: 'too_many_requests' } });
    expect(Number((over.body.data as { seconds: number }).seconds)).toBeGreaterThan(0);
    // nothing of the refused push was stored; another device pushes on
    expect((await eventsOf(api, d)).map((e) => e.event_id)).not.toContain(`${n}-over`);
    expect((await pushHttp(other, { events: [{ event_id: `${n}-o`, kind: 'door_opened' }] })).status).toBe(
      200,
    );
  });
});

describe('device events in bulk (issue 26 item 1)', () => {
  it('a push of 100 events costs the statements of a push of one', async () => {
    const d = await makeDevice(root);
    // every statement the server's database runs, counted by its text (background jobs' statements left out)
    const executor = ts.server.context.db.getExecutor();
    const proto = Object.getPrototypeOf(executor) as {
      executeQuery(this: unknown, q: { sql: string }, ...rest: unknown[]): Promise<unknown>;
    };
    const original = proto.executeQuery;
    let counted = 0;
    proto.executeQuery = function (q, ...rest) {
      if (/device_events|event_outbox|notifications|pg_notify|users|devices/.test(q.sql)) counted++;
      return original.call(this, q, ...rest);
    };
    const statementsOf = async (events: unknown[]) => {
      // the device just made is a change for the access sync, whose planner (on a timer) reads devices and
      // users: planned now, so its statements do not fall into the push's count
      await ts.server.context.accessSync.poll();
      counted = 0;
      const r = await pushHttp(d, { events });
      expect(r.status).toBe(200);
      return counted;
    };
    const n = uid();
    const used = (i: number) => ({ ...shot(`${n}-${i}`), image: undefined });
    try {
      const one = await statementsOf([used(0)]);
      const hundred = await statementsOf(
        Array.from({ length: 100 }, (_, i) =>
          i % 2 ? used(i + 1) : { event_id: `${n}-d${i}`, kind: 'door_opened', reason: 'button' },
        ),
      );
      expect(one).toBeGreaterThan(2);
      expect(hundred).toBe(one);
    } finally {
      proto.executeQuery = original;
    }
    // and every one of them stored
    const all = await getCommand('device_event.list').run(
      { api },
      { filters: [{ field: 'device', rule: 'equals', value: String(d.id) }] },
    );
    expect(all.meta.total).toBe(101);
  });

  it("a transaction of pushes writes all its outbox rows in one insert with one NOTIFY, several devices' pushes together", async () => {
    const devices = await Promise.all(Array.from({ length: 6 }, () => makeDevice(root)));
    const executor = ts.server.context.db.getExecutor();
    const proto = Object.getPrototypeOf(executor) as {
      executeQuery(this: unknown, q: { sql: string }, ...rest: unknown[]): Promise<unknown>;
    };
    const original = proto.executeQuery;
    const seen = { events: 0, outbox: 0, notify: 0 };
    proto.executeQuery = function (q, ...rest) {
      if (/insert into device_events/.test(q.sql)) seen.events++;
      if (/insert into event_outbox/.test(q.sql)) seen.outbox++;
      if (/pg_notify/.test(q.sql)) seen.notify++;
      return original.call(this, q, ...rest);
    };
    const n = uid();
    try {
      // each push: a card used (a device event, an ACS event, the notices) and a door opened
      const replies = await Promise.all(
        devices.map((d, k) =>
          pushHttp(d, {
            events: [
              { ...shot(`${n}-${k}-used`), image: undefined },
              { event_id: `${n}-${k}-door`, kind: 'door_opened', reason: 'button' },
            ],
          }),
        ),
      );
      for (const r of replies) expect(r).toMatchObject({ status: 200, body: { duplicates: 0 } });
    } finally {
      proto.executeQuery = original;
    }
    // a transaction is one insert of device events: its outbox rows (device and ACS events) are one insert
    expect(seen.events).toBeGreaterThanOrEqual(1);
    expect(seen.events).toBeLessThanOrEqual(devices.length);
    expect(seen.outbox).toBe(seen.events);
    expect(seen.notify).toBe(ts.server.context.config.databaseUrl ? seen.events : 0);
    for (const d of devices) expect(await eventsOf(api, d)).toHaveLength(2);
  });
});
