import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import { ApiError } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';

let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(async () => {
  await ts?.close();
});

async function signIn(login = ts.adminLogin, password = ts.adminPassword) {
  const reply = await getCommand('session.login').run({ api: ts.client() }, { login, password });
  return ts.client({ ...reply.sessions[0]! });
}

describe('profile', () => {
  it('saves name, locale and profile settings with PATCH and records the change in the audit log', async () => {
    const api = await signIn();
    const updated = await getCommand('profile.update').run(
      { api },
      { name: 'Chief Admin', locale: 'ru', profile: { phone: '+4912345', time_format: 'YYYY-MM-DD' } },
    );
    expect(updated).toMatchObject({
      name: 'Chief Admin',
      locale: 'ru',
      profile: { phone: '+4912345', time_format: 'YYYY-MM-DD', identifier_format: 'dec' },
    });
    const again = await getCommand('profile.get').run({ api }, {});
    expect(again).toMatchObject({ name: 'Chief Admin', locale: 'ru' });
    const events = await ts.server.context.db
      .selectFrom('audit_events')
      .selectAll()
      .where('entity', '=', 'profile')
      .execute();
    expect(events.at(-1)).toMatchObject({ action: 'update', user_id: again.id });
    expect(events.at(-1)!.data).toMatchObject({
      before: { name: 'Administrator' },
      after: { name: 'Chief Admin' },
    });
    await getCommand('profile.update').run({ api }, { name: 'Administrator', locale: 'en' });
  });

  it("has no time zone until the user chooses one (the browser's own zone), never a fixed offset", async () => {
    // issue 25, item 2: every profile read '+02:00', so every time in the console was two hours off
    const api = await signIn();
    const before = await getCommand('profile.get').run({ api }, {});
    expect(before.profile.time_zone).toBe('');
    const admin = await getCommand('user.get').run({ api }, { id: before.id });
    expect(admin.profile.time_zone).toBe('');
    const chosen = await getCommand('profile.update').run({ api }, { profile: { time_zone: 'Asia/Tokyo' } });
    expect(chosen.profile.time_zone).toBe('Asia/Tokyo');
    await getCommand('profile.update').run({ api }, { profile: { time_zone: '' } });
  });

  it('refuses unknown fields and bad values by name', async () => {
    const api = await signIn();
    const e = await getCommand('profile.update')
      .run({ api }, { locale: 'de' } as never)
      .catch((x: unknown) => x);
    // the command validates before sending; the server does the same for raw calls
    expect(e).toBeInstanceOf(Error);
    const token = api.store.get()!.token;
    const res = await fetch(`${ts.url}/api/v0/profile`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ locale: 'de', role_id: 1, name: 'x'.repeat(300) }),
    });
    expect(res.status).toBe(422);
    const body = await res.json();
    expect(body.message).toBe('check_fields_data');
    expect(body.data.fields).toEqual(
      expect.arrayContaining([
        { field: 'locale', rule: 'one_of', params: { values: ['en', 'ru'] } },
        { field: 'role_id', rule: 'unknown_field' },
        { field: 'name', rule: 'max_length', params: { length: 255 } },
      ]),
    );
  });

  it('changes the password: the old one must match; other sessions end, this one goes on', async () => {
    const api = await signIn();
    const other = await signIn();
    const wrong = await getCommand('profile.password')
      .run({ api }, { old: 'not-it', new: 'brand-new-pass-1' })
      .catch((x: ApiError) => x);
    expect(wrong).toBeInstanceOf(ApiError);
    expect((wrong as ApiError).message).toBe('invalid_credentials');
    await getCommand('profile.password').run({ api }, { old: ts.adminPassword, new: 'brand-new-pass-1' });
    await expect(getCommand('profile.get').run({ api }, {})).resolves.toMatchObject({ login: 'admin' });
    await expect(getCommand('profile.get').run({ api: other }, {})).rejects.toBeInstanceOf(ApiError);
    const fresh = await signIn(ts.adminLogin, 'brand-new-pass-1');
    await getCommand('profile.password').run(
      { api: fresh },
      { old: 'brand-new-pass-1', new: ts.adminPassword },
    );
  });

  it('keeps the mobile pop-up flag', async () => {
    const api = await signIn();
    expect(
      (await getCommand('profile.mobile_popup').run({ api }, { is_app_popup_active: false })).profile
        .is_app_popup_active,
    ).toBe(false);
    expect((await getCommand('profile.get').run({ api }, {})).profile.is_app_popup_active).toBe(false);
  });

  it('deletes an own account with its password, but never the last administrator', async () => {
    const api = await signIn();
    const last = await getCommand('profile.delete')
      .run({ api }, { password: ts.adminPassword })
      .catch((x: ApiError) => x);
    expect((last as ApiError).message).toBe('cant_perform_action');

    ts.server.context.config.registrationOpen = true;
    const reg = await getCommand('registration.register').run(
      { api: ts.client() },
      { name: 'Leaver', login: 'leaver', password: 'leaver-pass-1' },
    );
    ts.server.context.config.registrationOpen = false;
    const me = ts.client({ ...reg.sessions[0]! });
    const bad = await getCommand('profile.delete')
      .run({ api: me }, { password: 'nope' })
      .catch((x: ApiError) => x);
    expect((bad as ApiError).message).toBe('invalid_credentials');
    await getCommand('profile.delete').run({ api: me }, { password: 'leaver-pass-1' });
    const gone = await getCommand('session.login')
      .run({ api: ts.client() }, { login: 'leaver', password: 'leaver-pass-1' })
      .catch((x: ApiError) => x);
    expect((gone as ApiError).message).toBe('incorrect_login_password');
  });
});
