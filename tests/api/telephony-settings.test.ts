/**
 * The SIP settings and the push server (issue 24 item 2, issue 22 items 1 and 10): read with the installation's
 * values where none was set, saved, validated with `check_fields_data` naming the field, a TURN credential and
 * the push keys never returned (the placeholder) nor written to the audit log or the server's log, the
 * placeholder sent back keeping them, null giving a value back to the environment; the web dialer's SIP
 * profile carries the ICE servers and the realm of the settings, and a number's password is made for the
 * realm in force. The SIP server here is a remote one that does not answer (telephony configured, nothing to
 * restart): tests/sip/sip-settings.test.ts changes a running Kamailio.
 */
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { getCommand, PASSWORD_PLACEHOLDER } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { loadSipConfig } from '@lintel/server';
import { startTestServer, type TestServer } from '../support/server';
import { admin, everyFeatureOn, licence, raw, rootGroup, signIn, uid } from '../support/fixtures';
import { conciergeUser } from '../support/dialer';

let ts: TestServer;
let api: ApiClient;
let group: number;

beforeAll(async () => {
  ts = await startTestServer({
    config: {
      // configured and unreachable: the dialer's profile is served, no Kamailio is restarted
      sip: { ...loadSipConfig({}), mode: 'remote', rpcUrl: 'http://127.0.0.1:9/RPC', rpcTimeoutMs: 500 },
    },
  });
  await licence(ts, everyFeatureOn());
  api = await admin(ts);
  group = await rootGroup(api);
}, 60_000);
afterAll(async () => {
  await ts?.close();
});

const sipGet = () => getCommand('settings.sip_get').run({ api }, {});
const sipUpdate = (args: Record<string, unknown>) => getCommand('settings.sip_update').run({ api }, args);
const pushUpdate = (args: Record<string, unknown>) => getCommand('settings.push_update').run({ api }, args);
const storedSip = async () =>
  (
    await sql<{
      settings: Record<string, unknown> | string;
    }>`select settings from sip_settings where id`.execute(ts.server.context.db)
  ).rows[0]?.settings;
const auditText = async () =>
  JSON.stringify(
    (
      await sql`select action, data from audit_events where action in ('sip_settings_changed', 'push_settings_changed')`.execute(
        ts.server.context.db,
      )
    ).rows,
  );
/** the fields the server names refusing this body (sent as it is, past the client's own checks) */
async function refused(path: 'sip' | 'push', body: Record<string, unknown>): Promise<string[]> {
  const r = await raw(ts, api, 'PATCH', `/settings/${path}`, { body });
  expect(r.status).toBe(422);
  expect(r.body.error_code).toBe('check_fields_data');
  return ((r.body.data as { fields: { field: string }[] }).fields ?? []).map((f) => f.field);
}

