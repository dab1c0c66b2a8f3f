import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { getCommand } from '@lintel/commands';
import { ApiError, LoginReply, MemorySessionStore, ApiClient } from '@lintel/core';
import { sendInvitation, sendConfirmation } from '@lintel/server';
import { startTestServer, type TestServer } from '../support/server';
import { startSmtpReceiver, type SmtpReceiver } from '../support/smtp';
import { ManualClock } from '../../apps/server/src/clock';

/** the server's clock: it stands still unless a test moves it */
const clock = new ManualClock();

let ts: TestServer;
let smtp: SmtpReceiver;
beforeAll(async () => {
  smtp = await startSmtpReceiver();
  ts = await startTestServer({ config: { clock, smtpUrl: smtp.url, resendCodeAfterS: 1 } });
});
afterAll(async () => {
  await ts?.close();
  await smtp?.close();
});

const api = () => ts.client();
const run = <T>(p: Promise<T>) => p;
const codeIn = (text: string) => /\b(\d{6})\b/.exec(text)?.[1];
const linkIn = (text: string, path: string) => new RegExp(`${path}/([A-Za-z0-9_-]+)`).exec(text)?.[1];

async function errorOf(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error('expected the call to fail');
}

describe('self-registration through a real SMTP receiver', () => {
  it('sends a code by e-mail, resends it, and confirms into a new group with a session', async () => {
    const email = 'Installer.One@example.test';
    const started = await getCommand('self_registration.create').run(
      { api: api() },
      {
        user_name: 'Ivan Installer',
        user_email: email,
        user_type: 'installer',
        object_name: 'Riverside 12',
        user_password: 'long-enough-1',
      },
    );
    expect(started.token).toBeTruthy();
    const first = await smtp.next(email);
    expect(first.subject).toContain('confirmation code');
    const code1 = codeIn(first.text);
    expect(code1).toMatch(/^\d{6}$/);
    expect(first.text).toContain(`/self-registration/${started.token}`);

    const info = await getCommand('self_registration.info').run({ api: api() }, { token: started.token });
    expect(info).toMatchObject({
      code_type: 'self_registration',
      user_type: 'installer',
      object_name: 'Riverside 12',
      user_email: email.toLowerCase(),
      user_password: '',
    });

    // a wrong code is refused and counted
    const wrong = await errorOf(
      getCommand('self_registration.confirm').run(
        { api: api() },
        { token: started.token, code: code1 === '000000' ? '111111' : '000000' },
      ),
    );
    expect(wrong.message).toBe('invalid_confirmation_code');

    // resend: a new code replaces the old one
    clock.advance(1100);
    await getCommand('self_registration.resend').run({ api: api() }, { token: started.token });
    const second = await smtp.next(email);
    const code2 = codeIn(second.text)!;
    if (code2 !== code1)
      expect(
        (
          await errorOf(
            getCommand('self_registration.confirm').run(
              { api: api() },
              { token: started.token, code: code1! },
            ),
          )
        ).message,
      ).toBe('invalid_confirmation_code');

    const reply = LoginReply.parse(
      await getCommand('self_registration.confirm').run(
        { api: api() },
        { token: started.token, code: code2 },
      ),
    );
    expect(reply.sessions).toHaveLength(1);
    const me = ts.client({ ...reply.sessions[0]! });
    const profile = await getCommand('profile.get').run({ api: me }, {});
    expect(profile).toMatchObject({
      name: 'Ivan Installer',
      email: email.toLowerCase(),
      role: { name: 'Installer' },
    });
    expect(profile.domains.map((d) => d.name)).toEqual(['Riverside 12']);

    // the code is spent, and the e-mail is taken now
    expect(
      (
        await errorOf(
          getCommand('self_registration.confirm').run({ api: api() }, { token: started.token, code: code2 }),
        )
      ).message,
    ).toBe('invalid_confirmation_code');
    const again = await errorOf(
      getCommand('self_registration.create').run(
        { api: api() },
        {
          user_name: 'Other',
          user_email: email,
          user_type: 'private',
          object_name: 'X',
          user_password: 'long-enough-1',
        },
      ),
    );
    expect(again.message).toBe('email_already_used');
    // and the person signs in with e-mail and password
    const login = await getCommand('session.login').run(
      { api: api() },
      { login: email, password: 'long-enough-1' },
    );
    expect(login.sessions).toHaveLength(1);
  });

  it('refuses an early resend with the seconds to wait', async () => {
    const started = await getCommand('self_registration.create').run(
      { api: api() },
      {
        user_name: 'Pat',
        user_email: 'pat@example.test',
        user_type: 'private',
        object_name: 'Flat 4',
        user_password: 'long-enough-2',
      },
    );
    await smtp.next('pat@example.test');
    ts.server.context.config.resendCodeAfterS = 60;
    try {
      const e = await errorOf(
        getCommand('self_registration.resend').run({ api: api() }, { token: started.token }),
      );
      expect(e.status).toBe(429);
      expect(e.data?.seconds).toBeGreaterThan(50);
    } finally {
      ts.server.context.config.resendCodeAfterS = 1;
    }
  });

  it('locks a registration after five wrong codes', async () => {
    const started = await getCommand('self_registration.create').run(
      { api: api() },
      {
        user_name: 'Lock',
        user_email: 'lock@example.test',
        user_type: 'private',
        object_name: 'Flat 5',
        user_password: 'long-enough-3',
      },
    );
    const code = codeIn((await smtp.next('lock@example.test')).text)!;
    const wrongCode = code === '123456' ? '654321' : '123456';
    for (let i = 0; i < 5; i++)
      await errorOf(
        getCommand('self_registration.confirm').run(
          { api: api() },
          { token: started.token, code: wrongCode },
        ),
      );
    const e = await errorOf(
      getCommand('self_registration.confirm').run({ api: api() }, { token: started.token, code }),
    );
    expect(e.message).toBe('invalid_confirmation_code');
  });
});

