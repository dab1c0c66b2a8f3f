/**
 * The validation rules of spec part 2 §5 for the identity families, as the server enforces them: field
 * rules (422 check_fields_data naming field and rule), uniqueness (409 with the catalogue key), group
 * hierarchy and licence sums, unknown permissions, deletes that report dependencies, and bulk generation.
 * Malformed bodies travel raw: the commands would refuse to send them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin, failure, group, raw, rootGroup, uid, type RawReply } from '../support/fixtures';

let ts: TestServer;
let api: ApiClient;
const w = {} as {
  root: number;
  group: number;
  role: number;
  privateRole: number;
  installerRole: number;
  adminRole: number;
};

beforeAll(async () => {
  ts = await startTestServer();
  api = await admin(ts);
  w.root = await rootGroup(api);
  w.group = await group(api, 'Validation', w.root);
  w.role = (await getCommand('role.create').run({ api }, { name: 'Plain', permissions: [] })).data.id;
  const system = (
    await getCommand('role.list').run(
      { api },
      { filters: [{ field: 'is_system', rule: 'equals', value: true }] },
    )
  ).data;
  w.privateRole = system.find((r) => r.name === 'Private client')!.id;
  w.installerRole = system.find((r) => r.name === 'Installer')!.id;
  w.adminRole = system.find((r) => r.name === 'Administrator')!.id;
});
afterAll(async () => {
  await ts?.close();
});

const put = (segment: string, body: unknown) => raw(ts, api, 'PUT', `/${segment}`, { body });
const patch = (segment: string, id: number, body: unknown) =>
  raw(ts, api, 'PATCH', `/${segment}/${id}`, { body });
const userBody = (extra: Record<string, unknown> = {}) => ({
  login: `v${uid()}`,
  name: 'Valid Name',
  role: w.role,
  domains: [w.group],
  send_registration_link: false,
  ...extra,
});
const newUser = async (extra: Record<string, unknown> = {}) =>
  (await getCommand('user.create').run({ api }, userBody(extra) as never)).data;

/** A 422 check_fields_data carrying exactly these field errors (params compared when given). */
function expectFields(
  r: RawReply,
  fields: Array<{ field: string; rule: string; params?: Record<string, unknown> }>,
) {
  expect(r.status, JSON.stringify(r.body)).toBe(422);
  expect(r.body.message).toBe('check_fields_data');
  const got = r.body.data.fields as Array<{ field: string; rule: string; params?: unknown }>;
  expect(got.map((f) => `${f.field}:${f.rule}`).sort()).toEqual(
    fields.map((f) => `${f.field}:${f.rule}`).sort(),
  );
  for (const f of fields)
    if (f.params) expect(got.find((g) => g.field === f.field)?.params).toEqual(f.params);
}

/** Row counts of the identity tables, to show a refused call wrote nothing. */
async function counts() {
  const r = await sql<{
    users: number;
    accounts: number;
    roles: number;
    domains: number;
    markers: number;
    domain_types: number;
  }>`select
    (select count(*)::int from users) as users, (select count(*)::int from accounts) as accounts,
    (select count(*)::int from roles) as roles, (select count(*)::int from domains) as domains,
    (select count(*)::int from markers) as markers, (select count(*)::int from domain_types) as domain_types`.execute(
    ts.server.context.db,
  );
  return r.rows[0]!;
}