describe('the SIP settings', () => {
  it("show the installation's values until some are set", async () => {
    const s = await sipGet();
    expect(s.data).toEqual({
      realm: 'lintel',
      public_address: '',
      public_port: null,
      ice_servers: [],
      ring_timeout_s: 60,
      route_timeout_s: 1,
      intercept_ring_s: 20,
      waiting_hold_s: 300,
    });
    expect(s.defaults).toEqual(s.data);
    expect(s.overridden).toEqual([]);
    expect(s.mode).toBe('remote');
    expect(s.applied).toBeNull();
  });

  it('are saved; a TURN credential is never returned nor logged, and the placeholder keeps it', async () => {
    const secret = `turn-${uid()}-secret`;
    const saved = await sipUpdate({
      public_address: 'sip.towers.example',
      public_port: 15060,
      ring_timeout_s: 45,
      ice_servers: [
        { urls: ['stun:stun.towers.example:3478'] },
        {
          urls: ['turn:turn.towers.example:3478?transport=udp', 'turns:turn.towers.example:5349'],
          username: 'desk',
          credential: secret,
        },
      ],
    });
    expect(saved.data).toMatchObject({
      public_address: 'sip.towers.example',
      public_port: 15060,
      ring_timeout_s: 45,
      ice_servers: [
        { urls: ['stun:stun.towers.example:3478'], username: '', credential: '' },
        {
          urls: ['turn:turn.towers.example:3478?transport=udp', 'turns:turn.towers.example:5349'],
          username: 'desk',
          credential: PASSWORD_PLACEHOLDER,
        },
      ],
    });
    expect(saved.overridden).toEqual(['ice_servers', 'public_address', 'public_port', 'ring_timeout_s']);
    // a remote SIP server that does not answer: nothing was restarted
    expect(saved.applied).toBe('not_running');
    expect(JSON.stringify(saved)).not.toContain(secret);
    expect(JSON.stringify(await sipGet())).not.toContain(secret);
    expect(JSON.stringify(await storedSip())).toContain(secret);

    // sent back as shown (the placeholder), reordered: each credential stays with its URLs
    const shown = (await sipGet()).data.ice_servers;
    await sipUpdate({ ice_servers: [shown[1], shown[0]] });
    const stored = await storedSip();
    const servers = (typeof stored === 'string' ? JSON.parse(stored) : stored) as {
      ice_servers: { credential?: string }[];
    };
    expect(servers.ice_servers[0]!.credential).toBe(secret);
    expect(servers.ice_servers[1]!.credential).toBeUndefined();

    expect(await auditText()).toContain('ice_credentials_changed');
    expect(await auditText()).not.toContain(secret);
    expect(ts.logs()).not.toContain(secret);
  });

  it("reach the web dialer's SIP profile: its ICE servers with their credentials, and the realm", async () => {
    const password = `Pw${uid()}x9`;
    const n = await getCommand('sip_number.create').run(
      { api },
      { number: String(7100 + Math.floor(Math.random() * 800)), name: 'Desk', domain_id: group, password },
    );
    const c = await conciergeUser(api, group, n.data.id, 'Desk concierge');
    const own = await signIn(ts, c.login, c.password);
    const profile = await getCommand('sip.profile').run({ api: own }, {});
    expect(profile?.realm).toBe('lintel');
    expect(profile?.ice_servers).toEqual([
      {
        urls: ['turn:turn.towers.example:3478?transport=udp', 'turns:turn.towers.example:5349'],
        username: 'desk',
        credential: expect.stringMatching(/^turn-.*-secret$/) as unknown,
      },
      { urls: ['stun:stun.towers.example:3478'] },
    ]);
  });

  it('a new realm: numbers made before it are counted, a password set now is made for it', async () => {
    const before = await getCommand('sip_number.create').run(
      { api },
      {
        number: String(8100 + Math.floor(Math.random() * 800)),
        name: 'Old',
        domain_id: group,
        password: 'Old4Pass',
      },
    );
    const s = await sipUpdate({ realm: 'towers.example' });
    expect(s.data.realm).toBe('towers.example');
    expect(s.numbers_other_realm).toBeGreaterThanOrEqual(2);
    // its password set again: made for the new realm, no longer counted
    await getCommand('sip_number.update').run({ api }, { id: before.data.id, password: 'New4Pass' });
    const row = await ts.server.context.db
      .selectFrom('sip_numbers')
      .select(['ha1_realm', 'password_ha1', 'number'])
      .where('id', '=', before.data.id)
      .executeTakeFirstOrThrow();
    expect(row.ha1_realm).toBe('towers.example');
    expect(row.password_ha1).toBe(
      crypto.createHash('md5').update(`${row.number}:towers.example:New4Pass`).digest('hex'),
    );
    expect((await sipGet()).numbers_other_realm).toBe(s.numbers_other_realm - 1);
    // null: back to the installation's realm
    const back = await sipUpdate({ realm: null });
    expect(back.data.realm).toBe('lintel');
    expect(back.overridden).not.toContain('realm');
  });

  it('refuse what cannot be used, naming the field, and keep what was saved', async () => {
    const saved = JSON.stringify(await storedSip());
    expect(await refused('sip', { realm: 'towers example' })).toEqual(['realm']);
    expect(await refused('sip', { public_address: 'http://sip.example' })).toEqual(['public_address']);
    expect(await refused('sip', { public_port: 70000 })).toEqual(['public_port']);
    expect(await refused('sip', { ring_timeout_s: 1 })).toEqual(['ring_timeout_s']);
    expect(await refused('sip', { route_timeout_s: 60 })).toEqual(['route_timeout_s']);
    expect(await refused('sip', { ice_servers: [{ urls: ['https://stun.example'] }] })).toEqual([
      'ice_servers.0.urls.0',
    ]);
    // TURN needs a username and a credential
    expect(await refused('sip', { ice_servers: [{ urls: ['turn:turn.example'], username: 'u' }] })).toEqual([
      'ice_servers.0.credential',
    ]);
    // the placeholder for a server that has no credential
    expect(
      await refused('sip', {
        ice_servers: [{ urls: ['turn:other.example'], username: 'u', credential: PASSWORD_PLACEHOLDER }],
      }),
    ).toEqual(['ice_servers.0.credential']);
    expect(await refused('sip', { unknown_field: 1 })).toEqual(['unknown_field']);
    expect(JSON.stringify(await storedSip())).toBe(saved);
    // a public port without a public address
    await sipUpdate({ public_address: null, public_port: null });
    expect(await refused('sip', { public_port: 5070 })).toEqual(['public_address']);
  });
});

