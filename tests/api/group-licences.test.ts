/**
 * Per-group licence settings (issue 15 item 4; spec part 1 §3, part 2 §5, §6, §8): their shape and data
 * shaping, every conflict of the catalogue with its code and data, the licence permissions that reach a
 * group, the gate over the group chain, and the locks that keep two simultaneous changes from passing a
 * parent's maximum together. Runs on PGlite and, with DATABASE_URL, on PostgreSQL.
 */
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { ManualClock } from '../../apps/server/src/clock';
import { runGroupLicenceNotifications } from '../../apps/server/src/licensing/group-notify';
import { startTestServer, type TestServer } from '../support/server';
import {
  admin,
  everyFeatureOn,
  failure,
  group,
  licence,
  rootGroup,
  raw,
  uid,
  userWith,
} from '../support/fixtures';

const clock = new ManualClock(Date.parse('2025-03-15T12:00:00Z'));
let ts: TestServer;
let api: ApiClient;
let root: number;
let role: number;

beforeAll(async () => {
  ts = await startTestServer({ config: { clock } });
  api = await admin(ts);
  await licence(ts, everyFeatureOn());
  root = await rootGroup(api);
  role = (await getCommand('role.create').run({ api }, { name: `Plain ${uid()}`, permissions: [] })).data.id;
});
afterAll(async () => {
  await ts?.close();
});

const off = { is_active: false, from: null, to: null };
const period = (from: string | null, to: string | null) => ({ is_active: true, from, to });
type Period = { is_active: boolean; from: string | null; to: string | null };
/** group licence settings switched on, with these licences */
const settings = (
  ...licenses: { features: Record<string, object>; period?: Period; active?: boolean }[]
) => ({
  license_settings: {
    is_enabled: true,
    licenses: licenses.map((l) => ({
      is_active: l.active ?? true,
      features: l.features,
      restrict_period: l.period ?? off,
    })),
  },
});
const sip = { sip: { is_enabled: true } };
const whiteLabel = { mobile_app: { is_enabled: true, is_white_label_enabled: true } };
const get = async (id: number) => getCommand('group.get').run({ api }, { id });
const newUser = (domains: number[]) =>
  getCommand('user.create').run(
    { api },
    {
      login: `l${uid()}`,
      name: 'Member',
      role,
      domains,
      password: 'pw-long-enough',
      send_registration_link: false,
    },
  );