describe('users', () => {
  it('must have at least one group (min_items on domains), on create and update', async () => {
    const before = await counts();
    expectFields(await put('users', userBody({ domains: [] })), [
      { field: 'domains', rule: 'min_items', params: { count: 1 } },
    ]);
    const { domains: _, ...noDomains } = userBody();
    expectFields(await put('users', noDomains), [{ field: 'domains', rule: 'required' }]);
    const u = await newUser();
    expectFields(await patch('users', u.id, { domains: [] }), [
      { field: 'domains', rule: 'min_items', params: { count: 1 } },
    ]);
    expect((await getCommand('user.get').run({ api }, { id: u.id })).domains.map((d) => d.id)).toEqual([
      w.group,
    ]);
    expect(await counts()).toEqual({ ...before, users: before.users + 1, accounts: before.accounts + 1 });
  });

  it('e-mail must be an e-mail address; it is kept in lower case; empty means none', async () => {
    for (const email of [
      'not-an-email',
      'a@',
      '@example.test',
      'a b@example.test',
      'a@@example.test',
      'x'.repeat(250) + '@example.test',
    ])
      expect(
        (await put('users', userBody({ email }))).body.data.fields.map((f: { field: string }) => f.field),
        email,
      ).toEqual(['email']);
    expectFields(await put('users', userBody({ email: 'not-an-email' })), [
      { field: 'email', rule: 'email' },
    ]);
    expect((await newUser({ email: 'Mixed.Case@Example.TEST' })).email).toBe('mixed.case@example.test');
    expect((await newUser({ email: '' })).email).toBeNull();
    const u = await newUser();
    expectFields(await patch('users', u.id, { email: 'nope' }), [{ field: 'email', rule: 'email' }]);
  });

  it('phone must be international: a plus, a country code, digits only', async () => {
    for (const phone of [
      '12345678',
      '+0123456789',
      '+49 170 1234567',
      '+49-170-1234567',
      '+12345',
      '+1234567890123456',
      '00491701234567',
      '+49170abc',
    ])
      expectFields(await put('users', userBody({ profile: { phone } })), [
        { field: 'profile.phone', rule: 'phone_international' },
      ]);
    expect((await newUser({ profile: { phone: '+491701234567' } })).profile.phone).toBe('+491701234567');
    const u = await newUser({ profile: { phone: '+441234567890' } });
    expectFields(await patch('users', u.id, { profile: { phone: '0170 123' } }), [
      { field: 'profile.phone', rule: 'phone_international' },
    ]);
    // clearing it is allowed
    expect(
      (await getCommand('user.update').run({ api }, { id: u.id, profile: { phone: '' } })).data.profile.phone,
    ).toBe('');
  });

  it('login: 3 to 64 letters, digits and . _ @ + -', async () => {
    expectFields(await put('users', userBody({ login: 'ab' })), [
      { field: 'login', rule: 'min_length', params: { length: 3 } },
    ]);
    expectFields(await put('users', userBody({ login: 'x'.repeat(65) })), [
      { field: 'login', rule: 'max_length', params: { length: 64 } },
    ]);
    for (const login of ['bad login', 'bad/login', 'юзер', 'a;b', "o'neil", 'semi:colon'])
      expectFields(await put('users', userBody({ login })), [{ field: 'login', rule: 'login_chars' }]);
    expect((await newUser({ login: `ok.name_1@x+y-${uid()}` })).login).toMatch(/^ok\.name_1@x\+y-/);
    expect((await newUser({ login: 'x'.repeat(64) })).login).toHaveLength(64);
    const spaced = `sp${uid()}`;
    expect((await newUser({ login: `  ${spaced}  ` })).login).toBe(spaced);
  });

  it('login and e-mail are unique, whatever their case (409 with the catalogue key); nothing is written', async () => {
    const first = await newUser({ login: `Uniq${uid()}`, email: `uniq${uid()}@example.test` });
    const before = await counts();
    const dupLogin = await failure(
      getCommand('user.create').run({ api }, userBody({ login: first.login.toUpperCase() }) as never),
    );
    expect(dupLogin.status).toBe(409);
    expect(dupLogin.message).toBe('login_already_used');
    expect(dupLogin.data).toEqual({ field: 'login' });
    const dupMail = await failure(
      getCommand('user.create').run({ api }, userBody({ email: first.email!.toUpperCase() }) as never),
    );
    expect(dupMail.status).toBe(409);
    expect(dupMail.message).toBe('email_already_used');
    expect(dupMail.data).toEqual({ field: 'email' });
    expect(await counts()).toEqual(before);
    const other = await newUser();
    expect(
      (await failure(getCommand('user.update').run({ api }, { id: other.id, login: first.login }))).message,
    ).toBe('login_already_used');
    expect(
      (await failure(getCommand('user.update').run({ api }, { id: other.id, email: first.email }))).message,
    ).toBe('email_already_used');
    // one's own login and e-mail sent back unchanged are not a clash
    await expect(
      getCommand('user.update').run(
        { api },
        { id: first.id, login: first.login, email: first.email, name: 'Same Person' },
      ),
    ).resolves.toBeTruthy();
  });
});