/** A Google service account key as the Firebase console gives it (its RSA key made here). */
function serviceAccount(): string {
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  return JSON.stringify({
    type: 'service_account',
    project_id: 'towers-app',
    private_key_id: 'abc',
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }),
    client_email: 'push@towers-app.iam.gserviceaccount.com',
  });
}

describe('the push server', () => {
  it('is none until set; FCM needs its project and a service account key, which is never returned', async () => {
    const none = await getCommand('settings.push_get').run({ api }, {});
    expect(none.data.provider).toBe('none');
    expect(none.ready).toBe(false);
    expect(await refused('push', { provider: 'fcm' })).toEqual(['fcm_project_id', 'fcm_service_account']);
    expect(
      await refused('push', {
        provider: 'fcm',
        fcm_project_id: 'towers-app',
        fcm_service_account: '{"type":"x"}',
      }),
    ).toEqual(['fcm_service_account']);
    const account = serviceAccount();
    const saved = await pushUpdate({
      provider: 'fcm',
      fcm_project_id: 'towers-app',
      fcm_service_account: account,
    });
    expect(saved.ready).toBe(true);
    expect(saved.data.fcm_service_account).toBe(PASSWORD_PLACEHOLDER);
    const key = (JSON.parse(account) as { private_key: string }).private_key;
    const marker = key.split('\n')[1]!;
    expect(JSON.stringify(await getCommand('settings.push_get').run({ api }, {}))).not.toContain(marker);
    // the placeholder keeps it
    const again = await pushUpdate({ fcm_service_account: PASSWORD_PLACEHOLDER, endpoint_url: '' });
    expect(again.ready).toBe(true);
    const stored = await sql<{
      p: { fcm_service_account: string };
    }>`select settings->'push_settings' as p from projects where id = 1`.execute(ts.server.context.db);
    expect(stored.rows[0]!.p.fcm_service_account).toBe(account);
    expect(await auditText()).not.toContain(marker);
    expect(ts.logs()).not.toContain(marker);
  });

  it('APNs needs its team, key id, bundle id and an EC token key; a relay needs its address', async () => {
    const { privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const p8 = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    const rsa = crypto
      .generateKeyPairSync('rsa', { modulusLength: 2048 })
      .privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    expect(await refused('push', { provider: 'apns' })).toEqual([
      'apns_team_id',
      'apns_key_id',
      'apns_topic',
      'apns_key',
    ]);
    const apns = {
      provider: 'apns',
      apns_team_id: 'AB12CD34EF',
      apns_key_id: 'KEY1234567',
      apns_topic: 'com.towers.app',
    };
    expect(await refused('push', { ...apns, apns_key: rsa })).toEqual(['apns_key']);
    expect(await refused('push', { ...apns, apns_team_id: 'lower case' })).toEqual(['apns_team_id']);
    const saved = await pushUpdate({ ...apns, apns_key: p8, apns_production: false });
    expect(saved).toMatchObject({
      ready: true,
      data: { apns_key: PASSWORD_PLACEHOLDER, apns_production: false },
    });
    expect(await refused('push', { provider: 'gateway' })).toEqual(['endpoint_url']);
    expect(await refused('push', { provider: 'gateway', endpoint_url: 'ftp://relay' })).toEqual([
      'endpoint_url',
    ]);
    const relay = await pushUpdate({
      provider: 'gateway',
      endpoint_url: 'https://push.towers.example/v1',
      api_key: 'relay-key-secret',
    });
    expect(relay).toMatchObject({ ready: true, data: { api_key: PASSWORD_PLACEHOLDER } });
    // an emptied key is removed
    expect((await pushUpdate({ api_key: '' })).data.api_key).toBe('');
    expect((await pushUpdate({ provider: 'none' })).ready).toBe(false);
  });
});
