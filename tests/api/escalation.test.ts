/**
 * Privilege escalation (spec part 2 §6): a role's holder may hand out only what he holds, may assign or list
 * only the roles his role lists in available_roles, may not edit his own role into more, and may not give
 * himself another role without "edit all" — unless his role has "grant more than own". A role change reaches
 * its holders at once: a RoleChangedEvent, and the profile and every next call read the new permissions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import { AllPermissions, type ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin, failure, rootGroup, secondProject, uid, userWith } from '../support/fixtures';

let ts: TestServer;
let api: ApiClient;
const w = {} as {
  group: number;
  adminRole: number;
  installerRole: number;
  /** fewer permissions than the granter */
  low: number;
  /** listed for the granter, but holding a permission he lacks */
  rich: number;
  granter: { id: number; roleId: number; api: ApiClient };
};

/** What the granter holds: he may create and edit roles and users (and their roles), nothing more. */
const GRANTER = [
  'roles.view',
  'roles.create',
  'roles.edit',
  'roles.edit_available',
  'roles.edit_users',
  'users.view',
  'users.create',
  'users.edit_all',
];

const role = (
  client: ApiClient,
  args: { name?: string; permissions: string[]; available_roles?: number[] },
) =>
  getCommand('role.create').run(
    { api: client },
    { name: args.name ?? `R ${uid()}`, permissions: args.permissions, available_roles: args.available_roles },
  );
const newUser = (client: ApiClient, roleId: number, login = `e${uid()}`) =>
  getCommand('user.create').run(
    { api: client },
    { login, name: `E ${login}`, role: roleId, domains: [w.group], send_registration_link: false },
  );
const roleByName = async (name: string) =>
  (await getCommand('role.list').run({ api }, { filters: [{ field: 'name', rule: 'equals', value: name }] }))
    .data;
const roleOf = (id: number) => getCommand('role.get').run({ api }, { id });

beforeAll(async () => {
  ts = await startTestServer();
  api = await admin(ts);
  const root = await rootGroup(api);
  w.group = (await getCommand('group.create').run({ api }, { name: 'Escalation', parent_id: root })).data.id;
  const system = (
    await getCommand('role.list').run(
      { api },
      { filters: [{ field: 'is_system', rule: 'equals', value: true }] },
    )
  ).data;
  w.adminRole = system.find((r) => r.name === 'Administrator')!.id;
  w.installerRole = system.find((r) => r.name === 'Installer')!.id;
  w.low = (await role(api, { name: 'Low', permissions: ['users.view'] })).data.id;
  w.rich = (await role(api, { name: 'Rich', permissions: ['users.view', 'devices.delete'] })).data.id;
  const g = await userWith(ts, api, {
    permissions: GRANTER,
    domains: [w.group],
    available: [w.low, w.rich],
    name: 'Granter',
  });
  w.granter = { id: g.id, roleId: g.roleId, api: await g.client() };
});
afterAll(async () => {
  await ts?.close();
});

