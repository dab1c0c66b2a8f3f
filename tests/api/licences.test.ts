/**
 * Licences (issue 15): signed licence files and their catalogue errors, the cloud call, stacking, the
 * warning's states and audience, its notifications on the chosen schedule, the evaluation licence of a
 * first start, and features switching off when the licence in force expires. Time moves on the server's
 * ManualClock; nothing here sleeps.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import { LICENCE_FORMAT, type ApiClient } from '@lintel/core';
import { ManualClock } from '../../apps/server/src/clock';
import { startTestServer, type TestServer } from '../support/server';
import { admin, everyFeatureOn, failure, rootGroup, secondProject, uid, userWith } from '../support/fixtures';

const DAY = 86_400_000;
const T0 = Date.parse('2026-03-01T12:00:00Z');
/** the warning's own days, 100 after T0 */
const T1 = T0 + 100 * DAY;

function keyPair() {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return { privateKey, publicB64: publicKey.export({ format: 'der', type: 'spki' }).toString('base64') };
}

/** A licence file as `lintel licences issue` writes it, signed by `key`. */
function licenceFile(key: KeyObject, payload: Record<string, unknown>): string {
  const bytes = Buffer.from(JSON.stringify(payload), 'utf8');
  return JSON.stringify({
    format: LICENCE_FORMAT,
    payload: bytes.toString('base64'),
    signature: sign(null, bytes, key).toString('base64'),
  });
}

function features(counts: { sip?: number } = {}) {
  const f = everyFeatureOn() as Record<string, Record<string, unknown>>;
  const full = {
    sip: { license_count: counts.sip ?? null, is_sip_trunks_enabled: false, ...f.sip },
    mobile_app: { license_count: null, ...f.mobile_app },
    elevator: f.elevator,
    license_plate: f.license_plate,
    face_id: f.face_id,
    amenity: f.amenity,
    ukey2: { license_count: null, ...f.ukey2 },
    identifier: f.identifier,
  };
  return full;
}

const vendor = keyPair();
const stranger = keyPair();
const clock = new ManualClock(T0);
let cloudReply: { status: number; body: string } = { status: 404, body: '' };
let cloud: http.Server;
let cloudUrl: string;
let ts: TestServer;
let api: ApiClient;
let instance: string;

const payload = (over: Record<string, unknown> = {}) => ({
  id: `lic-${uid()}`,
  issuer: 'Vendor',
  instance_id: instance,
  valid_from: new Date(clock.now().getTime() - DAY).toISOString(),
  valid_to: new Date(clock.now().getTime() + 100 * DAY).toISOString(),
  features: features(),
  units_per_licence: 3,
  ...over,
});
const add = (client: ApiClient, text: string) =>
  getCommand('licence.add_file').run(
    { api: client },
    { file: new File([text], 'licence.json', { type: 'application/json' }) },
  );

beforeAll(async () => {
  cloud = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(cloudReply.status, { 'content-type': 'application/json' });
      res.end(cloudReply.body);
    });
  });
  await new Promise<void>((r) => cloud.listen(0, '127.0.0.1', r));
  cloudUrl = `http://127.0.0.1:${(cloud.address() as AddressInfo).port}/licence`;
  ts = await startTestServer({
    config: {
      clock,
      // no background worker: the daily licence checks run where a test drains the queue, never while
      // another test has the clock elsewhere
      modules: ['events', 'http'],
      licences: { publicKeys: [vendor.publicB64], cloudUrl, cloudTimeoutMs: 2000, evaluationDays: 0 },
    },
  });
  api = await admin(ts);
  instance = (await getCommand('licence.list').run({ api }, {})).instance_id;
});
afterAll(async () => {
  await ts?.close();
  await new Promise((r) => cloud?.close(r));
});