describe('the shape of a group licence, read and written through the group commands', () => {
  it('stores what it is given, shaped as part 2 §5 says', async () => {
    const id = await group(api, `Shaped ${uid()}`, root, {
      license_settings: {
        is_enabled: true,
        notifications: { period: 'never', notify_before: 14 },
        licenses: [
          {
            is_active: true,
            features: sip,
            restrict_period: { is_active: false, from: '2025-01-01', to: null },
          },
          { is_active: false, features: {}, restrict_period: period('2025-01-01', '2025-12-31') },
        ],
      },
      // numeric strings become numbers, empty counts null
      license_limits: { virtual_numbers: '12', mobile_apps: '', ukey2_keys: 3 },
      guest_identifier_limits: { max_passes_count: '5', max_period_days: '' },
    });
    const g = await get(id);
    expect(g.license_limits).toEqual({ virtual_numbers: 12, mobile_apps: null, ukey2_keys: 3, users: null });
    expect(g.guest_identifier_limits).toEqual({ max_passes_count: 5, max_period_days: null });
    // notifications off are never with 0 days; a period switched off keeps no days
    expect(g.license_settings.notifications).toEqual({ period: 'never', notify_before: 0 });
    expect(g.license_settings.licenses[0]!.restrict_period).toEqual(off);
    expect(g.license_settings.licenses[1]!.restrict_period).toEqual(period('2025-01-01', '2025-12-31'));
    // every flag of a licence's feature set is spelled out, off unless given
    expect(g.license_settings.licenses[0]!.features.sip).toEqual({
      is_enabled: true,
      is_sip_trunks_enabled: false,
      is_web_dialer_enabled: false,
    });
    expect(g.license_settings.licenses[0]!.features.amenity).toEqual({ is_enabled: false });

    // an update changes what it names and keeps the rest
    const up = await getCommand('group.update').run(
      { api },
      {
        id,
        license_settings: { notifications: { period: 'everyday', notify_before: 14 } },
        license_limits: { mobile_apps: 4, virtual_numbers: null },
      },
    );
    expect(up.data.license_settings.notifications).toEqual({ period: 'everyday', notify_before: 14 });
    expect(up.data.license_settings.licenses).toHaveLength(2);
    expect(up.data.license_limits).toEqual({
      virtual_numbers: null,
      mobile_apps: 4,
      ukey2_keys: 3,
      users: null,
    });
    expect(await get(id)).toEqual(up.data);
  });

  it('refuses a period that is not one, and a maximum of nothing it counts', async () => {
    // sent as they are (the commands' own check would refuse them before the server): the server refuses them
    const bad = async (extra: object) => {
      const r = await raw(ts, api, 'PUT', '/domains', {
        body: { name: `Bad ${uid()}`, parent_id: root, ...extra },
      });
      return { status: r.status, message: r.body?.message, data: r.body?.data };
    };
    const cases: [object, string, string][] = [
      [
        settings({ features: sip, period: period(null, null) }),
        'license_settings.licenses.0.restrict_period.from',
        'one_of_required',
      ],
      [
        settings({ features: sip, period: period('2025-06-01', '2025-05-31') }),
        'license_settings.licenses.0.restrict_period.to',
        'period_order',
      ],
      [
        settings({ features: sip, period: period('2025-02-30', null) }),
        'license_settings.licenses.0.restrict_period.from',
        'date',
      ],
      [{ license_limits: { parking_spaces: 3 } }, 'license_limits.parking_spaces', 'unknown_field'],
      [{ license_limits: { users: -1 } }, 'license_limits.users', 'greater_or_equal'],
      [{ license_limits: { users: 'ten' } }, 'license_limits.users', 'invalid_type'],
    ];
    for (const [extra, field, rule] of cases) {
      const e = await bad(extra);
      expect(e.status, field).toBe(422);
      expect(e.message).toBe('check_fields_data');
      expect((e.data as { fields: { field: string; rule: string }[] }).fields).toContainEqual(
        expect.objectContaining({ field, rule }),
      );
    }
  });
});