describe('handing out permissions', () => {
  it('role.create with a permission the caller does not hold is 403 naming it, and writes nothing', async () => {
    const name = `Beyond ${uid()}`;
    const e = await failure(
      role(w.granter.api, { name, permissions: ['users.view', 'devices.delete', 'backups.apply'] }),
    );
    expect(e.status).toBe(403);
    expect(e.message).toBe('method_prohibited');
    expect(e.data).toEqual({
      reason: 'grant_more_than_own',
      permissions: ['devices.delete', 'backups.apply'],
    });
    expect(await roleByName(name)).toEqual([]);
  });

  it('role.create with held permissions works, and the creator may assign the new role', async () => {
    const made = await role(w.granter.api, { permissions: ['users.view', 'roles.view'] });
    expect(made.data.permissions).toEqual(['users.view', 'roles.view']);
    const mine = await roleOf(w.granter.roleId);
    expect(mine.available_roles.map((r) => r.id)).toContain(made.data.id);
    await expect(newUser(w.granter.api, made.data.id)).resolves.toBeTruthy();
  });

  it('role.update adding a permission the caller does not hold is 403 naming it; the role stays as it was', async () => {
    const own = await role(w.granter.api, { permissions: ['users.view'] }); // his by creation (roles.edit)
    for (const target of [own.data.id, w.low]) {
      const before = await roleOf(target);
      const e = await failure(
        getCommand('role.update').run(
          { api: w.granter.api },
          { id: target, permissions: ['users.view', 'devices.delete'] },
        ),
      );
      expect(e.status).toBe(403);
      expect(e.message).toBe('method_prohibited');
      expect(e.data).toEqual({ reason: 'grant_more_than_own', permissions: ['devices.delete'] });
      expect(await roleOf(target)).toEqual(before);
    }
    // what he holds he may add
    const ok = await getCommand('role.update').run(
      { api: w.granter.api },
      { id: own.data.id, permissions: ['users.view', 'users.create'] },
    );
    expect(ok.data.permissions).toEqual(['users.view', 'users.create']);
  });

  it('role.update may remove, or keep, a permission the caller lacks', async () => {
    const target = (await role(api, { permissions: ['users.view', 'devices.delete', 'devices.create'] })).data
      .id;
    await getCommand('role.update').run(
      { api },
      { id: w.granter.roleId, available_roles: [w.low, w.rich, target] },
    );
    const kept = await getCommand('role.update').run(
      { api: w.granter.api },
      { id: target, permissions: ['devices.delete', 'devices.create'] },
    );
    expect(kept.data.permissions).toEqual(['devices.delete', 'devices.create']);
    const removed = await getCommand('role.update').run(
      { api: w.granter.api },
      { id: target, permissions: ['devices.create'] },
    );
    expect(removed.data.permissions).toEqual(['devices.create']);
    // but putting back what he removed is handing it out
    const e = await failure(
      getCommand('role.update').run(
        { api: w.granter.api },
        { id: target, permissions: ['devices.create', 'devices.delete'] },
      ),
    );
    expect(e.data).toEqual({ reason: 'grant_more_than_own', permissions: ['devices.delete'] });
  });
});

describe('available roles', () => {
  it('role.create may list only roles the caller may assign', async () => {
    const name = `Lister ${uid()}`;
    const e = await failure(
      role(w.granter.api, { name, permissions: [], available_roles: [w.low, w.adminRole] }),
    );
    expect(e.status).toBe(403);
    expect(e.message).toBe('method_prohibited');
    expect(e.data).toEqual({ reason: 'role_not_available', roles: [w.adminRole] });
    expect(await roleByName(name)).toEqual([]);
    const ok = await role(w.granter.api, { permissions: [], available_roles: [w.low] });
    expect(ok.data.available_roles.map((r) => r.id)).toEqual([w.low]);
    const unknown = await failure(role(w.granter.api, { permissions: [], available_roles: [2_000_000_000] }));
    expect(unknown.status).toBe(422);
    expect(unknown.message).toBe('invalid_related_entity');
  });

  it('role.update may not add to available_roles a role the caller may not assign', async () => {
    const target = (await role(w.granter.api, { permissions: [], available_roles: [w.low] })).data.id;
    const e = await failure(
      getCommand('role.update').run(
        { api: w.granter.api },
        { id: target, available_roles: [w.low, w.installerRole] },
      ),
    );
    expect(e.status).toBe(403);
    expect(e.data).toEqual({ reason: 'role_not_available', roles: [w.installerRole] });
    expect((await roleOf(target)).available_roles.map((r) => r.id)).toEqual([w.low]);
    // nor into his own role's list: he cannot widen what he may assign
    const own = await failure(
      getCommand('role.update').run(
        { api: w.granter.api },
        { id: w.granter.roleId, available_roles: [w.low, w.rich, w.adminRole] },
      ),
    );
    expect(own.status).toBe(403);
    expect(own.data).toEqual({ reason: 'role_not_available', roles: [w.adminRole] });
  });
});