async function createInvitedUser(login: string, email: string): Promise<number> {
  const db = ts.server.context.db;
  const project = await db
    .selectFrom('projects')
    .select('id')
    .where('uid', '=', 'default')
    .executeTakeFirstOrThrow();
  const role = await db
    .selectFrom('roles')
    .select('id')
    .where('project_id', '=', project.id)
    .where('name', '=', 'Private client')
    .executeTakeFirstOrThrow();
  const account = await db
    .insertInto('accounts')
    .values({ login, email, password_hash: null, activated_at: null })
    .returning('id')
    .executeTakeFirstOrThrow();
  const user = await db
    .insertInto('users')
    .values({ project_id: project.id, account_id: account.id, role_id: role.id, name: `Invited ${login}` })
    .returning('id')
    .executeTakeFirstOrThrow();
  return user.id;
}

describe('invitation by token', () => {
  it('e-mails a link; the person sets a password and is signed in; the link works once', async () => {
    const userId = await createInvitedUser('anna', 'anna@example.test');
    await sendInvitation(ts.server.context, userId);
    const mail = await smtp.next('anna@example.test');
    const token = linkIn(mail.text, '/registration')!;
    expect(token).toBeTruthy();

    const info = await getCommand('registration.invite_info').run({ api: api() }, { token });
    expect(info).toEqual({ name: 'Invited anna', login: 'anna', email: 'anna@example.test' });
    // no sign-in before the password is set
    expect(
      (
        await errorOf(
          getCommand('session.login').run({ api: api() }, { login: 'anna', password: 'whatever-123' }),
        )
      ).message,
    ).toBe('incorrect_login_password');

    const reply = await getCommand('registration.invite_attempt').run(
      { api: api() },
      { token, password: 'anna-password-1' },
    );
    expect(reply.sessions).toHaveLength(1);
    const again = await errorOf(
      getCommand('registration.invite_attempt').run({ api: api() }, { token, password: 'anna-password-2' }),
    );
    expect(again.message).toBe('verification_link_outdated');
    const login = await getCommand('session.login').run(
      { api: api() },
      { login: 'anna', password: 'anna-password-1' },
    );
    expect(login.sessions[0]!.project.uid).toBe('default');
  });

  it('refuses an unknown token with the catalogue message', async () => {
    const e = await errorOf(
      getCommand('registration.invite_info').run({ api: api() }, { token: 'not-a-real-token' }),
    );
    expect(e.status).toBe(400);
    expect(e.message).toBe('verification_link_outdated');
  });

  it('confirms an account by /registration/confirm/{token}', async () => {
    const db = ts.server.context.db;
    const userId = await createInvitedUser('conf', 'conf@example.test');
    const user = await db
      .selectFrom('users')
      .select('account_id')
      .where('id', '=', userId)
      .executeTakeFirstOrThrow();
    await db
      .updateTable('accounts')
      .set({
        password_hash: await (
          await import('../../apps/server/src/auth/crypto')
        ).hashPassword('conf-password-1'),
      })
      .where('id', '=', user.account_id)
      .execute();
    await sendConfirmation(ts.server.context, user.account_id, null);
    const token = linkIn((await smtp.next('conf@example.test')).text, '/registration/confirm')!;
    expect(
      (
        await errorOf(
          getCommand('session.login').run({ api: api() }, { login: 'conf', password: 'conf-password-1' }),
        )
      ).message,
    ).toBe('incorrect_login_password');
    await getCommand('registration.confirm').run({ api: api() }, { token });
    expect(
      (await getCommand('session.login').run({ api: api() }, { login: 'conf', password: 'conf-password-1' }))
        .sessions,
    ).toHaveLength(1);
  });
});