describe('markers', () => {
  it('name is 1 to 31 characters without special characters', async () => {
    expectFields(await put('markers', { name: '', color: '#000000' }), [{ field: 'name', rule: 'required' }]);
    expectFields(await put('markers', { name: '    ', color: '#000000' }), [
      { field: 'name', rule: 'required' },
    ]);
    expectFields(await put('markers', { name: 'x'.repeat(32), color: '#000000' }), [
      { field: 'name', rule: 'max_length', params: { length: 31 } },
    ]);
    for (const ch of '<>{}[]\\/|`~^"\';:=+*?!@#$%&')
      expectFields(await put('markers', { name: `a${ch}b`, color: '#000000' }), [
        { field: 'name', rule: 'name_chars' },
      ]);
    for (const name of ['x'.repeat(31), 'Зелёный', 'Door 1-A (north), B.2_x'])
      expect((await getCommand('marker.create').run({ api }, { name, color: '#000000' })).data.name).toBe(
        name,
      );
    const m = (await getCommand('marker.create').run({ api }, { name: `M ${uid()}`, color: '#000000' })).data;
    expectFields(await patch('markers', m.id, { name: 'a<b' }), [{ field: 'name', rule: 'name_chars' }]);
  });

  it('colour is #rrggbb, kept in lower case', async () => {
    for (const color of ['#12345', '123456', 'red', '#GGGGGG', '#1234567', '', 'rgb(0,0,0)'])
      expectFields(await put('markers', { name: `C${uid()}`, color }), [{ field: 'color', rule: 'color' }]);
    expect(
      (await getCommand('marker.create').run({ api }, { name: `C${uid()}`, color: '#AbCdEf' })).data.color,
    ).toBe('#abcdef');
  });

  it('name is unique (409 value_not_unique), on create and rename', async () => {
    const name = `Uniq ${uid()}`;
    await getCommand('marker.create').run({ api }, { name, color: '#000000' });
    const before = await counts();
    const e = await failure(
      getCommand('marker.create').run({ api }, { name: `  ${name} `, color: '#111111' }),
    );
    expect(e.status).toBe(409);
    expect(e.message).toBe('value_not_unique');
    expect(e.data).toEqual({ field: 'name' });
    expect(await counts()).toEqual(before);
    const other = (
      await getCommand('marker.create').run({ api }, { name: `Other ${uid()}`, color: '#000000' })
    ).data.id;
    expect((await failure(getCommand('marker.update').run({ api }, { id: other, name }))).message).toBe(
      'value_not_unique',
    );
  });
});

describe('roles', () => {
  it('name is unique (409 value_not_unique), on create and rename', async () => {
    const name = `Role ${uid()}`;
    await getCommand('role.create').run({ api }, { name, permissions: [] });
    const e = await failure(getCommand('role.create').run({ api }, { name: ` ${name} `, permissions: [] }));
    expect(e.status).toBe(409);
    expect(e.message).toBe('value_not_unique');
    expect(e.data).toEqual({ field: 'name' });
    const other = (await getCommand('role.create').run({ api }, { name: `Other ${uid()}`, permissions: [] }))
      .data.id;
    expect(
      (await failure(getCommand('role.update').run({ api }, { id: other, name: 'Administrator' }))).message,
    ).toBe('value_not_unique');
  });

  it('unknown permission codes are 422 unknown_permission naming them, on create and update', async () => {
    const before = await counts();
    const r = await put('roles', {
      name: `Bad ${uid()}`,
      permissions: ['users.view', 'nope.x', 'users.fly', ''],
    });
    expectFields(r, [
      { field: 'permissions', rule: 'unknown_permission', params: { codes: ['nope.x', 'users.fly', ''] } },
    ]);
    expect(await counts()).toEqual(before);
    const role = (
      await getCommand('role.create').run({ api }, { name: `Good ${uid()}`, permissions: ['users.view'] })
    ).data;
    expectFields(await patch('roles', role.id, { permissions: ['users.view', 'USERS.VIEW'] }), [
      { field: 'permissions', rule: 'unknown_permission', params: { codes: ['USERS.VIEW'] } },
    ]);
    expect((await getCommand('role.get').run({ api }, { id: role.id })).permissions).toEqual(['users.view']);
  });
});