describe('assigning roles to users', () => {
  it('user.create with a role outside available_roles is 403, and no user is written', async () => {
    const login = `out${uid()}`;
    const e = await failure(newUser(w.granter.api, w.installerRole, login));
    expect(e.status).toBe(403);
    expect(e.message).toBe('method_prohibited');
    expect(e.data).toEqual({ reason: 'role_not_available', role: w.installerRole });
    expect(
      (
        await getCommand('user.list').run(
          { api },
          { filters: [{ field: 'login', rule: 'equals', value: login }] },
        )
      ).data,
    ).toEqual([]);
  });

  it('user.create with an available role holding more than the caller is 403 naming the permissions', async () => {
    const login = `rich${uid()}`;
    const e = await failure(newUser(w.granter.api, w.rich, login));
    expect(e.status).toBe(403);
    expect(e.data).toEqual({ reason: 'grant_more_than_own', permissions: ['devices.delete'] });
    expect(
      (
        await getCommand('user.list').run(
          { api },
          { filters: [{ field: 'login', rule: 'equals', value: login }] },
        )
      ).data,
    ).toEqual([]);
    await expect(newUser(w.granter.api, w.low)).resolves.toBeTruthy();
  });

  it('user.update to such roles is refused the same way; to an allowed one it works', async () => {
    const target = (await newUser(w.granter.api, w.low)).data.id;
    for (const [roleId, data] of [
      [w.installerRole, { reason: 'role_not_available', role: w.installerRole }],
      [w.rich, { reason: 'grant_more_than_own', permissions: ['devices.delete'] }],
      [w.adminRole, { reason: 'role_not_available', role: w.adminRole }],
    ] as const) {
      const e = await failure(
        getCommand('user.update').run({ api: w.granter.api }, { id: target, role: roleId }),
      );
      expect(e.status).toBe(403);
      expect(e.data).toEqual(data);
    }
    expect((await getCommand('user.get').run({ api }, { id: target })).role.id).toBe(w.low);
    const back = await getCommand('role.create').run(
      { api: w.granter.api },
      { name: `Mine ${uid()}`, permissions: ['users.view'] },
    );
    const moved = await getCommand('user.update').run(
      { api: w.granter.api },
      { id: target, role: back.data.id },
    );
    expect(moved.data.role.id).toBe(back.data.id);
  });

  it('with "edit all" a user still cannot move himself to a richer role', async () => {
    const e = await failure(
      getCommand('user.update').run({ api: w.granter.api }, { id: w.granter.id, role: w.rich }),
    );
    expect(e.status).toBe(403);
    expect(e.data).toEqual({ reason: 'grant_more_than_own', permissions: ['devices.delete'] });
    expect((await getCommand('profile.get').run({ api: w.granter.api }, {})).role.id).toBe(w.granter.roleId);
  });
});

describe("one's own role and record", () => {
  it("adding a permission to one's own role is 403; removing one is allowed and takes effect at once", async () => {
    const perms = ['roles.view', 'roles.edit_available', 'markers.view', 'markers.create'];
    const me = await userWith(ts, api, { permissions: perms, domains: [w.group] });
    const client = await me.client();
    const e = await failure(
      getCommand('role.update').run(
        { api: client },
        { id: me.roleId, permissions: [...perms, 'markers.delete'] },
      ),
    );
    expect(e.status).toBe(403);
    expect(e.data).toEqual({ reason: 'grant_more_than_own', permissions: ['markers.delete'] });
    expect((await roleOf(me.roleId)).permissions).toEqual(perms);

    await expect(
      getCommand('marker.create').run({ api: client }, { name: `M${uid()}`, color: '#112233' }),
    ).resolves.toBeTruthy();
    const fewer = perms.filter((p) => p !== 'markers.create');
    await getCommand('role.update').run({ api: client }, { id: me.roleId, permissions: fewer });
    expect((await getCommand('profile.get').run({ api: client }, {})).role.permissions).toEqual(fewer);
    const gone = await failure(
      getCommand('marker.create').run({ api: client }, { name: `M${uid()}`, color: '#112233' }),
    );
    expect(gone.status).toBe(403);
    // and what he gave up he cannot take back
    const back = await failure(
      getCommand('role.update').run({ api: client }, { id: me.roleId, permissions: perms }),
    );
    expect(back.data).toEqual({ reason: 'grant_more_than_own', permissions: ['markers.create'] });
  });

  it('without "edit all" a user cannot give himself another role (nor groups), only edit his profile fields', async () => {
    const me = await userWith(ts, api, {
      permissions: ['users.view', 'users.edit_profile', 'roles.view'],
      domains: [w.group],
      available: [w.low],
    });
    const client = await me.client();
    for (const change of [
      { role: w.low },
      { role: w.adminRole },
      { domains: [w.group] },
      { login: `x${uid()}` },
    ]) {
      const e = await failure(getCommand('user.update').run({ api: client }, { id: me.id, ...change }));
      expect(e.status, JSON.stringify(change)).toBe(403);
      expect(e.message).toBe('method_prohibited');
      expect(e.data).toEqual({ reason: 'edit_all', fields: Object.keys(change) });
    }
    expect((await getCommand('profile.get').run({ api: client }, {})).role.id).toBe(me.roleId);
    const renamed = await getCommand('user.update').run(
      { api: client },
      { id: me.id, name: 'Renamed Self', profile: { phone: '+441234567' } },
    );
    expect(renamed.data).toMatchObject({ name: 'Renamed Self', role: { id: me.roleId } });
    // and nobody else's record
    const other = await failure(
      getCommand('user.update').run({ api: client }, { id: w.granter.id, name: 'Hijacked' }),
    );
    expect([403, 404]).toContain(other.status);
  });
});