describe('password recovery and reset', () => {
  it('mails a reset link; the reset ends every session and the new password works', async () => {
    const email = 'reset.me@example.test';
    const userId = await createInvitedUser('resetme', email);
    await sendInvitation(ts.server.context, userId);
    const invite = linkIn((await smtp.next(email)).text, '/registration')!;
    const first = await getCommand('registration.invite_attempt').run(
      { api: api() },
      { token: invite, password: 'old-password-1' },
    );
    const signedIn = ts.client({ ...first.sessions[0]! });

    await getCommand('password.recovery').run({ api: api() }, { email: 'RESET.ME@example.test' });
    const mail = await smtp.next(email);
    const code = linkIn(mail.text, '/password/reset')!;
    expect(code).toBeTruthy();
    await getCommand('password.reset').run({ api: api() }, { code, password: 'new-password-1' });

    await expect(getCommand('profile.get').run({ api: signedIn }, {})).rejects.toBeInstanceOf(ApiError);
    expect(
      (
        await errorOf(
          getCommand('session.login').run({ api: api() }, { login: 'resetme', password: 'old-password-1' }),
        )
      ).message,
    ).toBe('incorrect_login_password');
    expect(
      (
        await getCommand('session.login').run(
          { api: api() },
          { login: 'resetme', password: 'new-password-1' },
        )
      ).sessions,
    ).toHaveLength(1);
    // the link is spent
    expect(
      (
        await errorOf(
          getCommand('password.reset').run({ api: api() }, { code, password: 'third-password-1' }),
        )
      ).message,
    ).toBe('verification_link_outdated');
  });

  it('answers the same for an unknown e-mail and sends nothing', async () => {
    const mailJobs = async () =>
      (await sql<{ id: number }>`select id from jobs where kind = 'mail.send'`.execute(ts.server.context.db))
        .rows.length;
    const before = smtp.mails.length;
    const queued = await mailJobs();
    await expect(
      run(getCommand('password.recovery').run({ api: api() }, { email: 'nobody@example.test' })),
    ).resolves.toEqual({ ok: true });
    // no mail was queued, and none is left to send: the outbox is drained rather than waited for
    expect(await mailJobs()).toBe(queued);
    await ts.server.context.jobs.drain();
    expect(smtp.mails.length).toBe(before);
  });
});

describe('simple registration', () => {
  it('is refused while the server keeps registration closed, and works when it is open', async () => {
    const body = { name: 'Open Reg', login: 'openreg', password: 'open-reg-pass-1' };
    expect((await errorOf(getCommand('registration.register').run({ api: api() }, body))).message).toBe(
      'method_prohibited',
    );
    ts.server.context.config.registrationOpen = true;
    try {
      const reply = await getCommand('registration.register').run({ api: api() }, body);
      expect(reply.sessions).toHaveLength(1);
      expect((await errorOf(getCommand('registration.register').run({ api: api() }, body))).message).toBe(
        'user_registered_already',
      );
    } finally {
      ts.server.context.config.registrationOpen = false;
    }
  });
});

describe('without a mail server', () => {
  it('keeps the message in the outbox and writes its text to the log', async () => {
    const bare = await startTestServer();
    try {
      const client = new ApiClient({ baseUrl: bare.url, store: new MemorySessionStore() });
      await getCommand('self_registration.create').run(
        { api: client },
        {
          user_name: 'No Mail',
          user_email: 'nomail@example.test',
          user_type: 'private',
          object_name: 'Flat 9',
          user_password: 'long-enough-9',
        },
      );
      const row = await bare.server.context.db
        .selectFrom('outbox')
        .selectAll()
        .where('to_address', '=', 'nomail@example.test')
        .executeTakeFirstOrThrow();
      expect(row.status).toBe('kept');
      const code = codeIn(row.body)!;
      expect(bare.logs()).toContain(code);
      const count = await sql<{ n: number }>`select count(*)::int as n from outbox`.execute(
        bare.server.context.db,
      );
      expect(count.rows[0]!.n).toBe(1);
    } finally {
      await bare.close();
    }
  });
});