describe('domain types', () => {
  it('type is a lower-case code, unique (409 value_not_unique)', async () => {
    expectFields(await put('domain-types', { type: 'Has Space', name: 'X' }), [
      { field: 'type', rule: 'code_chars' },
    ]);
    const type = `t${uid()}`;
    await getCommand('domain_type.create').run({ api }, { type, name: 'First' });
    const e = await failure(getCommand('domain_type.create').run({ api }, { type, name: 'Second' }));
    expect(e.status).toBe(409);
    expect(e.message).toBe('value_not_unique');
    expect(e.data).toEqual({ field: 'type' });
  });
});

describe('groups', () => {
  it('a logic address is unique per group type (409 domain_exists)', async () => {
    const type = (
      await getCommand('domain_type.create').run({ api }, { type: `t${uid()}`, name: 'Entrance' })
    ).data.id;
    const a = await group(api, `LA ${uid()}`, w.root, { logic_address: '5.1' });
    expect(a).toBeGreaterThan(0);
    const before = await counts();
    const dup = await failure(
      getCommand('group.create').run(
        { api },
        { name: `LA ${uid()}`, parent_id: w.group, logic_address: '5.1' },
      ),
    );
    expect(dup.status).toBe(409);
    expect(dup.message).toBe('domain_exists');
    expect(await counts()).toEqual(before);
    // the same address under another type is another address
    const typed = await group(api, `LA ${uid()}`, w.root, { logic_address: '5.1', domain_type_id: type });
    const dupTyped = await failure(
      getCommand('group.create').run(
        { api },
        { name: `LA ${uid()}`, parent_id: w.root, logic_address: '5.1', domain_type_id: type },
      ),
    );
    expect(dupTyped.message).toBe('domain_exists');
    const other = await group(api, `LA ${uid()}`, w.root, { logic_address: '5.2' });
    expect(
      (await failure(getCommand('group.update').run({ api }, { id: other, logic_address: '5.1' }))).message,
    ).toBe('domain_exists');
    expect(
      (
        await failure(
          getCommand('group.update').run({ api }, { id: other, logic_address: '5.1', domain_type_id: type }),
        )
      ).message,
    ).toBe('domain_exists');
    expect(
      (await failure(getCommand('group.update').run({ api }, { id: typed, domain_type_id: null }))).message,
    ).toBe('domain_exists');
    // no address at all is never a clash
    await group(api, `LA ${uid()}`, w.root, { logic_address: '' });
    await group(api, `LA ${uid()}`, w.root, { logic_address: '' });
    expectFields(await put('domains', { name: 'x', parent_id: w.root, logic_address: 'a b' }), [
      { field: 'logic_address', rule: 'logic_address_chars' },
    ]);
  });

  it('a group cannot move under itself or its descendants', async () => {
    const a = await group(api, `A ${uid()}`, w.root);
    const b = await group(api, `B ${uid()}`, a);
    const c = await group(api, `C ${uid()}`, b);
    for (const [id, parent_id] of [
      [a, a],
      [a, b],
      [a, c],
      [b, c],
    ]) {
      const e = await failure(getCommand('group.update').run({ api }, { id: id!, parent_id: parent_id! }));
      expect(e.status).toBe(400);
      expect(e.message).toBe('wrong_parameters');
      expect(e.data).toEqual({ field: 'parent_id', reason: 'cycle' });
    }
    const tree = await getCommand('group.full').run({ api }, {});
    const parentOf = (id: number) => tree.data.find((g) => g.id === id)!.parent_id;
    expect([parentOf(a), parentOf(b), parentOf(c)]).toEqual([w.root, a, b]);
    // moving down the other way is fine
    expect((await getCommand('group.update').run({ api }, { id: c, parent_id: a })).data.parent_id).toBe(a);
    const missing = await failure(
      getCommand('group.update').run({ api }, { id: a, parent_id: 2_000_000_000 }),
    );
    expect(missing.status).toBe(422);
    expect(missing.message).toBe('invalid_related_entity');
  });

  describe('licence sums: children may not together hold more than their parent', () => {
    const lic = (max: number | null, key = 'mobile_apps') => ({ license_limits: { [key]: max } });
    const sumError = (sum: number, max: number, group: string) => ({
      feature: 'mobile_apps',
      sum,
      max,
      group,
      field: 'license_limits.mobile_apps',
    });

    it('on create and on update of a child', async () => {
      const pName = `P ${uid()}`;
      const parent = await group(api, pName, w.root, {
        license_limits: { mobile_apps: 10, virtual_numbers: null },
      });
      const c1 = await group(api, `C ${uid()}`, parent, lic(6));
      const before = await counts();
      const e = await failure(
        getCommand('group.create').run({ api }, { name: `C ${uid()}`, parent_id: parent, ...lic(5) }),
      );
      expect(e.status).toBe(422);
      expect(e.message).toBe('children_license_sum_exceeded');
      expect(e.data).toEqual(sumError(11, 10, pName));
      expect(await counts()).toEqual(before);
      // virtual numbers have no maximum at the parent
      const c2 = await group(api, `C ${uid()}`, parent, {
        license_limits: { mobile_apps: 4, virtual_numbers: 1000 },
      });
      await group(api, `C ${uid()}`, parent); // a child without maximums of its own
      const up = await failure(getCommand('group.update').run({ api }, { id: c1, ...lic(7) }));
      expect(up.message).toBe('children_license_sum_exceeded');
      expect(up.data).toEqual(sumError(11, 10, pName));
      expect(
        (await getCommand('group.update').run({ api }, { id: c2, ...lic(3) })).data.license_limits
          .mobile_apps,
      ).toBe(3);
    });

    it('a grandchild under a child without a maximum counts toward the parent', async () => {
      const pName = `P ${uid()}`;
      const parent = await group(api, pName, w.root, lic(10));
      const middle = await group(api, `M ${uid()}`, parent);
      await group(api, `G ${uid()}`, middle, lic(8));
      const e = await failure(
        getCommand('group.create').run({ api }, { name: `G ${uid()}`, parent_id: middle, ...lic(3) }),
      );
      expect(e.data).toEqual(sumError(11, 10, pName));
      // a maximum on the middle group now answers for what is below it
      const m = await failure(getCommand('group.update').run({ api }, { id: middle, ...lic(7) }));
      expect(m.message).toBe('children_license_sum_exceeded');
      expect(m.data).toMatchObject({ sum: 8, max: 7 });
    });

    it('lowering the parent below what its children hold is refused', async () => {
      const pName = `P ${uid()}`;
      const parent = await group(api, pName, w.root, lic(10));
      await group(api, `C ${uid()}`, parent, lic(6));
      await group(api, `C ${uid()}`, parent, lic(4));
      const e = await failure(getCommand('group.update').run({ api }, { id: parent, ...lic(9) }));
      expect(e.status).toBe(422);
      expect(e.message).toBe('children_license_sum_exceeded');
      expect(e.data).toEqual(sumError(10, 9, pName));
      expect((await getCommand('group.get').run({ api }, { id: parent })).license_limits.mobile_apps).toBe(
        10,
      );
      await expect(getCommand('group.update').run({ api }, { id: parent, ...lic(10) })).resolves.toBeTruthy();
    });

    it('moving a child under a parent it would overfill is refused', async () => {
      const pName = `P ${uid()}`;
      const parent = await group(api, pName, w.root, lic(5));
      await group(api, `C ${uid()}`, parent, lic(3));
      const wanderer = await group(api, `W ${uid()}`, w.root, lic(3));
      const e = await failure(getCommand('group.update').run({ api }, { id: wanderer, parent_id: parent }));
      expect(e.status).toBe(422);
      expect(e.message).toBe('children_license_sum_exceeded');
      expect(e.data).toEqual(sumError(6, 5, pName));
      expect((await getCommand('group.get').run({ api }, { id: wanderer })).parent_id).toBe(w.root);
      const small = await group(api, `W ${uid()}`, w.root, lic(2));
      expect(
        (await getCommand('group.update').run({ api }, { id: small, parent_id: parent })).data.parent_id,
      ).toBe(parent);
    });
  });

  it('deleting a group with children or users is refused, reporting them', async () => {
    const withChild = await group(api, `D ${uid()}`, w.root);
    await group(api, `D child ${uid()}`, withChild);
    const withUsers = await group(api, `D ${uid()}`, w.root);
    await newUser({ domains: [withUsers] });
    await newUser({ domains: [withUsers, w.group] });
    const empty = await group(api, `D ${uid()}`, w.root);

    const e = await failure(getCommand('group.delete').run({ api }, { id: withChild }));
    expect(e.status).toBe(409);
    expect(e.message).toBe('cant_perform_action');
    expect(e.data).toEqual({ reason: 'has_dependencies', dependencies: { children: 1, users: 0 } });
    const u = await failure(getCommand('group.delete').run({ api }, { id: withUsers }));
    expect(u.data).toEqual({ reason: 'has_dependencies', dependencies: { children: 0, users: 2 } });

    const all = await getCommand('group.delete_all').run({ api }, { items: [withChild, withUsers, empty] });
    expect(all).toEqual({
      deleted: [empty],
      not_deleted: [
        { id: withChild, reason: 'has_dependencies', dependencies: { children: 1, users: 0 } },
        { id: withUsers, reason: 'has_dependencies', dependencies: { children: 0, users: 2 } },
      ],
    });
    await expect(getCommand('group.get').run({ api }, { id: withChild })).resolves.toBeTruthy();
    expect((await failure(getCommand('group.get').run({ api }, { id: empty }))).status).toBe(404);
  });
});