describe('the conflicts of the catalogue', () => {
  it("a maximum below what the group already uses: used counts greater than the group's", async () => {
    const name = `Used ${uid()}`;
    const g = await group(api, name, root);
    const flat = await group(api, `Flat ${uid()}`, g);
    await newUser([g]);
    await newUser([flat]);
    await newUser([flat]);
    const e = await failure(getCommand('group.update').run({ api }, { id: g, license_limits: { users: 2 } }));
    expect(e.status).toBe(422);
    expect(e.message).toBe('license_used_exceeds_limit');
    expect(e.data).toEqual({ feature: 'users', used: 3, max: 2, group: name, field: 'license_limits.users' });
    expect((await get(g)).license_limits.users).toBeNull();
    // at the count it holds; one more user is "Limit exceeded - used 3, max 3"
    await getCommand('group.update').run({ api }, { id: g, license_limits: { users: 3 } });
    const more = await failure(newUser([flat]));
    expect(more.message).toBe('limit_exceeded');
    expect(more.data).toMatchObject({ used: 3, max: 3, group: name, feature: 'users' });
  });

  it('moving a group whose users would overfill a capped group above: limit exceeded', async () => {
    const name = `Cap ${uid()}`;
    const capped = await group(api, name, root, { license_limits: { users: 2 } });
    await newUser([capped]);
    const wanderer = await group(api, `W ${uid()}`, root);
    await newUser([wanderer]);
    await newUser([wanderer]);
    const e = await failure(getCommand('group.update').run({ api }, { id: wanderer, parent_id: capped }));
    expect(e.status).toBe(422);
    expect(e.message).toBe('limit_exceeded');
    expect(e.data).toEqual({ used: 3, max: 2, group: name, feature: 'users', field: 'parent_id' });
    expect((await get(wanderer)).parent_id).toBe(root);
  });

  it("sums of the children over the parent's maximum", async () => {
    const name = `Sum ${uid()}`;
    const parent = await group(api, name, root, { license_limits: { ukey2_keys: 5 } });
    await group(api, `A ${uid()}`, parent, { license_limits: { ukey2_keys: 3 } });
    const e = await failure(
      getCommand('group.create').run(
        { api },
        { name: `B ${uid()}`, parent_id: parent, license_limits: { ukey2_keys: '3' } },
      ),
    );
    expect(e.status).toBe(422);
    expect(e.message).toBe('children_license_sum_exceeded');
    expect(e.data).toEqual({
      feature: 'ukey2_keys',
      sum: 6,
      max: 5,
      group: name,
      field: 'license_limits.ukey2_keys',
    });
  });

  it("a child's licence period beyond its parent's", async () => {
    const pName = `Parent ${uid()}`;
    const parent = await group(
      api,
      pName,
      root,
      settings({ features: sip, period: period('2025-01-01', '2025-06-30') }),
    );
    const cName = `Child ${uid()}`;
    const e = await failure(
      getCommand('group.create').run(
        { api },
        {
          name: cName,
          parent_id: parent,
          ...settings({ features: sip, period: period('2025-01-01', '2025-12-31') }),
        },
      ),
    );
    expect(e.status).toBe(422);
    expect(e.message).toBe('license_period_child_conflict');
    expect(e.data).toEqual({
      feature: 'sip',
      period: '2025-01-01 – 2025-12-31',
      parent: pName,
      parent_period: '2025-01-01 – 2025-06-30',
      child: cName,
      field: 'license_settings.licenses',
    });
    // without a period of its own the child's licence has no end: beyond the parent's too
    const open = await failure(
      getCommand('group.create').run(
        { api },
        { name: cName, parent_id: parent, ...settings({ features: sip }) },
      ),
    );
    expect(open.data).toMatchObject({ feature: 'sip', period: '… – …' });
    // within it, or for a feature the parent does not grant (the gate keeps that off anyway), it is taken
    const child = await group(
      api,
      cName,
      parent,
      settings({ features: sip, period: period('2025-02-01', '2025-06-30') }),
    );
    expect((await get(child)).license_settings.licenses).toHaveLength(1);
    // and moving a group whose licence runs longer under that parent is the same conflict
    const wanderer = await group(
      api,
      `W ${uid()}`,
      root,
      settings({ features: sip, period: period('2025-01-01', '2026-01-01') }),
    );
    const moved = await failure(getCommand('group.update').run({ api }, { id: wanderer, parent_id: parent }));
    expect(moved.message).toBe('license_period_child_conflict');
  });

  it("a parent's licence period that no longer covers a child's", async () => {
    const pName = `Parent ${uid()}`;
    const parent = await group(api, pName, root, settings({ features: sip }));
    // the child's settings are off: the grandchild answers to the parent
    const middle = await group(api, `Middle ${uid()}`, parent);
    const gName = `Grandchild ${uid()}`;
    await group(api, gName, middle, settings({ features: sip, period: period('2025-03-01', '2025-09-30') }));
    const e = await failure(
      getCommand('group.update').run(
        { api },
        { id: parent, ...settings({ features: sip, period: period('2025-01-01', '2025-06-30') }) },
      ),
    );
    expect(e.status).toBe(422);
    expect(e.message).toBe('license_period_parent_conflict');
    expect(e.data).toEqual({
      feature: 'sip',
      period: '2025-03-01 – 2025-09-30',
      parent: pName,
      parent_period: '2025-01-01 – 2025-06-30',
      child: gName,
      field: 'license_settings.licenses',
    });
    expect((await get(parent)).license_settings.licenses[0]!.restrict_period).toEqual(off);
    // two licences of the parent whose periods meet cover the child's as one
    await getCommand('group.update').run(
      { api },
      {
        id: parent,
        ...settings(
          { features: sip, period: period('2025-01-01', '2025-06-30') },
          { features: sip, period: period('2025-07-01', '2025-12-31') },
        ),
      },
    );
  });
});