describe('"grant more than own" lifts these limits', () => {
  it('lets its holder hand out permissions and roles he does not hold or list', async () => {
    const perms = [
      'roles.view',
      'roles.create',
      'roles.edit_available',
      'users.view',
      'users.create',
      'roles.grant_more_than_own',
    ];
    const boss = await userWith(ts, api, { permissions: perms, domains: [w.group] });
    const client = await boss.client();
    const made = await role(client, {
      permissions: ['devices.delete', 'backups.apply'],
      available_roles: [w.adminRole, w.installerRole],
    });
    expect(made.data.permissions).toEqual(['devices.delete', 'backups.apply']);
    expect(made.data.available_roles.map((r) => r.id).sort()).toEqual([w.adminRole, w.installerRole].sort());
    await expect(newUser(client, w.rich)).resolves.toBeTruthy();
    await expect(newUser(client, w.installerRole)).resolves.toBeTruthy();
    const updated = await getCommand('role.update').run(
      { api: client },
      { id: boss.roleId, permissions: [...perms, 'devices.create'] },
    );
    expect(updated.data.permissions).toContain('devices.create');
  });
});

describe('taking over a richer account', () => {
  // setting the password, login or e-mail of someone else is acquiring his permissions
  it('"edit all" may not touch a user whose role holds more than the caller\'s: not his credentials, not anything', async () => {
    const editor = await userWith(ts, api, {
      permissions: ['users.view', 'users.view_all', 'users.edit_all'],
      domains: [w.group],
      available: [w.rich],
    });
    const client = await editor.client();
    const adminId = (await getCommand('profile.get').run({ api }, {})).id;
    const richUser = (await newUser(api, w.rich)).data;

    const e = await failure(
      getCommand('user.password').run({ api: client }, { id: adminId, new_password: 'taken-over-1' }),
    );
    expect(e.status).toBe(403);
    expect(e.message).toBe('method_prohibited');
    expect(e.data).toMatchObject({ reason: 'role_not_available', target: adminId });
    await expect(admin(ts)).resolves.toBeTruthy(); // the administrator's password is unchanged

    for (const change of [
      { email: `evil${uid()}@example.test` },
      { login: `evil${uid()}` },
      { name: 'Renamed Rich' },
    ]) {
      const c = await failure(getCommand('user.update').run({ api: client }, { id: richUser.id, ...change }));
      expect(c.status, JSON.stringify(change)).toBe(403);
      expect(c.data).toEqual({
        reason: 'grant_more_than_own',
        permissions: ['devices.delete'],
        target: richUser.id,
      });
    }
    const p = await failure(
      getCommand('user.password').run({ api: client }, { id: richUser.id, new_password: 'taken-over-1' }),
    );
    expect(p.data).toEqual({
      reason: 'grant_more_than_own',
      permissions: ['devices.delete'],
      target: richUser.id,
    });
    expect(await getCommand('user.get').run({ api }, { id: richUser.id })).toEqual(richUser);

    // users whose role he may give and which holds nothing beyond his are his to manage
    const plain = (
      await getCommand('role.create').run(
        { api },
        { name: `Plain ${uid()}`, permissions: ['users.view_all'] },
      )
    ).data.id;
    await getCommand('role.update').run({ api }, { id: editor.roleId, available_roles: [w.rich, plain] });
    const peer = (await newUser(api, plain)).data.id;
    await expect(
      getCommand('user.password').run({ api: client }, { id: peer, new_password: 'a-fine-password' }),
    ).resolves.toEqual({ ok: true });
    await expect(
      getCommand('user.update').run({ api: client }, { id: peer, email: `peer${uid()}@example.test` }),
    ).resolves.toBeTruthy();
  });

  it('"grant more than own" lifts it', async () => {
    const boss = await userWith(ts, api, {
      permissions: ['users.view_all', 'users.edit_all', 'roles.grant_more_than_own'],
      domains: [w.group],
    });
    const richUser = (await newUser(api, w.rich)).data.id;
    await expect(
      getCommand('user.password').run(
        { api: await boss.client() },
        { id: richUser, new_password: 'a-fine-password' },
      ),
    ).resolves.toEqual({ ok: true });
  });
});