describe('deleting roles', () => {
  it('gently (the default) keeps roles users hold and system roles, reporting why', async () => {
    const held = (await getCommand('role.create').run({ api }, { name: `Held ${uid()}`, permissions: [] }))
      .data.id;
    const free = (await getCommand('role.create').run({ api }, { name: `Free ${uid()}`, permissions: [] }))
      .data.id;
    await newUser({ role: held });
    await newUser({ role: held });

    const one = await failure(getCommand('role.delete').run({ api }, { id: held }));
    expect(one.status).toBe(409);
    expect(one.message).toBe('cant_perform_action');
    expect(one.data).toEqual({ reason: 'has_dependencies', dependencies: { users: 2 } });

    const all = await getCommand('role.delete_all').run({ api }, { items: [held, free, w.installerRole] });
    expect(all).toEqual({
      deleted: [free],
      not_deleted: [
        { id: held, reason: 'has_dependencies', dependencies: { users: 2 } },
        { id: w.installerRole, reason: 'system_role' },
      ],
    });
    expect((await getCommand('role.get').run({ api }, { id: held })).users_count).toBe(2);
  });

  it('not gently deletes them, moving holders to the Private client role; system roles stay', async () => {
    const held = (
      await getCommand('role.create').run({ api }, { name: `Held ${uid()}`, permissions: ['users.view'] })
    ).data.id;
    const holders = [(await newUser({ role: held })).id, (await newUser({ role: held })).id];
    expect(
      (await getCommand('role.get').run({ api }, { id: w.adminRole })).available_roles.map((r) => r.id),
    ).toContain(held);

    const all = await getCommand('role.delete_all').run(
      { api },
      { items: [held, w.privateRole], gently: false },
    );
    expect(all).toEqual({ deleted: [held], not_deleted: [{ id: w.privateRole, reason: 'system_role' }] });
    for (const id of holders)
      expect((await getCommand('user.get').run({ api }, { id })).role).toEqual({
        id: w.privateRole,
        name: 'Private client',
      });
    expect((await failure(getCommand('role.get').run({ api }, { id: held }))).status).toBe(404);
    // and no role lists it any more
    expect(
      (await getCommand('role.get').run({ api }, { id: w.adminRole })).available_roles.map((r) => r.id),
    ).not.toContain(held);

    // the single delete takes the flag in the query, as the spec's clients send it
    const other = (await getCommand('role.create').run({ api }, { name: `Held ${uid()}`, permissions: [] }))
      .data.id;
    const holder = (await newUser({ role: other })).id;
    expect((await raw(ts, api, 'DELETE', `/roles/${other}`, { query: { gently: 'true' } })).status).toBe(409);
    const r = await raw(ts, api, 'DELETE', `/roles/${other}`, { query: { gently: 'false' } });
    expect(r).toEqual({ status: 200, body: { ok: true } });
    expect((await getCommand('user.get').run({ api }, { id: holder })).role.id).toBe(w.privateRole);
  });
});