describe('the licence permissions that reach a group (part 2 §6: edit counts self, descendant, all)', () => {
  it('editing a group is not editing its licences', async () => {
    const own = await group(api, `Own ${uid()}`, root);
    const below = await group(api, `Below ${uid()}`, own);
    // each try asks for values that differ from what is stored (an unchanged value needs no permission)
    let n = 10;
    const tryAs = async (permissions: string[]) => {
      const who = await (await userWith(ts, api, { permissions, domains: [own] })).client();
      const call = (id: number, extra: object) =>
        getCommand('group.update').run({ api: who }, { id, ...extra });
      n++;
      return {
        own: await call(own, { license_limits: { mobile_apps: n } }).then(
          () => 'ok',
          (e: Error) => e.message,
        ),
        below: await call(below, { license_limits: { mobile_apps: 1 + (n % 2) } }).then(
          () => 'ok',
          (e: Error) => e.message,
        ),
        name: await call(below, { description: 'renamed' }).then(
          () => 'ok',
          (e: Error) => e.message,
        ),
      };
    };
    const editor = ['domains.view_all', 'domains.edit_all'];
    expect(await tryAs(editor)).toEqual({ own: 'method_prohibited', below: 'method_prohibited', name: 'ok' });
    expect(await tryAs([...editor, 'licenses.edit_count_descendant'])).toEqual({
      own: 'method_prohibited',
      below: 'ok',
      name: 'ok',
    });
    expect(await tryAs([...editor, 'licenses.edit_count_self'])).toEqual({
      own: 'ok',
      below: 'method_prohibited',
      name: 'ok',
    });
    // sending the settings unchanged is no change of licences
    const plain = await (await userWith(ts, api, { permissions: editor, domains: [own] })).client();
    const stored = await get(below);
    await expect(
      getCommand('group.update').run(
        { api: plain },
        { id: below, license_settings: stored.license_settings, license_limits: stored.license_limits },
      ),
    ).resolves.toBeTruthy();
  });
});

describe('the gate reads the group chain (server licence AND every group above with settings on)', () => {
  const canDeleteLogo = async (client: ApiClient, id: number) =>
    getCommand('group.whitelabel_logo_delete')
      .run({ api: client }, { id })
      .then(
        () => 'ok',
        (e: { message: string; data: { by?: string } }) =>
          `${e.message}${e.data?.by ? ` by ${e.data.by}` : ''}`,
      );

  it("a child cannot switch on what its parent keeps off; a licence counts within its period, by the server's clock", async () => {
    const parent = await group(api, `Parent ${uid()}`, root, settings({ features: sip }));
    const child = await group(
      api,
      `Child ${uid()}`,
      parent,
      settings({ features: { ...sip, ...whiteLabel } }),
    );
    const member = await userWith(ts, api, {
      permissions: ['domains.edit_all', 'domains.own_white_label'],
      domains: [child],
    });
    const client = await member.client();
    expect(await canDeleteLogo(client, child)).toBe('feature_not_licensed by group');
    expect(
      (await getCommand('profile.get').run({ api: client }, {})).license_info.mobile_app
        .is_white_label_enabled,
    ).toBe(false);

    // the parent grants white label until the end of March (the child first narrows its own to March, or
    // it would run beyond the parent's): the child's member may use it now
    await getCommand('group.update').run(
      { api },
      {
        id: child,
        ...settings({ features: sip }, { features: whiteLabel, period: period('2025-03-01', '2025-03-31') }),
      },
    );
    await getCommand('group.update').run(
      { api },
      {
        id: parent,
        ...settings({ features: sip }, { features: whiteLabel, period: period('2025-01-01', '2025-03-31') }),
      },
    );
    expect(await canDeleteLogo(client, child)).toBe('ok');
    expect(
      (await getCommand('profile.get').run({ api: client }, {})).license_info.mobile_app
        .is_white_label_enabled,
    ).toBe(true);
    // the last day counts; the day after, the licence is over
    clock.set(Date.parse('2025-03-31T23:59:00Z'));
    expect(await canDeleteLogo(client, child)).toBe('ok');
    clock.set(Date.parse('2025-04-01T00:00:00Z'));
    try {
      expect(await canDeleteLogo(client, child)).toBe('feature_not_licensed by group');
    } finally {
      clock.set(Date.parse('2025-03-15T12:00:00Z'));
    }
    // an inactive licence grants nothing; switching the settings off leaves the decision to the chain above
    await getCommand('group.update').run(
      { api },
      { id: child, ...settings({ features: whiteLabel, active: false }) },
    );
    expect(await canDeleteLogo(client, child)).toBe('feature_not_licensed by group');
    await getCommand('group.update').run({ api }, { id: child, license_settings: { is_enabled: false } });
    expect(await canDeleteLogo(client, child)).toBe('ok');
  });
});

