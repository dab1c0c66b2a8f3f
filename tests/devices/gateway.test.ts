/**
 * The device gateway against a client that is not ours: `mosquitto_pub` and `mosquitto_sub` act as a device,
 * through the machine's Mosquitto (MQTT_URL, shared subscriptions) and through the embedded broker (aedes,
 * per-device credentials, a device held to its own topics). Online after a heartbeat, offline after three
 * missed ones by moving the server's clock, the status topic, and a request to the device answered over MQTT.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import { deviceTopics, type ApiClient } from '@lintel/core';
import { ManualClock } from '@lintel/server';
import { startTestServer, type TestServer } from '../support/server';
import { admin, failure, raw, rootGroup, uid } from '../support/fixtures';
import { mosquittoPub, mosquittoSub, until, type BrokerAddress } from './mqtt-clients';

const MOSQUITTO: BrokerAddress = { host: '127.0.0.1', port: 1883 };

for (const which of ['mosquitto', 'embedded'] as const) {
  describe(`the gateway through ${which === 'mosquitto' ? "the machine's Mosquitto" : 'the embedded broker'}`, () => {
    let ts: TestServer;
    let api: ApiClient;
    let root: number;
    const clock = new ManualClock();

    beforeAll(async () => {
      ts = await startTestServer({
        config: {
          clock,
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

    /** A device on mqtt, and the broker address it signs in with (its credentials on the embedded broker). */
    async function device(): Promise<{ id: number; serial: string; broker: BrokerAddress }> {
      const serial = `SIM-${uid()}`;
      const { data } = await getCommand('device.create').run(
        { api },
        { name: `Panel ${serial}`, type: 'panel', serial_number: serial, domain_id: root, protocol: 'mqtt' },
      );
      const c = await getCommand('device.credentials').run({ api }, { id: data.id });
      const url = new URL(c.mqtt.url);
      const broker =
        which === 'mosquitto'
          ? MOSQUITTO
          : { host: url.hostname, port: Number(url.port), username: c.login, password: c.password };
      return { id: data.id, serial, broker };
    }
    const statusOf = async (id: number) => (await getCommand('device.get').run({ api }, { id })).status;
    const heartbeat = (d: { serial: string; broker: BrokerAddress }, body: object = {}) =>
      mosquittoPub(
        d.broker,
        deviceTopics(d.serial).push,
        JSON.stringify({ request_id: uid(), method: 'POST', uri: '/heartbeat', body }),
      );

    it('subscribes to the devices’ topics (shared with Mosquitto, plain on the embedded broker)', () => {
      const subs = ts.server.context.devices.subscriptions;
      if (which === 'mosquitto') {
        expect(subs.filter((s) => s.startsWith('$share/'))).toHaveLength(2);
        expect(subs).toContain('device/response/v0/+');
      } else expect(subs).toEqual(['server/request/v0/+', 'device/status/v0/+', 'device/response/v0/+']);
    });

    it('a heartbeat on server/request/v0/{serial} puts the device online, by the server’s clock', async () => {
      const d = await device();
      expect(await statusOf(d.id)).toBe('offline');
      expect((await heartbeat(d, { firmware_version: '2.4.1' })).code).toBe(0);
      const online = await until(async () => {
        const got = await getCommand('device.get').run({ api }, { id: d.id });
        return got.status === 'online' && got;
      });
      expect(online.last_heartbeat_at).toBe(clock.now().toISOString());
      expect(online.firmware_version).toBe('2.4.1');
      // the event is delivered once its unit of work is over, which the status read may come before
      const event = await until(async () =>
        ts.server.context.events.sent.find(
          (m) => m.data.type === 'DeviceStatusChangedEvent' && m.data.deviceId === d.id,
        ),
      );
      expect(event).toMatchObject({
        topic: 'private-devices',
        data: { status: 'online', cause: 'heartbeat', serialNumber: d.serial },
      });
    });

    it('offline after three missed heartbeats: not at 30 s of silence, at 31 s', async () => {
      const d = await device();
      await heartbeat(d);
      await until(async () => (await statusOf(d.id)) === 'online');
      clock.advance(30_000);
      await ts.server.context.devices.sweep();
      expect(await statusOf(d.id)).toBe('online');
      // a heartbeat in time starts the count again
      const before = (await getCommand('device.get').run({ api }, { id: d.id })).last_heartbeat_at;
      await heartbeat(d);
      await until(
        async () => (await getCommand('device.get').run({ api }, { id: d.id })).last_heartbeat_at !== before,
      );
      clock.advance(30_000);
      await ts.server.context.devices.sweep();
      expect(await statusOf(d.id)).toBe('online');
      clock.advance(1_000);
      expect(await ts.server.context.devices.sweep()).toBeGreaterThanOrEqual(1);
      const off = await getCommand('device.get').run({ api }, { id: d.id });
      expect(off.status).toBe('offline');
      expect(off.status_changed_at).toBe(clock.now().toISOString());
      expect(
        ts.server.context.events.sent.filter(
          (m) => m.data.type === 'DeviceStatusChangedEvent' && m.data.deviceId === d.id,
        ),
      ).toEqual([
        expect.objectContaining({ data: expect.objectContaining({ status: 'online', cause: 'heartbeat' }) }),
        expect.objectContaining({
          data: expect.objectContaining({ status: 'offline', cause: 'missed_heartbeats' }),
        }),
      ]);
      // an offline device on mqtt is not asked: the catalogue's "device offline"
      const e = await failure(getCommand('device.info').run({ api }, { id: d.id }));
      expect(e.status).toBe(409);
      expect(e.message).toBe('device_offline');
    });

    it('the status topic: `online`, then the last will’s `offline`', async () => {
      const d = await device();
      expect((await mosquittoPub(d.broker, deviceTopics(d.serial).status, 'online')).code).toBe(0);
      await until(async () => (await statusOf(d.id)) === 'online');
      expect((await mosquittoPub(d.broker, deviceTopics(d.serial).status, 'offline')).code).toBe(0);
      await until(async () => (await statusOf(d.id)) === 'offline');
    });

    it('a request to the device in the HTTP model, answered on device/response/v0/{serial}', async () => {
      const d = await device();
      await heartbeat(d);
      await until(async () => (await statusOf(d.id)) === 'online');
      const sub = mosquittoSub(d.broker, deviceTopics(d.serial).request, { count: 1 });
      await sub.subscribed;
      const info = getCommand('device.info').run({ api }, { id: d.id });
      const [line] = await sub.messages;
      expect(line!.startsWith(`${deviceTopics(d.serial).request} `)).toBe(true);
      const request = JSON.parse(line!.slice(deviceTopics(d.serial).request.length + 1)) as {
        request_id: string;
      };
      expect(request).toEqual({
        request_id: expect.any(String),
        method: 'GET',
        uri: '/api/info',
        body: null,
      });
      const body = {
        firmware_version: '2.4.1',
        api_version: 'v1',
        device_name: 'Entrance 1',
        device_type: 'panel',
        device_serial_number: d.serial,
      };
      // a reply with another request id is not this one's
      await mosquittoPub(
        d.broker,
        deviceTopics(d.serial).response,
        JSON.stringify({ request_id: 'not-it', status: 200, body: { device_name: 'wrong' } }),
      );
      await mosquittoPub(
        d.broker,
        deviceTopics(d.serial).response,
        JSON.stringify({ request_id: request.request_id, status: 200, body }),
      );
      expect(await info).toEqual(body);
    });

    it('a push of a device Lintel does not know, or one set to http, changes nothing', async () => {
      const stranger = { serial: `NOBODY-${uid()}`, broker: which === 'mosquitto' ? MOSQUITTO : null };
      if (stranger.broker) expect((await heartbeat({ ...stranger, broker: stranger.broker })).code).toBe(0);
      const serial = `HTTP-${uid()}`;
      const { data } = await getCommand('device.create').run(
        { api },
        { name: 'On http', type: 'panel', serial_number: serial, domain_id: root },
      );
      if (which === 'mosquitto') {
        await heartbeat({ serial, broker: MOSQUITTO });
        // a device of mqtt pushed after it: once that one is online, the first was read and ignored
        const d = await device();
        await heartbeat(d);
        await until(async () => (await statusOf(d.id)) === 'online');
        expect(await statusOf(data.id)).toBe('offline');
      }
    });

    if (which === 'embedded') {
      it('refuses a wrong password at connect', async () => {
        const d = await device();
        const r = await mosquittoPub(
          { ...d.broker, password: 'not-the-password' },
          deviceTopics(d.serial).push,
          '{}',
        );
        expect(r.code).not.toBe(0);
        expect(r.stderr).toMatch(/refused|not authori[sz]ed|bad user name/i);
      });

      it('holds a device to its own topics: a push under another serial is refused', async () => {
        const a = await device();
        const b = await device();
        const before = ts.server.context.devices.embedded!.refusals.length;
        await heartbeat({ serial: b.serial, broker: a.broker });
        const refusal = await until(async () =>
          ts.server.context.devices
            .embedded!.refusals.slice(before)
            .find((r) => r.serial === a.serial && r.topic === deviceTopics(b.serial).push),
        );
        expect(refusal.action).toBe('publish');
        // b's own heartbeat is taken; the one a sent in b's name never was
        await heartbeat(b);
        await until(async () => (await statusOf(b.id)) === 'online');
        const handledB = ts.server.context.events.sent.filter(
          (m) => m.data.type === 'DeviceStatusChangedEvent' && m.data.deviceId === b.id,
        );
        expect(handledB).toHaveLength(1);
        expect(await statusOf(a.id)).toBe('offline');
        // nor may it read another device's requests
        const sub = mosquittoSub(a.broker, deviceTopics(b.serial).request, { count: 1, waitS: 2 });
        await sub.subscribed;
        expect(
          ts.server.context.devices.embedded!.refusals.some(
            (r) => r.action === 'subscribe' && r.topic === deviceTopics(b.serial).request,
          ),
        ).toBe(true);
        sub.stop();
      });

      it('a new password ends the old one', async () => {
        const d = await device();
        expect((await heartbeat(d)).code).toBe(0);
        await getCommand('device.credentials_reset').run({ api }, { id: d.id });
        const r = await heartbeat(d);
        expect(r.code).not.toBe(0);
      });
    }

    it('over HTTP: the same heartbeat with the device’s login and password, and nothing without them', async () => {
      const serial = `HTTP-${uid()}`;
      const { data } = await getCommand('device.create').run(
        { api },
        { name: 'Http panel', type: 'panel', serial_number: serial, domain_id: root },
      );
      const c = await getCommand('device.credentials').run({ api }, { id: data.id });
      const post = (auth: string | null) =>
        fetch(`${c.http_url}/heartbeat`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(auth ? { authorization: `Basic ${Buffer.from(auth).toString('base64')}` } : {}),
          },
          body: JSON.stringify({ firmware_version: '1.0.0' }),
        });
      expect((await post(null)).status).toBe(401);
      expect((await post(`${serial}:wrong-password`)).status).toBe(401);
      // a person's session is no device
      expect((await raw(ts, api, 'POST', '/device-gateway/heartbeat', { body: {} })).status).toBe(401);
      expect(await statusOf(data.id)).toBe('offline');
      const ok = await post(`${c.login}:${c.password}`);
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({ status: 'online', interval: 10 });
      expect(await statusOf(data.id)).toBe('online');
    });
  });
}
