/**
 * The MQTT broker as the settings show it (issue 24 item 2; spec part 2 §7 "Broker service: status, restart
 * {type}", "broker GET and POST multipart"), against real brokers: the embedded aedes broker of a test server
 * — its status, a restart that disconnects a simulated panel which comes back and answers the platform again,
 * a TLS certificate uploaded (refused when unreadable or when the key is another's) that a TLS client then
 * sees, the key never returned nor logged — and a Mosquitto of the test's own as the external broker: what
 * its `$SYS` topics tell, a reconnection of the platform, and no restart or certificate of a broker Lintel
 * does not run.
 */
import tls from 'node:tls';
import { sql } from 'kysely';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand, PASSWORD_PLACEHOLDER } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { SimulatedDevice } from '@lintel/device-sim';
import { startTestServer, type TestServer } from '../support/server';
import { admin, failure, rootGroup, uid, userWith } from '../support/fixtures';
import { selfSigned } from '../support/certificates';
import { PrivateMosquitto, until } from './mqtt-clients';

const cmd = getCommand;
const pem = (text: string) => new Blob([text], { type: 'text/plain' });

describe('the embedded broker', () => {
  let ts: TestServer;
  let api: ApiClient;
  let sim: SimulatedDevice | null = null;

  beforeAll(async () => {
    ts = await startTestServer({
      config: {
        mqtt: { port: 0, tlsPort: 0, host: '127.0.0.1', shared: false, requestTimeoutMs: 5_000, sweepMs: 0 },
      },
    });
    api = await admin(ts);
  }, 60_000);
  afterAll(async () => {
    await sim?.stop().catch(() => undefined);
    await ts?.close();
  });

  it('says what it is: aedes on its port, up, the platform among its clients', async () => {
    const s = await cmd('broker.status').run({ api }, {});
    const port = ts.server.context.devices.embedded!.port;
    expect(s).toMatchObject({ kind: 'embedded', state: 'up', restarts: 0, dynsec: false, certificate: null });
    expect(s.version).toMatch(/^aedes \d+\.\d+/);
    expect(s.listeners).toEqual([{ protocol: 'mqtt', port }]);
    expect(s.clients).toBeGreaterThanOrEqual(1);
    expect(s.url).toContain(`:${port}`);
    expect(s.started_at).not.toBeNull();
  });

  it('restarts: a panel is disconnected, comes back by itself and answers the platform again', async () => {
    const serial = `BRS-${uid()}`;
    const { data } = await cmd('device.create').run(
      { api },
      {
        name: `Panel ${serial}`,
        type: 'panel',
        serial_number: serial,
        domain_id: await rootGroup(api),
        protocol: 'mqtt',
      },
    );
    const c = await cmd('device.credentials').run({ api }, { id: data.id });
    sim = new SimulatedDevice({
      serial,
      management: { protocol: 'mqtt', url: c.mqtt.url, login: c.login, password: c.password },
      heartbeatMs: 0,
    });
    await sim.start();
    const before = await cmd('broker.status').run({ api }, {});
    expect(before.clients).toBeGreaterThanOrEqual(2);
    const address = { serial_number: serial, protocol: 'mqtt', status: 'online', ip_address: null, port: 80 };
    expect(
      (await ts.server.context.devices.request(address, { method: 'GET', uri: '/api/info' })).status,
    ).toBe(200);

    const dropped = new Promise<void>((resolve) =>
      (sim as unknown as { client: mqtt.MqttClient }).client.once('close', () => resolve()),
    );
    const after = await cmd('broker.restart').run({ api }, { type: 'broker' });
    await dropped;
    expect(after).toMatchObject({ kind: 'embedded', state: 'up', restarts: 1 });
    expect(after.listeners).toEqual(before.listeners);
    expect(after.started_at! >= before.started_at!).toBe(true);
    // the panel reconnects on its own and the platform reaches it through the new broker
    await until(async () => sim!.connected);
    const reply = await until(async () =>
      ts.server.context.devices.request(address, { method: 'GET', uri: '/api/info' }).catch(() => null),
    );
    expect(reply.status).toBe(200);
    const audit = await sql<{ data: Record<string, unknown> }>`
      select data from audit_events where action = 'broker_restarted'`.execute(ts.server.context.db);
    expect(audit.rows.map((r) => r.data)).toEqual([{ type: 'broker', kind: 'embedded', state: 'up' }]);

    const again = await cmd('broker.restart').run({ api }, { type: 'connection' });
    expect(again).toMatchObject({ state: 'up', restarts: 2 });
  });

  it('serves TLS with an uploaded certificate; the key is checked, never returned, never logged', async () => {
    const a = selfSigned('broker-a');
    const b = selfSigned('broker-b');
    expect(await cmd('settings.broker_get').run({ api }, {})).toEqual({
      data: { tls_port: null, certificate: null, key: '' },
      applies: true,
    });
    const mismatch = await failure(
      cmd('settings.broker_update').run({ api }, { certificate: pem(a.cert), key: pem(b.key) }),
    );
    expect([mismatch.status, mismatch.message, mismatch.data]).toEqual([
      422,
      'check_fields_data',
      { fields: [{ field: 'key', rule: 'key_mismatch' }] },
    ]);
    const junk = await failure(
      cmd('settings.broker_update').run({ api }, { certificate: pem('not a certificate'), key: pem(a.key) }),
    );
    expect(junk.data).toEqual({ fields: [{ field: 'certificate', rule: 'pem_certificate' }] });

    const saved = await cmd('settings.broker_update').run(
      { api },
      { certificate: pem(a.cert), key: pem(a.key) },
    );
    expect(saved.applies).toBe(true);
    expect(saved.data.key).toBe(PASSWORD_PLACEHOLDER);
    expect(saved.data.certificate?.subject).toContain('broker-a');
    const port = saved.data.tls_port!;
    expect(port).toBeGreaterThan(0);
    const status = await cmd('broker.status').run({ api }, {});
    expect(status.listeners).toContainEqual({ protocol: 'mqtts', port });
    expect(status.certificate?.fingerprint).toBe(saved.data.certificate!.fingerprint);

    // a TLS client sees that certificate and signs in as a device over it
    const peer = await new Promise<tls.PeerCertificate>((resolve, reject) => {
      const socket = tls.connect({
        host: '127.0.0.1',
        port,
        ca: a.cert,
        checkServerIdentity: () => undefined,
      });
      socket.once('secureConnect', () => (resolve(socket.getPeerCertificate()), socket.destroy()));
      socket.once('error', reject);
    });
    expect(peer.fingerprint256).toBe(saved.data.certificate!.fingerprint);
    const serial = `TLS-${uid()}`;
    const { data } = await cmd('device.create').run(
      { api },
      {
        name: serial,
        type: 'panel',
        serial_number: serial,
        domain_id: await rootGroup(api),
        protocol: 'mqtt',
      },
    );
    const c = await cmd('device.credentials').run({ api }, { id: data.id });
    const client = await mqtt.connectAsync(`mqtts://127.0.0.1:${port}`, {
      clientId: serial,
      username: c.login,
      password: c.password,
      ca: a.cert,
      reconnectPeriod: 0,
      // the test's certificate names no host: its fingerprint is what the test checks
      ...{ checkServerIdentity: () => undefined },
    });
    expect(client.connected).toBe(true);
    await client.endAsync();

    // the key: not in any reply, audit event or log line; the database holds it for the listener
    const everything = JSON.stringify([saved, status, await cmd('settings.broker_get').run({ api }, {})]);
    expect(everything).not.toContain('PRIVATE KEY');
    const audit = await sql<{ data: Record<string, unknown> }>`
      select data from audit_events where action = 'broker_certificate_changed'`.execute(
      ts.server.context.db,
    );
    expect(audit.rows).toHaveLength(1);
    expect(JSON.stringify(audit.rows)).not.toContain('PRIVATE');
    expect(audit.rows[0]!.data).toMatchObject({ fingerprint: saved.data.certificate!.fingerprint });
    expect(ts.logs()).not.toContain('PRIVATE KEY');

    // a restart keeps the TLS listener and its certificate, on the same port
    const restarted = await cmd('broker.restart').run({ api }, { type: 'broker' });
    expect(restarted.listeners).toContainEqual({ protocol: 'mqtts', port });

    // removed: the TLS listener closes
    const removed = await cmd('settings.broker_delete').run({ api }, {});
    expect(removed.data).toMatchObject({ certificate: null, key: '' });
    expect((await cmd('broker.status').run({ api }, {})).listeners.map((l) => l.protocol)).toEqual(['mqtt']);
    const refused = await new Promise<boolean>((resolve) => {
      const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false });
      socket.once('secureConnect', () => (socket.destroy(), resolve(false)));
      socket.once('error', () => resolve(true));
    });
    expect(refused).toBe(true);
  });

  it('is seen with project_settings.view; restarted and changed only with project_settings.change', async () => {
    const viewer = await userWith(ts, api, {
      permissions: ['project_settings.view'],
      domains: [await rootGroup(api)],
    });
    const v = await viewer.client();
    expect((await cmd('broker.status').run({ api: v }, {})).kind).toBe('embedded');
    expect((await cmd('settings.broker_get').run({ api: v }, {})).applies).toBe(true);
    const restart = await failure(cmd('broker.restart').run({ api: v }, { type: 'broker' }));
    expect([restart.status, restart.message]).toEqual([403, 'method_prohibited']);
    const a = selfSigned('broker-viewer');
    const upload = await failure(
      cmd('settings.broker_update').run({ api: v }, { certificate: pem(a.cert), key: pem(a.key) }),
    );
    expect(upload.status).toBe(403);
  });
});

