/**
 * Which doors a caller reaches (`door.list`, `door.open`; docs/decisions.md "Doors for the concierge"): the
 * scope his call permissions give — `calls.call_all` the project, `calls.call_descendants` his groups and
 * those below, any other call permission his own groups — devices that hold a lock only, searched by name,
 * serial or SIP number; a door on mqtt that is offline is `device_offline`, one without a protocol
 * `device_protocol_none`, and neither reaches a device. The simulated panels of tests/cli/doors.test.ts open.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import {
  admin,
  everyFeatureOn,
  failure,
  group,
  licence,
  rootGroup,
  uid,
  userWith,
} from '../support/fixtures';

let ts: TestServer;
let api: ApiClient;
let root: number;
let building: number;
let entrance: number;
let other: number;

beforeAll(async () => {
  ts = await startTestServer({ config: { modules: ['events', 'devices', 'http'] } });
  await licence(ts, everyFeatureOn());
  api = await admin(ts);
  root = await rootGroup(api);
  building = await group(api, `Building ${uid()}`, root);
  entrance = await group(api, `Entrance ${uid()}`, building);
  other = await group(api, `Other ${uid()}`, root);
});
afterAll(async () => {
  await ts?.close();
});

async function device(
  name: string,
  domain_id: number,
  type: 'panel' | 'accesscontroller' | 'barrier' | 'monitor' | 'ip_camera' = 'panel',
  protocol: 'mqtt' | 'http' | 'none' = 'mqtt',
): Promise<number> {
  const serial = `DS-${uid()}`;
  const { data } = await getCommand('device.create').run(
    { api },
    { name, type, serial_number: serial, domain_id, protocol },
  );
  return data.id;
}

it('reaches the doors of the scope the call permissions give, devices with a lock only', async () => {
  const tag = uid();
  const ids = {
    building: await device(`${tag} building panel`, building),
    entrance: await device(`${tag} entrance controller`, entrance, 'accesscontroller'),
    gate: await device(`${tag} gate`, other, 'barrier'),
    monitor: await device(`${tag} monitor`, building, 'monitor'),
    camera: await device(`${tag} camera`, building, 'ip_camera'),
  };
  const doorsOf = async (permissions: string[]) => {
    const u = await userWith(ts, api, { permissions, domains: [building] });
    const list = await getCommand('door.list').run({ api: await u.client() }, { search: tag });
    return list.data.map((d) => d.id).sort((a, b) => a - b);
  };
  const sorted = (...xs: number[]) => xs.sort((a, b) => a - b);
  expect(await doorsOf(['calls.call_all'])).toEqual(sorted(ids.building, ids.entrance, ids.gate));
  expect(await doorsOf(['calls.call_descendants'])).toEqual(sorted(ids.building, ids.entrance));
  expect(await doorsOf(['calls.concierge_receive'])).toEqual([ids.building]);
  expect(await doorsOf(['calls.call_own_group', 'calls.call_descendants'])).toEqual(
    sorted(ids.building, ids.entrance),
  );

  // a door out of reach, and a device that is no door, are not found
  const u = await userWith(ts, api, { permissions: ['calls.concierge_receive'], domains: [building] });
  const client = await u.client();
  for (const id of [ids.entrance, ids.monitor]) {
    const e = await failure(getCommand('door.open').run({ api: client }, { id }));
    expect([e.status, e.message]).toEqual([404, 'item_not_found']);
  }
  // without any call permission: refused
  const none = await userWith(ts, api, { permissions: ['devices.view_all'], domains: [building] });
  const refused = await failure(getCommand('door.list').run({ api: await none.client() }, {}));
  expect(refused.status).toBe(403);
});

it('searches by name, serial number and SIP number, with the total', async () => {
  const tag = uid();
  const id = await device(`${tag} north door`, root);
  await device(`${tag} south door`, root);
  const serial = (await getCommand('device.get').run({ api }, { id })).serial_number;
  const number = String(80000 + Math.floor(Math.random() * 9999));
  await getCommand('sip_number.create').run(
    { api },
    { number, name: 'North door', domain_id: root, device_id: id, password: 'Door-secret-1' },
  );
  const find = (search: string, limit?: number) =>
    getCommand('door.list').run({ api }, { search, ...(limit ? { limit } : {}) });
  expect((await find(`${tag} north`)).data.map((d) => [d.id, d.sip_number])).toEqual([[id, { number }]]);
  expect((await find(serial)).data.map((d) => d.id)).toEqual([id]);
  expect((await find(number)).data.map((d) => d.id)).toEqual([id]);
  const both = await find(tag, 1);
  expect([both.data.length, both.meta.total]).toEqual([1, 2]);
  // a pattern's own characters are plain text
  expect((await find(`${tag}%`)).data).toEqual([]);
});

it('refuses a door that is offline on mqtt, or has no protocol, with the catalogue codes', async () => {
  const offline = await device(`Offline ${uid()}`, root);
  const e = await failure(getCommand('door.open').run({ api }, { id: offline }));
  expect(e.message).toBe('device_offline');
  const none = await device(`No protocol ${uid()}`, root, 'panel', 'none');
  const n = await failure(getCommand('door.open').run({ api }, { id: none }));
  expect(n.message).toBe('device_protocol_none');
});
