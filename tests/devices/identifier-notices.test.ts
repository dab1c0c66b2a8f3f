/**
 * The ACS notifications of issue 16 item 3: an identifier used at a device (granted) is `identifier_used`,
 * one refused because it is revoked is `revoked_identifier_used`. They go to the users who may read that
 * device's events (`devices.view_events` within their device view scope over the device's group) and whose
 * settings say `acs: true`, in the transaction that stores the event: a push sent again stores nothing and
 * tells no one again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import type { ApiClient, NotificationRecord } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin, group, rootGroup, uid, userWith } from '../support/fixtures';

async function push(ts: TestServer, d: { login: string; password: string }, events: unknown[]) {
  const res = await fetch(`${ts.url}/api/v0/device-gateway/logs`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Basic ${Buffer.from(`${d.login}:${d.password}`).toString('base64')}`,
    },
    body: JSON.stringify({ events }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** The ACS tab of a user's notifications. */
async function acs(api: ApiClient): Promise<NotificationRecord[]> {
  return (await getCommand('notification.list').run({ api }, { type: 'acs', offset: 0, limit: 100 })).data;
}

describe('identifier used / revoked identifier used notifications', () => {
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

  it('reach the users with the permission and the scope whose settings say acs, once per stored event', async () => {
    const a = await group(api, `A ${uid()}`, root);
    const b = await group(api, `B ${uid()}`, root);
    const serial = `IDN-${uid()}`;
    const { data: device } = await getCommand('device.create').run(
      { api },
      { name: `Panel ${serial}`, type: 'panel', serial_number: serial, domain_id: a, protocol: 'http' },
    );
    const creds = await getCommand('device.credentials').run({ api }, { id: device.id });

    const person = async (permissions: string[], domains: number[], acsOn: boolean) => {
      const client = await (await userWith(ts, api, { permissions, domains })).client();
      await getCommand('notification.settings_update').run({ api: client }, { acs: acsOn });
      return client;
    };
    // told: the device's group with the event permission; the group above it through view_descendant
    const inGroup = await person(['devices.view_events', 'devices.view'], [a], true);
    const above = await person(['devices.view_events', 'devices.view_descendant'], [root], true);
    const eventsOnly = await person(['devices.view_events'], [a], true);
    // not told: acs off; another group; seeing devices but not their events
    const acsOff = await person(['devices.view_events', 'devices.view'], [a], false);
    const elsewhere = await person(['devices.view_events', 'devices.view'], [b], true);
    const noEvents = await person(['devices.view_all'], [a], true);

    const n = uid();
    const events = [
      {
        event_id: `${n}-1`,
        kind: 'identifier_used',
        identifier_type: 'card',
        identifier_number: '5550001',
        lock: 1,
        result: 'granted',
      },
      {
        event_id: `${n}-2`,
        kind: 'identifier_refused',
        identifier_type: 'card',
        identifier_number: '5550002',
        lock: 1,
        result: 'denied',
        reason: 'revoked',
      },
      // refused for another reason, and a door opened: no ACS notification
      {
        event_id: `${n}-3`,
        kind: 'identifier_refused',
        identifier_type: 'card',
        identifier_number: '5550003',
        lock: 1,
        result: 'denied',
        reason: 'unknown',
      },
      { event_id: `${n}-4`, kind: 'door_opened', lock: 1, reason: 'button' },
    ];
    expect((await push(ts, creds, events)).status).toBe(200);
    // the acknowledgement was lost: the device sends the same push again, and one of its events twice more
    const again = await push(ts, creds, [...events, events[0]]);
    expect(again).toMatchObject({ status: 200, body: { duplicates: 5 } });

    for (const who of [inGroup, above, eventsOnly]) {
      const got = await acs(who);
      expect(got.map((x) => [x.type, x.data.identifier_number]).sort()).toEqual([
        ['identifier_used', '5550001'],
        ['revoked_identifier_used', '5550002'],
      ]);
      const revoked = got.find((x) => x.type === 'revoked_identifier_used')!;
      expect(revoked).toMatchObject({
        significance: 'important',
        read_at: null,
        data: {
          identifier_type: 'card',
          device: { id: device.id, name: `Panel ${serial}`, serial_number: serial },
          group: { id: a },
        },
      });
      expect(got.find((x) => x.type === 'identifier_used')).toMatchObject({ significance: 'other' });
    }
    for (const who of [acsOff, elsewhere, noEvents]) expect(await acs(who)).toEqual([]);
    // the administrator's default settings say acs: false
    expect(await acs(api)).toEqual([]);
  });
});