describe('a licence file', () => {
  it('signed by another key is refused: sign wrong', async () => {
    const err = await failure(add(api, licenceFile(stranger.privateKey, payload())));
    expect(err).toMatchObject({ status: 422, code: 'license_sign_wrong' });
  });

  it('with a payload changed after signing is refused: sign wrong', async () => {
    const doc = JSON.parse(licenceFile(vendor.privateKey, payload()));
    const changed = { ...payload(), valid_to: '2099-01-01T00:00:00.000Z' };
    doc.payload = Buffer.from(JSON.stringify(changed)).toString('base64');
    expect(await failure(add(api, JSON.stringify(doc)))).toMatchObject({ code: 'license_sign_wrong' });
  });

  it('for another instance is refused: none found for project', async () => {
    const err = await failure(add(api, licenceFile(vendor.privateKey, payload({ instance_id: 'other' }))));
    expect(err).toMatchObject({ status: 422, code: 'license_not_found_for_project' });
    expect(err.body?.data).toMatchObject({ instance_id: instance });
  });

  it('that has ended is refused: expired', async () => {
    const ended = payload({
      valid_from: new Date(T0 - 40 * DAY).toISOString(),
      valid_to: new Date(clock.now().getTime() - DAY).toISOString(),
    });
    expect(await failure(add(api, licenceFile(vendor.privateKey, ended)))).toMatchObject({
      status: 422,
      code: 'license_expired',
    });
  });

  it('signed but unreadable, ending before it starts, or added twice cannot be applied', async () => {
    const bad = { ...payload(), units_per_licence: 0 };
    expect(await failure(add(api, licenceFile(vendor.privateKey, bad)))).toMatchObject({
      code: 'license_cannot_be_applied',
    });
    const backwards = payload({ valid_from: new Date(T0 + 9 * DAY).toISOString() });
    backwards.valid_to = new Date(T0 + 2 * DAY).toISOString();
    expect(await failure(add(api, licenceFile(vendor.privateKey, backwards)))).toMatchObject({
      code: 'license_cannot_be_applied',
    });
    const once = licenceFile(vendor.privateKey, payload());
    const first = await add(api, once);
    const again = await failure(add(api, once));
    expect(again).toMatchObject({ code: 'license_cannot_be_applied' });
    expect(again.body?.data).toMatchObject({ reason: 'already_added', id: first.id });
    await getCommand('licence.delete').run({ api }, { id: first.id });
  });

  it('that is no licence file at all is an invalid file, and nothing is added', async () => {
    expect(await failure(add(api, '{"hello": 1}'))).toMatchObject({ code: 'invalid_file' });
    expect((await getCommand('licence.list').run({ api }, {})).items).toEqual([]);
  });
});