describe('a role change reaches its holders', () => {
  it("publishes RoleChangedEvent and the holder's profile and calls follow the new permissions", async () => {
    const holder = await userWith(ts, api, { permissions: ['markers.view'], domains: [w.group] });
    const client = await holder.client();
    const events = ts.server.context.events;
    const seen = () =>
      events.sent.filter(
        (m) =>
          m.topic === 'private-app-changes' &&
          m.data.type === 'RoleChangedEvent' &&
          m.data.roleId === holder.roleId,
      );
    expect(seen()).toEqual([]);
    expect(
      (
        await failure(
          getCommand('marker.create').run({ api: client }, { name: `M${uid()}`, color: '#445566' }),
        )
      ).status,
    ).toBe(403);

    await getCommand('role.update').run(
      { api },
      { id: holder.roleId, permissions: ['markers.view', 'markers.create'] },
    );
    expect(seen().length).toBe(1);
    expect(seen()[0]).toMatchObject({
      topic: 'private-app-changes',
      data: { type: 'RoleChangedEvent', roleId: holder.roleId },
    });
    expect((await getCommand('profile.get').run({ api: client }, {})).role.permissions).toEqual([
      'markers.view',
      'markers.create',
    ]);
    await expect(
      getCommand('marker.create').run({ api: client }, { name: `M${uid()}`, color: '#445566' }),
    ).resolves.toBeTruthy();

    await getCommand('role.update').run({ api }, { id: holder.roleId, permissions: ['markers.view'] });
    expect(seen().length).toBe(2);
    expect((await getCommand('profile.get').run({ api: client }, {})).role.permissions).toEqual([
      'markers.view',
    ]);
    expect(
      (
        await failure(
          getCommand('marker.create').run({ api: client }, { name: `M${uid()}`, color: '#445566' }),
        )
      ).status,
    ).toBe(403);

    // a change of the roles it may assign is a role change too
    await getCommand('role.update').run({ api }, { id: holder.roleId, available_roles: [w.low] });
    expect(seen().length).toBe(3);
  });

  it('a refused change publishes nothing', async () => {
    const before = ts.server.context.events.sent.length;
    await failure(
      getCommand('role.update').run(
        { api: w.granter.api },
        { id: w.low, permissions: ['users.view', 'devices.delete'] },
      ),
    );
    expect(ts.server.context.events.sent.length).toBe(before);
  });
});

describe('a login that belongs to two projects', () => {
  it("cannot have its password, login or e-mail changed by one project's administrator", async () => {
    const ts2 = await startTestServer();
    try {
      const api2 = await admin(ts2);
      const other = await secondProject(ts2);
      // the administrator's own login is in both projects; a second administrator of the default project
      const second = await userWith(ts2, api2, {
        permissions: [...AllPermissions],
        domains: [await rootGroup(api2)],
      });
      const client = await second.client();
      const adminUser = (
        await getCommand('user.list').run(
          { api: client },
          { filters: [{ field: 'login', rule: 'equals', value: ts2.adminLogin }] },
        )
      ).data[0]!;
      // each call starts only when the loop reaches it: a rejected promise made early would go unhandled
      for (const call of [
        () =>
          getCommand('user.password').run(
            { api: client },
            { id: adminUser.id, new_password: 'taken-over-1' },
          ),
        () =>
          getCommand('user.update').run({ api: client }, { id: adminUser.id, email: 'mine@example.test' }),
      ]) {
        const e = await failure(call());
        expect(e.status).toBe(403);
        expect(e.data).toMatchObject({ reason: 'account_shared' });
      }
      // the owner still signs in to both
      expect(
        (
          await getCommand('session.login').run(
            { api: ts2.client() },
            { login: ts2.adminLogin, password: ts2.adminPassword },
          )
        ).sessions,
      ).toHaveLength(2);
      expect(other.rootGroup).toBeGreaterThan(0);
    } finally {
      await ts2.close();
    }
  });
});

