/**
 * Identity rules (issue 12 points 7 and 10): logins and e-mails are one namespace for sign-in, on create,
 * update and import; and a user may always edit his own record, password and avatar, even as a private
 * client whose role holds only "edit profile".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Jimp } from 'jimp';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import {
  admin,
  everyFeatureOn,
  failure,
  licence,
  rootGroup,
  signIn,
  uid,
  userWith,
} from '../support/fixtures';

let ts: TestServer;
let api: ApiClient;
let root: number;
let plainRole: number;
let privateRole: number;
beforeAll(async () => {
  ts = await startTestServer();
  api = await admin(ts);
  root = await rootGroup(api);
  plainRole = (await getCommand('role.create').run({ api }, { name: `Plain ${uid()}`, permissions: [] })).data
    .id;
  const system = (
    await getCommand('role.list').run(
      { api },
      { filters: [{ field: 'is_system', rule: 'equals', value: true }] },
    )
  ).data;
  privateRole = system.find((r) => r.name === 'Private client')!.id;
});
afterAll(async () => {
  await ts?.close();
});

const create = (login: string, extra: Record<string, unknown> = {}) =>
  getCommand('user.create').run(
    { api },
    {
      login,
      name: `N ${login}`,
      role: plainRole,
      domains: [root],
      password: 'pw-long-enough',
      send_registration_link: false,
      ...extra,
    },
  );
const byLogin = async (login: string) =>
  (
    await getCommand('user.list').run(
      { api },
      { filters: [{ field: 'login', rule: 'equals', value: login }] },
    )
  ).data;

describe('logins and e-mails share one namespace (point 7)', () => {
  it("a new login may not be another account's e-mail, and that person still signs in by e-mail", async () => {
    const email = `ann.${uid()}@example.test`;
    await create(`ann${uid()}`, { email });
    const e = await failure(create(email));
    expect(e.status).toBe(409);
    expect(e.message).toBe('login_already_used');
    expect(await byLogin(email)).toEqual([]);
    await expect(signIn(ts, email, 'pw-long-enough')).resolves.toBeTruthy();
    // case does not matter either
    expect((await failure(create(email.toUpperCase()))).message).toBe('login_already_used');
  });

  it("a new e-mail may not be another account's login; nor may an update make either so", async () => {
    const login = `bob.${uid()}@example.test`;
    await create(login);
    const e = await failure(create(`other${uid()}`, { email: login }));
    expect(e.status).toBe(409);
    expect(e.message).toBe('email_already_used');

    const carol = (await create(`carol${uid()}`, { email: `carol.${uid()}@example.test` })).data;
    const u1 = await failure(getCommand('user.update').run({ api }, { id: carol.id, email: login }));
    expect(u1.message).toBe('email_already_used');
    const daveEmail = `dave.${uid()}@example.test`;
    await create(`dave${uid()}`, { email: daveEmail });
    const u2 = await failure(getCommand('user.update').run({ api }, { id: carol.id, login: daveEmail }));
    expect(u2.message).toBe('login_already_used');
    expect(await getCommand('user.get').run({ api }, { id: carol.id })).toEqual(carol);
    // one's own e-mail as one's login is no clash
    await expect(
      getCommand('user.update').run({ api }, { id: carol.id, login: carol.email! }),
    ).resolves.toBeTruthy();
  });

  it("self-registration may not take another account's e-mail as its login", async () => {
    const email = `fay.${uid()}@example.test`;
    await create(`fay${uid()}`, { email });
    ts.server.context.config.registrationOpen = true;
    try {
      const e = await failure(
        getCommand('registration.register').run(
          { api: ts.client() },
          { name: 'Fay Again', login: email, password: 'open-reg-pass-1' },
        ),
      );
      expect(e.message).toBe('user_registered_already');
    } finally {
      ts.server.context.config.registrationOpen = false;
    }
    await expect(signIn(ts, email, 'pw-long-enough')).resolves.toBeTruthy();
  });

  it('an import row whose login is an existing e-mail is rejected by the same rule', async () => {
    const email = `eve.${uid()}@example.test`;
    await create(`eve${uid()}`, { email });
    const { id } = await getCommand('user.import_start').run({ api }, { file_name: 'ids.csv' });
    const progress = await getCommand('user.import_rows').run(
      { api },
      {
        id,
        rows: [
          {
            line: 2,
            login: email,
            name: 'Eve Again',
            role: String(plainRole),
            domains: String(root),
            password: 'pw-long-enough',
          },
        ],
      },
    );
    expect(progress.errors).toEqual([{ line: 2, field: 'login', key: 'login_already_used' }]);
  });
});

describe('a user may always edit himself (point 10)', () => {
  it("a private client edits his own record, password and avatar; nobody else's", async () => {
    const login = `pc${uid()}`;
    const me = (
      await getCommand('user.create').run(
        { api },
        {
          login,
          name: 'Private',
          role: privateRole,
          domains: [root],
          password: 'pw-long-enough',
          send_registration_link: false,
        },
      )
    ).data;
    const other = (await create(`o${uid()}`)).data;
    const client = await signIn(ts, login, 'pw-long-enough');

    const renamed = await getCommand('user.update').run(
      { api: client },
      { id: me.id, name: 'Renamed Private', profile: { phone: '+4911111' } },
    );
    expect(renamed.data).toMatchObject({ name: 'Renamed Private', profile: { phone: '+4911111' } });
    await expect(
      getCommand('user.password').run({ api: client }, { id: me.id, new_password: 'a-new-long-one' }),
    ).resolves.toEqual({ ok: true });
    await expect(signIn(ts, login, 'a-new-long-one')).resolves.toBeTruthy();
    const image = new Blob(
      [new Uint8Array(await new Jimp({ width: 32, height: 32, color: 0x808080ff }).getBuffer('image/png'))],
      { type: 'image/png' },
    );
    const up = await getCommand('user.avatar_upload').run(
      { api: client },
      { id: me.id, image, x: 0, y: 0, size: 20 },
    );
    expect(up.avatar_url).toMatch(/^\/storage\/avatars\//);
    await expect(getCommand('user.avatar_delete').run({ api: client }, { id: me.id })).resolves.toEqual({
      avatar_url: null,
    });
    // his role is not his to change
    expect(
      (await failure(getCommand('user.update').run({ api: client }, { id: me.id, role: plainRole }))).status,
    ).toBe(403);

    for (const call of [
      () => getCommand('user.update').run({ api: client }, { id: other.id, name: 'Hijacked' }),
      () => getCommand('user.password').run({ api: client }, { id: other.id, new_password: 'taken-over-1' }),
      () => getCommand('user.avatar_delete').run({ api: client }, { id: other.id }),
    ])
      expect((await failure(call())).status).toBe(404);
    expect(await getCommand('user.get').run({ api }, { id: other.id })).toEqual(other);
  });
});

describe('a delete asked as a dry run (issue 25 item 10: a role in use was refused only after the confirmation)', () => {
  it('says which would go and why the rest would stay, and deletes nothing', async () => {
    const held = (await getCommand('role.create').run({ api }, { name: `Held ${uid()}`, permissions: [] }))
      .data.id;
    const free = (await getCommand('role.create').run({ api }, { name: `Free ${uid()}`, permissions: [] }))
      .data.id;
    await create(`holder${uid()}`, { role: held });
    const before = await getCommand('audit_event.list')
      .run({ api }, { limit: 1 })
      .then((r) => r.meta.total);

    const dry = await getCommand('role.delete_all').run({ api }, { items: [held, free], dry_run: true });
    expect(dry.deleted).toEqual([free]);
    expect(dry.not_deleted).toEqual([{ id: held, reason: 'has_dependencies', dependencies: { users: 1 } }]);
    // nothing went, and nothing was audited
    for (const id of [held, free]) expect((await getCommand('role.get').run({ api }, { id })).id).toBe(id);
    expect(
      await getCommand('audit_event.list')
        .run({ api }, { limit: 1 })
        .then((r) => r.meta.total),
    ).toBe(before);

    // the same call for real does what the dry run said
    const real = await getCommand('role.delete_all').run({ api }, { items: [held, free] });
    expect(real).toEqual(dry);
    expect(await failure(getCommand('role.get').run({ api }, { id: free }))).toMatchObject({ status: 404 });
  });
});

describe("a profile's virtual number (issue 22 item 3: anyone could name any number on himself, and the dialer gives its HA1)", () => {
  it('names only a free number, and one of his own only when it is his or he may edit numbers', async () => {
    await licence(ts, everyFeatureOn());
    const num = (n: string) =>
      getCommand('sip_number.create')
        .run({ api }, { number: n, name: `Desk ${n}`, domain_id: root, password: 'Secret-123' })
        .then((r) => r.data.id);
    const tag = String(Math.floor(Math.random() * 90000) + 10000);
    const [mine, theirs] = [await num(`7${tag}1`), await num(`7${tag}2`)];
    // the administrator gives one to a concierge
    const concierge = await create(`conc${uid()}`, { profile: { sip_number_id: theirs } });
    // a second user may not be given the same
    expect(await failure(create(`other${uid()}`, { profile: { sip_number_id: theirs } }))).toMatchObject({
      status: 409,
      code: 'virtual_number_not_free',
    });
    // a user who may edit only his own profile may not name a number on himself
    const self = await userWith(ts, api, {
      permissions: ['users.edit_profile', 'users.view'],
      domains: [root],
    });
    const selfApi = await self.client();
    const edit = (numberId: number) =>
      getCommand('user.update').run({ api: selfApi }, { id: self.id, profile: { sip_number_id: numberId } });
    expect(await failure(edit(theirs))).toMatchObject({ code: 'virtual_number_not_free' });
    expect(await failure(edit(mine))).toMatchObject({ status: 403, code: 'method_prohibited' });
    expect(concierge.data.profile.sip_number_id).toBe(theirs);
  });
});