describe('bulk group generation: preview, then save', () => {
  it('numbers from a start, skips exceptions and marks existing names; preview writes nothing', async () => {
    const parent = await group(api, `Block ${uid()}`, w.root, { logic_address: '7' });
    await group(api, 'flat 11', parent); // exists already, in another case
    const before = await counts();
    const args = { id: parent, count: 5, prefix: 'Flat ', numeration: { from: 10, except: [12] } };
    const preview = await getCommand('group.generate').run({ api }, args);
    expect(preview.parent.id).toBe(parent);
    expect(preview.items).toEqual([
      { name: 'Flat 10', number: 10, logic_address: null, exists: false },
      { name: 'Flat 11', number: 11, logic_address: null, exists: true },
      { name: 'Flat 13', number: 13, logic_address: null, exists: false },
      { name: 'Flat 14', number: 14, logic_address: null, exists: false },
      { name: 'Flat 15', number: 15, logic_address: null, exists: false },
    ]);
    expect(await counts()).toEqual(before);

    const saved = await getCommand('group.save_generated').run({ api }, args);
    expect(saved.data.map((g) => g.name)).toEqual(['Flat 10', 'Flat 13', 'Flat 14', 'Flat 15']);
    expect(saved.data.every((g) => g.parent_id === parent)).toBe(true);
    const children = await getCommand('group.children').run({ api }, { id: parent });
    expect(children.data.map((g) => g.name).sort()).toEqual([
      'Flat 10',
      'Flat 13',
      'Flat 14',
      'Flat 15',
      'flat 11',
    ]);
    // saving again creates nothing: every name exists now
    expect((await getCommand('group.save_generated').run({ api }, args)).data).toEqual([]);

    // carrying on after the youngest number, with logic addresses inside the parent's
    const next = await getCommand('group.generate').run(
      { api },
      {
        id: parent,
        count: 2,
        prefix: 'Flat ',
        numeration: { is_start_youngest_num: true, is_in_youngest_num: true },
      },
    );
    expect(next.items).toEqual([
      { name: 'Flat 16', number: 16, logic_address: '7.16', exists: false },
      { name: 'Flat 17', number: 17, logic_address: '7.17', exists: false },
    ]);
    const rooms = await getCommand('group.save_generated').run(
      { api },
      { id: parent, count: 3, prefix: 'Room ', logic_number: 100 },
    );
    expect(rooms.data.map((g) => [g.name, g.logic_address])).toEqual([
      ['Room 1', '100'],
      ['Room 2', '101'],
      ['Room 3', '102'],
    ]);
  });

  it('marks as existing a logic address taken anywhere in the project, and the save skips it', async () => {
    await group(api, `Taken ${uid()}`, w.root, { logic_address: '300' });
    const parent = await group(api, `Block ${uid()}`, w.root);
    const args = { id: parent, count: 2, prefix: 'Unit ', logic_number: 300 };
    const preview = await getCommand('group.generate').run({ api }, args);
    expect(preview.items.map((i) => [i.name, i.logic_address, i.exists])).toEqual([
      ['Unit 1', '300', true],
      ['Unit 2', '301', false],
    ]);
    const saved = await getCommand('group.save_generated').run({ api }, args);
    expect(saved.data.map((g) => [g.name, g.logic_address])).toEqual([['Unit 2', '301']]);
  });

  it('refuses bad input', async () => {
    const r = await raw(ts, api, 'POST', '/domains/generate', {
      body: { id: w.group, count: 0, numeration: { from: -1 } },
    });
    expectFields(r, [
      { field: 'count', rule: 'greater_or_equal', params: { min: 1 } },
      { field: 'numeration.from', rule: 'greater_or_equal', params: { min: 0 } },
    ]);
    expectFields(await raw(ts, api, 'POST', '/domains/generate', { body: { id: w.group, count: 1001 } }), [
      { field: 'count', rule: 'less_or_equal', params: { max: 1000 } },
    ]);
    const missing = await raw(ts, api, 'POST', '/domains/generate', {
      body: { id: 2_000_000_000, count: 1 },
    });
    expect([404, 422]).toContain(missing.status);
  });
});