describe('authority over the target as he is (issue 12 point 4)', () => {
  /** a scoped administrator: edits, deletes and re-roles users of his group, may give only Low */
  const SCOPED = ['users.view', 'users.edit_all', 'users.delete', 'roles.edit_users'];

  // every command that acts on an existing user, with what it must leave unchanged
  const acts: Array<[string, (client: ApiClient, id: number) => Promise<unknown>]> = [
    ['user.update role', (client, id) => getCommand('user.update').run({ api: client }, { id, role: w.low })],
    [
      'user.update name',
      (client, id) => getCommand('user.update').run({ api: client }, { id, name: 'Poorer' }),
    ],
    [
      'user.update domains',
      (client, id) => getCommand('user.update').run({ api: client }, { id, domains: [w.group] }),
    ],
    [
      'user.password',
      (client, id) => getCommand('user.password').run({ api: client }, { id, new_password: 'taken-over-1' }),
    ],
    ['user.avatar_delete', (client, id) => getCommand('user.avatar_delete').run({ api: client }, { id })],
    ['user.delete', (client, id) => getCommand('user.delete').run({ api: client }, { id })],
  ];

  it.each(acts)(
    '%s on an Administrator of his group is 403 naming the target; he stays as he was',
    async (_name, act) => {
      const scoped = await userWith(ts, api, { permissions: SCOPED, domains: [w.group], available: [w.low] });
      const richer = (await newUser(api, w.adminRole)).data;
      const e = await failure(act(await scoped.client(), richer.id));
      expect(e.status).toBe(403);
      expect(e.message).toBe('method_prohibited');
      expect(e.data).toEqual({ reason: 'role_not_available', role: w.adminRole, target: richer.id });
      expect(await getCommand('user.get').run({ api }, { id: richer.id })).toEqual(richer);
    },
  );

  it('user.delete_all leaves such a user and says why', async () => {
    const scoped = await userWith(ts, api, { permissions: SCOPED, domains: [w.group], available: [w.low] });
    const richer = (await newUser(api, w.adminRole)).data.id;
    const poor = (await newUser(api, w.low)).data.id;
    const r = await getCommand('user.delete_all').run(
      { api: await scoped.client() },
      { items: [richer, poor] },
    );
    expect(r).toEqual({ deleted: [poor], not_deleted: [{ id: richer, reason: 'method_prohibited' }] });
  });

  it("moving a user out of a group outside the caller's scope is 403; inside it works", async () => {
    const scoped = await userWith(ts, api, { permissions: SCOPED, domains: [w.group], available: [w.low] });
    const elsewhere = (
      await getCommand('group.create').run(
        { api },
        { name: `Elsewhere ${uid()}`, parent_id: await rootGroup(api) },
      )
    ).data.id;
    const inner = (
      await getCommand('group.create').run({ api }, { name: `Inner ${uid()}`, parent_id: w.group })
    ).data.id;
    const both = (
      await getCommand('user.create').run(
        { api },
        {
          login: `b${uid()}`,
          name: 'Both',
          role: w.low,
          domains: [w.group, elsewhere],
          send_registration_link: false,
        },
      )
    ).data;
    const client = await scoped.client();
    const e = await failure(
      getCommand('user.update').run({ api: client }, { id: both.id, domains: [w.group] }),
    );
    expect(e.status).toBe(403);
    expect(e.data).toEqual({ reason: 'domain_out_of_scope', domains: [elsewhere], target: both.id });
    expect(
      (await getCommand('user.get').run({ api }, { id: both.id })).domains.map((d) => d.id).sort(),
    ).toEqual([w.group, elsewhere].sort());
    const mine = (await newUser(api, w.low)).data.id;
    const moved = await getCommand('user.update').run({ api: client }, { id: mine, domains: [inner] });
    expect(moved.data.domains.map((d) => d.id)).toEqual([inner]);
  });

  it("changing a user's role needs roles.edit_users", async () => {
    const editor = await userWith(ts, api, {
      permissions: ['users.view', 'users.edit_all'],
      domains: [w.group],
      available: [w.low, w.installerRole],
    });
    const target = (await newUser(api, w.low)).data.id;
    const e = await failure(
      getCommand('user.update').run({ api: await editor.client() }, { id: target, role: w.installerRole }),
    );
    expect(e.status).toBe(403);
    expect(e.data).toEqual({ reason: 'edit_users' });
    expect((await getCommand('user.get').run({ api }, { id: target })).role.id).toBe(w.low);
  });

  it('the Administrator role cannot be stripped, not even by an administrator', async () => {
    const editor = await userWith(ts, api, { permissions: [...AllPermissions], domains: [w.group] });
    const before = await roleOf(w.adminRole);
    for (const client of [api, await editor.client()]) {
      const e = await failure(
        getCommand('role.update').run({ api: client }, { id: w.adminRole, permissions: ['users.view'] }),
      );
      expect(e.status).toBe(403);
      expect(e.data).toMatchObject({ reason: 'administrator_role' });
      expect((e.data!.permissions as string[]).length).toBe(AllPermissions.length - 1);
    }
    expect(await roleOf(w.adminRole)).toEqual(before);
    // other changes to it stay possible
    await expect(
      getCommand('role.update').run({ api }, { id: w.adminRole, description: 'Every permission, always' }),
    ).resolves.toBeTruthy();
  });

  it('the last holder of the Administrator role cannot leave it', async () => {
    const me = (await getCommand('profile.get').run({ api }, {})).id;
    const holders = (
      await getCommand('user.list').run(
        { api },
        { filters: [{ field: 'role', rule: 'equals', value: w.adminRole }], limit: 100 },
      )
    ).data;
    for (const h of holders)
      if (h.id !== me) await getCommand('user.update').run({ api }, { id: h.id, role: w.low });
    const e = await failure(getCommand('user.update').run({ api }, { id: me, role: w.low }));
    expect(e.status).toBe(409);
    expect(e.message).toBe('cant_perform_action');
    expect(e.data).toEqual({ reason: 'last_administrator' });
    expect((await getCommand('profile.get').run({ api }, {})).role.id).toBe(w.adminRole);
    // with a second holder, one of them may go
    const second = (await newUser(api, w.adminRole)).data.id;
    await expect(getCommand('user.update').run({ api }, { id: second, role: w.low })).resolves.toBeTruthy();
  });
});