describe('an external broker (Mosquitto)', () => {
  const broker = new PrivateMosquitto(['allow_anonymous true', 'persistence false', 'sys_interval 1']);
  let ts: TestServer;
  let api: ApiClient;

  beforeAll(async () => {
    await broker.start();
    ts = await startTestServer({
      config: {
        modules: ['events', 'devices', 'http'],
        mqtt: {
          url: broker.url,
          shared: true,
          port: 0,
          host: '127.0.0.1',
          requestTimeoutMs: 2_000,
          sweepMs: 0,
        },
      },
    });
    api = await admin(ts);
  }, 60_000);
  afterAll(async () => {
    await ts?.close();
    await broker.dispose();
  });

  it('says what the broker tells on $SYS, reconnects, and neither restarts it nor takes a certificate', async () => {
    const s = await until(async () => {
      const r = await cmd('broker.status').run({ api }, {});
      // Mosquitto publishes its $SYS values every sys_interval (1 s here) when they change, retained
      return r.version && r.clients && r.uptime_s !== null ? r : null;
    });
    expect(s).toMatchObject({ kind: 'external', state: 'up', listeners: [], certificate: null, restarts: 0 });
    expect(s.version).toMatch(/mosquitto/i);
    expect(s.clients).toBeGreaterThanOrEqual(1);
    expect(s.url).toBe(broker.url);

    const e = await failure(cmd('broker.restart').run({ api }, { type: 'broker' }));
    expect([e.status, e.message, e.data]).toEqual([
      400,
      'cant_perform_action',
      { reason: 'external_broker' },
    ]);
    const after = await cmd('broker.restart').run({ api }, { type: 'connection' });
    expect(after).toMatchObject({ kind: 'external', state: 'up', restarts: 1 });

    const settings = await cmd('settings.broker_get').run({ api }, {});
    expect(settings).toEqual({ data: { tls_port: null, certificate: null, key: '' }, applies: false });
    const a = selfSigned('broker-external');
    const upload = await failure(
      cmd('settings.broker_update').run({ api }, { certificate: pem(a.cert), key: pem(a.key) }),
    );
    expect([upload.message, upload.data]).toEqual(['cant_perform_action', { reason: 'external_broker' }]);

    // killed: the status says so, without waiting for anything
    await broker.kill();
    const down = await until(async () => {
      const r = await cmd('broker.status').run({ api }, {});
      return r.state === 'down' ? r : null;
    });
    expect(down.kind).toBe('external');
  });
});