describe('licences stack, expire, and gate features', () => {
  it('adds, lists the one in force with its days left, sums counts, and turns features off at expiry', async () => {
    const before = await getCommand('server.settings').run({ api }, {});
    expect(before.license_warning).toMatchObject({ status: 'no_license' });
    // the white-label logo needs mobile_app.is_white_label_enabled: refused without a licence
    const root = await rootGroup(api);
    const logo = () => getCommand('group.whitelabel_logo_delete').run({ api }, { id: root });
    expect(await failure(logo())).toMatchObject({ status: 403, code: 'feature_not_licensed' });

    const a = await add(
      api,
      licenceFile(
        vendor.privateKey,
        payload({ features: features({ sip: 10 }), valid_to: new Date(T0 + 20 * DAY).toISOString() }),
      ),
    );
    const b = await add(
      api,
      licenceFile(
        vendor.privateKey,
        payload({ features: features({ sip: 5 }), valid_to: new Date(T0 + 30 * DAY).toISOString() }),
      ),
    );
    const list = await getCommand('licence.list').run({ api }, {});
    expect(list.active_ids.sort()).toEqual([a.id, b.id].sort());
    expect(list.in_force).toMatchObject({ id: b.id, days_left: 30 });
    expect(list.items.find((i) => i.id === a.id)).toMatchObject({
      kind: 'file',
      state: 'active',
      days_left: 20,
    });
    expect(list.evaluation).toBe(false);
    const usage = await getCommand('licence.usage').run({ api }, {});
    expect(usage).toMatchObject({
      sip_numbers_used: 0,
      mobile_app_used: 0,
      ukey2_used: 0,
      units_per_licence: 3,
    });
    expect(usage.features.sip).toEqual({ used: 0, max: 15 });
    expect((await getCommand('profile.get').run({ api }, {})).license_info.sip.license_count).toBe(15);
    await logo();

    // 20 days on: a has ended, b is in force with 10 days left, within notify_before (14): will_expire
    clock.set(T0 + 20 * DAY);
    const warned = await getCommand('server.settings').run({ api }, {});
    expect(warned.license_warning).toEqual({ status: 'will_expire', days: 10, evaluation: false });
    const later = await getCommand('licence.list').run({ api }, {});
    expect(later.active_ids).toEqual([b.id]);
    expect(later.items.find((i) => i.id === a.id)!.state).toBe('expired');
    expect(later.items.find((i) => i.id === b.id)!.state).toBe('ending');

    // past the last one: already_expired, features off, the gate answers license_expired
    clock.set(T0 + 31 * DAY);
    expect((await getCommand('server.settings').run({ api }, {})).license_warning).toMatchObject({
      status: 'already_expired',
      days: 0,
    });
    expect((await getCommand('profile.get').run({ api }, {})).license_info.mobile_app.is_enabled).toBe(false);
    expect(await failure(logo())).toMatchObject({ status: 403, code: 'license_expired' });

    // deleting both leaves no licence
    for (const id of [a.id, b.id]) await getCommand('licence.delete').run({ api }, { id });
    expect(await failure(getCommand('licence.delete').run({ api }, { id: a.id }))).toMatchObject({
      code: 'item_not_found',
    });
    expect((await getCommand('server.settings').run({ api }, {})).license_warning.status).toBe('no_license');
    clock.set(T0);
  });

  it('a licence of another project is not listed, deleted or counted here', async () => {
    const other = await secondProject(ts);
    const otherInstance = (await getCommand('licence.list').run({ api: other.api }, {})).instance_id;
    expect(otherInstance).not.toBe(instance);
    const added = await add(
      other.api,
      licenceFile(vendor.privateKey, payload({ instance_id: otherInstance })),
    );
    expect((await getCommand('licence.list').run({ api }, {})).items).toEqual([]);
    expect(await failure(getCommand('licence.delete').run({ api }, { id: added.id }))).toMatchObject({
      code: 'item_not_found',
    });
    // the other project's file is for its own instance only
    expect(
      await failure(add(api, licenceFile(vendor.privateKey, payload({ instance_id: otherInstance })))),
    ).toMatchObject({ code: 'license_not_found_for_project' });
  });
});