describe('every generic family: update and delete need authority over the row as it is', () => {
  // a caller with the family's edit and delete permissions at a narrow scope, and a row beyond it; the
  // family machinery (engine/family.ts assertMay, then the store's authority) must refuse both
  const families: Array<{
    noun: 'user' | 'role' | 'group' | 'marker';
    perms: string[];
    make: () => Promise<number>;
    change: Record<string, unknown>;
  }> = [
    {
      noun: 'user',
      perms: ['users.view', 'users.edit_all', 'users.delete', 'roles.edit_users'],
      make: async () =>
        (
          await getCommand('user.create').run(
            { api },
            {
              login: `g${uid()}`,
              name: 'Beyond',
              role: w.low,
              domains: [await rootGroup(api)],
              send_registration_link: false,
            },
          )
        ).data.id,
      change: { name: 'Changed' },
    },
    {
      noun: 'role',
      perms: ['roles.view', 'roles.edit_available', 'roles.delete_available'],
      make: async () => (await role(api, { permissions: [] })).data.id,
      change: { name: `Changed ${uid()}` },
    },
    {
      noun: 'group',
      perms: ['domains.edit_descendant', 'domains.delete_self'],
      make: async () =>
        (
          await getCommand('group.create').run(
            { api },
            { name: `Beyond ${uid()}`, parent_id: await rootGroup(api) },
          )
        ).data.id,
      change: { name: 'Changed' },
    },
    {
      noun: 'marker',
      perms: ['markers.view', 'markers.edit', 'markers.delete'],
      make: async () =>
        (await getCommand('marker.create').run({ api }, { name: `Beyond ${uid()}`, color: '#101010' })).data
          .id,
      change: { name: `Changed ${uid()}` },
    },
  ];

  it.each(families)('$noun', async (f) => {
    const scoped = await userWith(ts, api, { permissions: f.perms, domains: [w.group], available: [w.low] });
    const client = await scoped.client();
    const id = await f.make();
    const get = () => getCommand(`${f.noun}.get` as 'user.get').run({ api }, { id });
    const before = await get();
    const update = await failure(
      getCommand(`${f.noun}.update` as 'user.update').run({ api: client }, { id, ...f.change } as never),
    );
    expect([403, 404], `${f.noun}.update`).toContain(update.status);
    const del = await failure(getCommand(`${f.noun}.delete` as 'user.delete').run({ api: client }, { id }));
    expect([403, 404], `${f.noun}.delete`).toContain(del.status);
    const all = await getCommand(`${f.noun}.delete_all` as 'user.delete_all').run(
      { api: client },
      { items: [id] },
    );
    expect(all.deleted).toEqual([]);
    expect(await get()).toEqual(before);
  });
});