describe('concurrency: simultaneous changes cannot together pass a maximum', () => {
  it("five simultaneous raises to 4 under a parent's maximum of 10: exactly two pass", async () => {
    const parent = await group(api, `Race ${uid()}`, root, { license_limits: { mobile_apps: 10 } });
    const children = await Promise.all(
      Array.from({ length: 5 }, () =>
        group(api, `C ${uid()}`, parent, { license_limits: { mobile_apps: 0 } }),
      ),
    );
    const results = await Promise.allSettled(
      children.map((id) =>
        getCommand('group.update').run({ api }, { id, license_limits: { mobile_apps: 4 } }),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
    for (const r of results)
      if (r.status === 'rejected') expect(r.reason.message).toBe('children_license_sum_exceeded');
    const sum = (await Promise.all(children.map(get))).reduce(
      (s, g) => s + (g.license_limits.mobile_apps ?? 0),
      0,
    );
    expect(sum).toBe(8);
  });

  it('a maximum lowered while users are added: what is stored never passes the maximum', async () => {
    const g = await group(api, `Lowered ${uid()}`, root, { license_limits: { users: 10 } });
    const results = await Promise.allSettled([
      ...Array.from({ length: 6 }, () => newUser([g])),
      getCommand('group.update').run({ api }, { id: g, license_limits: { users: 3 } }),
    ]);
    for (const r of results)
      if (r.status === 'rejected')
        expect(['limit_exceeded', 'license_used_exceeds_limit']).toContain(r.reason.message);
    const users = (
      await getCommand('user.list').run({ api }, { filters: [{ field: 'domains', rule: 'has', value: g }] })
    ).meta.total;
    expect(users).toBeLessThanOrEqual((await get(g)).license_limits.users!);
  });
});

describe('migration 0019: older licence entries', () => {
  it('become licences with a feature set, and their maximums the group maximums', async () => {
    const db = ts.server.context.db;
    const id = await group(api, `Older ${uid()}`, root);
    const older = {
      is_enabled: true,
      notifications: { period: 'never', notify_before: 0 },
      licenses: [
        { feature: 'users', is_active: true, max: 40, restrict_period: off },
        {
          feature: 'sip',
          is_active: true,
          max: 12,
          restrict_period: { is_active: true, from: '2025-01-01T00:00:00Z', to: '2025-12-31' },
        },
        { feature: 'face_id', is_active: false, max: 3, restrict_period: off },
      ],
    };
    await sql`update domains set license_settings = ${JSON.stringify(older)}::jsonb where id = ${id}`.execute(
      db,
    );
    const script = fs.readFileSync(
      path.join(import.meta.dirname, '../../apps/server/migrations/0019_group_licences.sql'),
      'utf8',
    );
    const statements = script
      .split('\n')
      .filter((l) => !l.trim().startsWith('--'))
      .join('\n')
      .split(';')
      .map((s) => s.trim())
      .filter((s) => s.startsWith('update'));
    expect(statements).toHaveLength(2);
    for (const s of statements) await sql.raw(s).execute(db);
    const g = await get(id);
    // only an active entry's maximum was in force
    expect(g.license_limits).toEqual({ users: 40, virtual_numbers: 12, mobile_apps: null, ukey2_keys: null });
    expect(g.license_settings.licenses.map((l) => [l.is_active, l.restrict_period])).toEqual([
      [true, period('2025-01-01', '2025-12-31')],
      [false, off],
    ]);
    expect(g.license_settings.licenses[0]!.features.sip.is_enabled).toBe(true);
    expect(g.license_settings.licenses[1]!.features.face_id.is_enabled_for_guests).toBe(true);
  });
});

describe("the group's notifications before its licences end", () => {
  it("tell those who may see the group's licences, on the group's schedule", async () => {
    const db = ts.server.context.db;
    const project = (
      await db.selectFrom('projects').select('id').where('uid', '=', 'default').executeTakeFirstOrThrow()
    ).id;
    const building = await group(api, `Building ${uid()}`, root);
    const name = `Notified ${uid()}`;
    const flat = await group(api, name, building, {
      license_settings: {
        is_enabled: true,
        notifications: { period: 'everyday', notify_before: 14 },
        licenses: [{ is_active: true, features: sip, restrict_period: period('2025-01-01', '2025-03-20') }],
      },
    });
    const withMail = async (permissions: string[], domains: number[]) => {
      const u = await userWith(ts, api, { permissions, domains });
      const email = `n${uid()}@example.test`;
      const row = await db
        .selectFrom('users')
        .select('account_id')
        .where('id', '=', u.id)
        .executeTakeFirstOrThrow();
      await db.updateTable('accounts').set({ email }).where('id', '=', row.account_id).execute();
      return email;
    };
    const own = await withMail(['licenses.view_self'], [flat]);
    const above = await withMail(['licenses.view_descendant'], [building]);
    const anywhere = await withMail(['licenses.edit_count_all'], [root]);
    const ownOfAnother = await withMail(['licenses.view_self'], [building]);
    const plain = await withMail([], [flat]);
    const told = async () =>
      (await db.selectFrom('outbox').select(['to_address', 'subject']).orderBy('id').execute())
        .filter((m) => m.subject.includes(name))
        .map((m) => m.to_address);
    const run = () => runGroupLicenceNotifications(ts.server.context, project);
    try {
      // 15 March, noon: the licence's last day is the 20th, 5 days on
      await run();
      expect((await told()).sort()).toEqual([own, above, anywhere].sort());
      expect(await told()).not.toContain(ownOfAnother);
      expect(await told()).not.toContain(plain);
      const subject = (
        await db.selectFrom('outbox').select('subject').orderBy('id', 'desc').executeTakeFirstOrThrow()
      ).subject;
      expect(subject).toBe(`The licence of group ${name} ends in 5 days`);
      // the same day again: nothing; the next day (everyday): again
      await run();
      expect(await told()).toHaveLength(3);
      clock.set(Date.parse('2025-03-16T12:00:00Z'));
      await run();
      expect(await told()).toHaveLength(6);
      // once: no more for this end; notifications off (never): none
      await getCommand('group.update').run(
        { api },
        { id: flat, license_settings: { notifications: { period: 'once', notify_before: 14 } } },
      );
      clock.set(Date.parse('2025-03-17T12:00:00Z'));
      await run();
      expect(await told()).toHaveLength(6);
      await getCommand('group.update').run(
        { api },
        { id: flat, license_settings: { notifications: { period: 'never', notify_before: 14 } } },
      );
      clock.set(Date.parse('2025-03-19T12:00:00Z'));
      await run();
      expect(await told()).toHaveLength(6);
    } finally {
      clock.set(Date.parse('2025-03-15T12:00:00Z'));
    }
  });

  it('wait until the licence ending first is within notify_before days', async () => {
    const db = ts.server.context.db;
    const project = (
      await db.selectFrom('projects').select('id').where('uid', '=', 'default').executeTakeFirstOrThrow()
    ).id;
    const name = `Later ${uid()}`;
    await group(api, name, root, {
      license_settings: {
        is_enabled: true,
        notifications: { period: 'everyday', notify_before: 3 },
        licenses: [{ is_active: true, features: sip, restrict_period: period('2025-01-01', '2025-03-20') }],
      },
    });
    const u = await userWith(ts, api, { permissions: ['licenses.view_all'], domains: [root] });
    const email = `l${uid()}@example.test`;
    const row = await db
      .selectFrom('users')
      .select('account_id')
      .where('id', '=', u.id)
      .executeTakeFirstOrThrow();
    await db.updateTable('accounts').set({ email }).where('id', '=', row.account_id).execute();
    const count = async () =>
      (await db.selectFrom('outbox').select(['subject', 'to_address']).execute()).filter(
        (m) => m.subject.includes(name) && m.to_address === email,
      ).length;
    await runGroupLicenceNotifications(ts.server.context, project);
    expect(await count()).toBe(0);
    clock.set(Date.parse('2025-03-17T12:00:00Z'));
    try {
      await runGroupLicenceNotifications(ts.server.context, project);
      expect(await count()).toBe(1);
    } finally {
      clock.set(Date.parse('2025-03-15T12:00:00Z'));
    }
  });
});