describe('add from cloud', () => {
  it('maps the licence server replies to the catalogue', async () => {
    const run = () => getCommand('licence.add_cloud').run({ api }, {});
    cloudReply = { status: 404, body: '{}' };
    expect(await failure(run())).toMatchObject({ code: 'license_not_found_for_project' });
    cloudReply = { status: 409, body: '{}' };
    expect(await failure(run())).toMatchObject({ status: 409, code: 'license_hijack' });
    cloudReply = { status: 503, body: 'down' };
    expect(await failure(run())).toMatchObject({ status: 502, code: 'license_server_not_responding' });
    cloudReply = { status: 200, body: licenceFile(stranger.privateKey, payload()) };
    expect(await failure(run())).toMatchObject({ code: 'license_sign_wrong' });
    cloudReply = { status: 200, body: licenceFile(vendor.privateKey, payload()) };
    const added = await run();
    const list = await getCommand('licence.list').run({ api }, {});
    expect(list.items.find((i) => i.id === added.id)).toMatchObject({ kind: 'cloud' });
    await getCommand('licence.delete').run({ api }, { id: added.id });
  });

  it('a licence server that does not answer in time is not responding; none configured says so at once', async () => {
    const silent = http.createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const ctx = ts.server.context.config.licences;
    const saved = ctx.cloudUrl;
    try {
      ctx.cloudUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/`;
      ctx.cloudTimeoutMs = 200;
      expect(await failure(getCommand('licence.add_cloud').run({ api }, {}))).toMatchObject({
        code: 'license_server_not_responding',
      });
      ctx.cloudUrl = undefined;
      expect(await failure(getCommand('licence.add_cloud').run({ api }, {}))).toMatchObject({
        status: 409,
        code: 'license_cloud_not_configured',
      });
    } finally {
      ctx.cloudUrl = saved;
      ctx.cloudTimeoutMs = 2000;
      silent.closeAllConnections();
      await new Promise((r) => silent.close(r));
    }
  });
});

describe('the warning and its audience', () => {
  it('reaches licence managers persistently and on the schedule, never a user without the permission', async () => {
    // days of its own, after those the other tests visited: the daily checks they left behind are past
    clock.set(T1);
    const api = await admin(ts); // the file's session has expired by then
    const root = await rootGroup(api);
    const manager = await userWith(ts, api, { permissions: ['licenses.manage'], domains: [root] });
    const viewer = await userWith(ts, api, { permissions: ['licenses.view'], domains: [root] });
    const plain = await userWith(ts, api, { permissions: ['users.view'], domains: [root] });
    const db = ts.server.context.db;
    for (const [u, email] of [
      [manager, `m${uid()}@example.test`],
      [viewer, `v${uid()}@example.test`],
      [plain, `p${uid()}@example.test`],
    ] as const) {
      const row = await db
        .selectFrom('users')
        .select('account_id')
        .where('id', '=', u.id)
        .executeTakeFirstOrThrow();
      await db.updateTable('accounts').set({ email }).where('id', '=', row.account_id).execute();
    }
    const added = await add(
      api,
      licenceFile(vendor.privateKey, payload({ valid_to: new Date(T1 + 10 * DAY + 3600_000).toISOString() })),
    );
    const settingsOf = async (u: { client: () => Promise<ApiClient> }) =>
      (await getCommand('server.settings').run({ api: await u.client() }, {})).license_warning;
    expect(await settingsOf(manager)).toEqual({ status: 'will_expire', days: 10, evaluation: false });
    expect(await settingsOf(viewer)).toMatchObject({ status: 'will_expire', days: 10 });
    expect(await settingsOf(plain)).toEqual({ status: 'normal', days: null });
    // a plain user may not read or change licences either
    const plainApi = await plain.client();
    expect(await failure(getCommand('licence.list').run({ api: plainApi }, {}))).toMatchObject({
      status: 403,
    });
    const viewerApi = await viewer.client();
    expect(
      await failure(getCommand('licence.delete').run({ api: viewerApi }, { id: added.id })),
    ).toMatchObject({
      status: 403,
      code: 'method_prohibited',
    });
    expect(await failure(add(viewerApi, licenceFile(vendor.privateKey, payload())))).toMatchObject({
      status: 403,
      code: 'method_prohibited',
    });
    expect(await failure(getCommand('licence.add_cloud').run({ api: viewerApi }, {}))).toMatchObject({
      status: 403,
    });

    const mailsTo = async () =>
      (await db.selectFrom('outbox').select(['to_address', 'subject']).orderBy('id').execute()).filter((m) =>
        /licence/i.test(m.subject),
      );
    const jobs = ts.server.context.jobs;
    // runs what is due now, and waits for what the server's own worker took meanwhile
    const settle = async () => {
      await jobs.drain();
      await jobs.idle();
      await jobs.drain();
    };
    await settle();
    let mails = await mailsTo();
    const managerMail = mails.filter((m) => m.subject.includes('10 days'));
    const recipients = new Set(managerMail.map((m) => m.to_address));
    const addresses = await db
      .selectFrom('users')
      .innerJoin('accounts', 'accounts.id', 'users.account_id')
      .select(['users.id', 'accounts.email'])
      .where('users.id', 'in', [manager.id, viewer.id, plain.id])
      .execute();
    const addr = (id: number) => addresses.find((a) => a.id === id)!.email!;
    expect(recipients.has(addr(manager.id))).toBe(true);
    expect(recipients.has(addr(viewer.id))).toBe(true);
    expect(recipients.has(addr(plain.id))).toBe(false);
    const first = mails.length;

    // the same day again: nothing more (everyday mode)
    await settle();
    expect((await mailsTo()).length).toBe(first);
    // the next day: the daily check notifies again
    clock.set(T1 + DAY);
    await settle();
    mails = await mailsTo();
    expect(mails.length).toBeGreaterThan(first);
    expect(mails.some((m) => m.to_address === addr(plain.id))).toBe(false);

    // mode once: no more for the same warning, even days later
    await getCommand('licence.notify_update').run({ api }, { mode: 'once' });
    const afterOnce = (await mailsTo()).length;
    clock.set(T1 + 3 * DAY);
    await settle();
    expect((await mailsTo()).length).toBe(afterOnce);
    // notify_before is the window of will_expire
    await getCommand('licence.notify_update').run({ api }, { notify_before: 5, mode: 'everyday' });
    expect(await settingsOf(manager)).toMatchObject({ status: 'normal', days: 7 });
    expect(await getCommand('licence.notify_get').run({ api }, {})).toEqual({
      notify_before: 5,
      mode: 'everyday',
    });
    await getCommand('licence.notify_update').run({ api }, { notify_before: 14 });
    await getCommand('licence.delete').run({ api }, { id: added.id });
    clock.set(T0);
  });
});

describe('the evaluation licence', () => {
  it('a first start on an empty database runs 30 days on an evaluation licence, marked as such', async () => {
    const evalClock = new ManualClock(T0);
    const fresh = await startTestServer({
      config: { clock: evalClock, licences: { publicKeys: [], cloudTimeoutMs: 1000, evaluationDays: 30 } },
    });
    try {
      const a = await admin(fresh);
      const list = await getCommand('licence.list').run({ api: a }, {});
      expect(list.evaluation).toBe(true);
      expect(list.items).toHaveLength(1);
      expect(list.items[0]).toMatchObject({ kind: 'evaluation', days_left: 30, state: 'active' });
      const info = (await getCommand('profile.get').run({ api: a }, {})).license_info;
      expect(
        info.sip.is_web_dialer_enabled && info.elevator.is_enabled && info.face_id.is_enabled_for_guests,
      ).toBe(true);
      expect((await getCommand('server.settings').run({ api: a }, {})).license_warning).toEqual({
        status: 'normal',
        days: 30,
        evaluation: true,
      });
      // 30 days on (the session has ended too: sign in again)
      evalClock.set(T0 + 30 * DAY);
      const b = await admin(fresh);
      expect((await getCommand('server.settings').run({ api: b }, {})).license_warning.status).toBe(
        'already_expired',
      );
      expect((await getCommand('profile.get').run({ api: b }, {})).license_info.sip.is_enabled).toBe(false);
    } finally {
      await fresh.close();
    }
  });

  it('gives way to a bought licence in force: the bought one alone decides, and the evaluation is back when it goes', async () => {
    const evalClock = new ManualClock(T0);
    const fresh = await startTestServer({
      config: {
        clock: evalClock,
        licences: { publicKeys: [vendor.publicB64], cloudTimeoutMs: 1000, evaluationDays: 30 },
      },
    });
    try {
      const a = await admin(fresh);
      const own = (await getCommand('licence.list').run({ api: a }, {})).instance_id;
      const evaluationId = (await getCommand('licence.list').run({ api: a }, {})).items[0]!.id;
      // a virtual number, while the evaluation licences SIP: it counts against the SIP licences
      await getCommand('sip_number.create').run(
        { api: a },
        { number: '200', name: 'Concierge', domain_id: await rootGroup(a) },
      );
      expect((await getCommand('licence.usage').run({ api: a }, {})).sip_numbers_used).toBe(1);
      // bought: everything but SIP, ending before the evaluation does
      const noSip = {
        ...features(),
        sip: {
          is_enabled: false,
          license_count: null,
          is_sip_trunks_enabled: false,
          is_web_dialer_enabled: false,
        },
      };
      const bought = await add(
        a,
        licenceFile(
          vendor.privateKey,
          payload({ instance_id: own, features: noSip, valid_to: new Date(T0 + 20 * DAY).toISOString() }),
        ),
      );
      const list = await getCommand('licence.list').run({ api: a }, {});
      expect(list.active_ids).toEqual([bought.id]);
      expect(list.evaluation).toBe(false);
      expect(list.in_force).toMatchObject({ id: bought.id, days_left: 20 });
      expect(list.items.find((i) => i.id === evaluationId)).toMatchObject({
        kind: 'evaluation',
        state: 'superseded',
        days_left: 30,
      });
      const info = (await getCommand('profile.get').run({ api: a }, {})).license_info;
      expect(info.sip.is_enabled).toBe(false);
      // the server refuses what SIP gates, naming the feature and the server licence
      expect(await failure(getCommand('sip_number.list').run({ api: a }, {}))).toMatchObject({
        status: 403,
        code: 'feature_not_licensed',
        body: { data: { feature: 'sip', by: 'server' } },
      });
      expect(info.elevator.is_enabled).toBe(true);
      expect((await getCommand('server.settings').run({ api: a }, {})).license_warning).toEqual({
        status: 'normal',
        days: 20,
        evaluation: false,
      });
      // the bought licence deleted: the evaluation is in force again, every feature on
      await getCommand('licence.delete').run({ api: a }, { id: bought.id });
      const back = await getCommand('licence.list').run({ api: a }, {});
      expect(back).toMatchObject({ active_ids: [evaluationId], evaluation: true });
      expect((await getCommand('profile.get').run({ api: a }, {})).license_info.sip.is_enabled).toBe(true);
      expect((await getCommand('sip_number.list').run({ api: a }, {})).data.map((n) => n.number)).toEqual([
        '200',
      ]);
    } finally {
      await fresh.close();
    }
  });
});

describe('counted features', () => {
  it('virtual numbers hold at the SIP licences’ exact capacity and refuse one more, with used and max', async () => {
    // one SIP licence of 3 units: 3 numbers
    const added = await add(api, licenceFile(vendor.privateKey, payload({ features: features({ sip: 1 }) })));
    const root = await rootGroup(api);
    const made: number[] = [];
    try {
      for (let i = 0; i < 3; i++)
        made.push(
          (
            await getCommand('sip_number.create').run(
              { api },
              { number: `7${uid().replace(/\D/g, '').slice(0, 8)}${i}`, name: `Line ${i}`, domain_id: root },
            )
          ).data.id,
        );
      const refused = await failure(
        getCommand('sip_number.create').run(
          { api },
          { number: '79990001', name: 'One more', domain_id: root },
        ),
      );
      expect(refused).toMatchObject({ status: 422, code: 'limit_exceeded' });
      expect(refused.data).toMatchObject({ used: 3, max: 3, feature: 'sip' });
      expect((await getCommand('licence.usage').run({ api }, {})).features.sip).toEqual({ used: 3, max: 1 });
      // a number given back makes room for one
      await getCommand('sip_number.delete').run({ api }, { id: made.pop()! });
      made.push(
        (
          await getCommand('sip_number.create').run(
            { api },
            { number: '79990001', name: 'One more', domain_id: root },
          )
        ).data.id,
      );
    } finally {
      for (const id of made) await getCommand('sip_number.delete').run({ api }, { id });
      await getCommand('licence.delete').run({ api }, { id: added.id });
    }
  });
});
