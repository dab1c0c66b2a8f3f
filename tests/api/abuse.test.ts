/**
 * Abuse of public routes (issue 12, points 3, 6, 8 and 9): every limit is a count, never a time; where a
 * window must end the server's clock (a ManualClock) moves instead of the test waiting.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { argonCount, hashPassword } from '../../apps/server/src/auth/crypto';
import { startTestServer, type TestServer } from '../support/server';
import { ManualClock } from '../../apps/server/src/clock';

/** the server's clock: it stands still unless a test moves it */
const clock = new ManualClock();
import { uid } from '../support/fixtures';

const LOGIN_LIMIT = 10; // failed logins per address and window
const ACCOUNT_LIMIT = 15; // failed logins per account and window
const PASSWORD_ROUTE_LIMIT = 5; // calls of a password-hashing public route per address and window
const MAIL_TARGET_LIMIT = 3; // default: messages to one e-mail address per 10 minutes
const MAIL_ADDRESS_LIMIT = 10; // default: calls of a mail-sending route per address per 10 minutes

let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer({
    config: {
      clock,
      trustProxy: true,
      // no slowing down here: these tests count answers, throttle.test.ts times them
      login: {
        slowAfter: 1000,
        blockAfter: LOGIN_LIMIT,
        accountBlockAfter: ACCOUNT_LIMIT,
        windowS: 900,
        maxDelayMs: 0,
      },
      rateLimits: { password_address: { limit: PASSWORD_ROUTE_LIMIT, windowS: 600 } },
    },
  });
});
afterAll(async () => {
  await ts?.close();
});

interface Reply {
  status: number;
  body: { message?: string; data?: Record<string, unknown> | null };
  retryAfter: string | null;
}

let nextIp = 1;
/** A caller address of its own for each test (the server trusts X-Forwarded-For here). */
const freshIp = () => `10.${(nextIp >> 16) & 255}.${(nextIp >> 8) & 255}.${nextIp++ & 255}`;

async function post(path: string, body: unknown, ip: string): Promise<Reply> {
  const res = await fetch(`${ts.url}/api/v0${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': ip },
    body: JSON.stringify(body),
  });
  return {
    status: res.status,
    body: (await res.json()) as Reply['body'],
    retryAfter: res.headers.get('retry-after'),
  };
}

const login = (loginName: string, password: string, ip: string) =>
  post('/login', { login: loginName, password }, ip);

/** An activated account with a password, in the default project. */
async function account(email?: string): Promise<{ id: number; login: string; password: string }> {
  const db = ts.server.context.db;
  const name = `a${uid()}`;
  const password = `pw-${uid()}-secret`;
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
  const row = await db
    .insertInto('accounts')
    .values({
      login: name,
      email: email ?? null,
      password_hash: await hashPassword(password),
      activated_at: new Date(),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db
    .insertInto('users')
    .values({ project_id: project.id, account_id: row.id, role_id: role.id, name })
    .execute();
  return { id: row.id, login: name, password };
}

/** A 429 as the catalogue says: the error, the seconds to wait in its data and in Retry-After. */
function expectRefused(r: Reply, message: 'too_many_attempts' | 'too_many_requests') {
  expect(r.status).toBe(429);
  expect(r.body.message).toBe(message);
  expect(r.body.data?.seconds).toBeGreaterThan(0);
  expect(Number(r.retryAfter)).toBe(r.body.data?.seconds);
}

describe('point 3: the login throttle', () => {
  it("cannot be reset by the attacker's own successful logins: the address keeps its failures", async () => {
    const victim = await account();
    const own = await account();
    const ip = freshIp();
    const wrong: number[] = [];
    const mine: number[] = [];
    for (let i = 0; i < LOGIN_LIMIT + 2; i++) {
      wrong.push((await login(victim.login, `guess-${i}`, ip)).status);
      mine.push((await login(own.login, own.password, ip)).status);
    }
    // ten guesses were evaluated, then the address is refused, even for the attacker's own account
    expect(wrong).toEqual([...Array(LOGIN_LIMIT).fill(401), 429, 429]);
    expect(mine.slice(0, LOGIN_LIMIT - 1).every((s) => s === 200)).toBe(true);
    expect(mine.slice(LOGIN_LIMIT - 1).every((s) => s === 429)).toBe(true);
    expectRefused(await login(victim.login, victim.password, ip), 'too_many_attempts');
    // the victim himself, from elsewhere, is not locked out by ten failures (the account's limit is higher)
    expect((await login(victim.login, victim.password, freshIp())).status).toBe(200);
  });

  it('counts before checking: of 50 parallel wrong logins at most the limit are evaluated', async () => {
    const victim = await account();
    const ip = freshIp();
    const replies = await Promise.all(
      Array.from({ length: 50 }, (_, i) => login(victim.login, `parallel-${i}`, ip)),
    );
    const evaluated = replies.filter(
      (r) => r.status === 401 && r.body.message === 'incorrect_login_password',
    );
    const refused = replies.filter((r) => r.status === 429);
    expect(evaluated.length).toBeLessThanOrEqual(LOGIN_LIMIT);
    expect(evaluated.length + refused.length).toBe(50);
    for (const r of refused) expectRefused(r, 'too_many_attempts');
    const audited = await ts.server.context.db
      .selectFrom('audit_events')
      .select('id')
      .where('action', '=', 'login_failed')
      .where('ip', '=', ip)
      .execute();
    expect(audited.length).toBe(evaluated.length);
  });

  it('refuses an account guessed at from many addresses only to those addresses, until its window ends; a success clears only the account', async () => {
    const victim = await account();
    const statuses: number[] = [];
    const spread: string[] = [];
    for (let i = 0; i <= ACCOUNT_LIMIT; i++) {
      spread.push(freshIp());
      statuses.push((await login(victim.login, `spread-${i}`, spread[i]!)).status);
    }
    // each address gets its guess evaluated (none failed on this account before) ...
    expect(statuses).toEqual(Array(ACCOUNT_LIMIT + 1).fill(401));
    // ... and, the account over its limit, none of them gets another, the right password included
    expectRefused(await login(victim.login, `spread-again`, spread[0]!), 'too_many_attempts');
    expectRefused(await login(victim.login, victim.password, spread[1]!), 'too_many_attempts');
    // the owner, from an address that never failed, is not locked out (issue 20, item 9)
    expect((await login(victim.login, victim.password, freshIp())).status).toBe(200);

    clock.advance(901_000);
    try {
      const ip = freshIp();
      for (let i = 0; i < LOGIN_LIMIT - 1; i++)
        expect((await login(victim.login, `again-${i}`, ip)).status).toBe(401);
      // the success clears the account's nine failures ...
      expect((await login(victim.login, victim.password, ip)).status).toBe(200);
      const counters = await ts.server.context.db
        .selectFrom('rate_limits')
        .select(['key', 'count'])
        .where('key', 'in', [`login_account:id:${victim.id}`, `login_address:${ip}`])
        .execute();
      expect(counters).toEqual([{ key: `login_address:${ip}`, count: LOGIN_LIMIT - 1 }]);
      // ... but not the address's: one more failure there and the address is refused
      expect((await login(victim.login, 'one-more', ip)).status).toBe(401);
      expectRefused(await login(victim.login, victim.password, ip), 'too_many_attempts');
    } finally {
      clock.advance(-901_000);
    }
  });
});

describe('every public route', () => {
  it('is limited per address by default, with Retry-After', async () => {
    const config = ts.server.context.config;
    const saved = config.rateLimits;
    config.rateLimits = { ...saved, public: { limit: 3, windowS: 60 } };
    try {
      const ip = freshIp();
      const get = async () => {
        const res = await fetch(`${ts.url}/api/v0/server-info`, { headers: { 'x-forwarded-for': ip } });
        return {
          status: res.status,
          body: (await res.json()) as Reply['body'],
          retryAfter: res.headers.get('retry-after'),
        };
      };
      for (let i = 0; i < 3; i++) expect((await get()).status).toBe(200);
      expectRefused(await get(), 'too_many_requests');
      // counted per route: another public route from the same address still answers
      expect((await post('/refresh', { token: 'not-a-token' }, ip)).status).toBe(401);
      // and a signed-in route has no such limit: four calls, four 401s
      for (let i = 0; i < 4; i++)
        expect((await fetch(`${ts.url}/api/v0/profile`, { headers: { 'x-forwarded-for': ip } })).status).toBe(
          401,
        );
    } finally {
      config.rateLimits = saved;
    }
  });
});

describe('point 6: mail floods', () => {
  it('sends at most three messages to one address, however many addresses ask', async () => {
    const target = `victim-${uid()}@example.test`;
    const replies = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        post(
          '/self-registration',
          {
            user_name: 'Flood',
            user_email: i % 2 ? target.toUpperCase() : target,
            user_type: 'private',
            object_name: `Flat ${i}`,
            user_password: 'long-enough-1',
          },
          freshIp(),
        ),
      ),
    );
    const sent = await ts.server.context.db
      .selectFrom('outbox')
      .select('id')
      .where(sql`lower(to_address)`, '=', target)
      .execute();
    expect(sent.length).toBe(MAIL_TARGET_LIMIT);
    expect(replies.filter((r) => r.status === 200).length).toBe(MAIL_TARGET_LIMIT);
    for (const r of replies.filter((x) => x.status !== 200)) expectRefused(r, 'too_many_requests');
    // password recovery to the same address counts against the same share, whether or not it has an account
    expectRefused(await post('/password/recovery', { email: target }, freshIp()), 'too_many_requests');
  });

  it('counts plus-addressed variants as the same recipient (issue 20, item 10)', async () => {
    const name = `victim-${uid()}`;
    const statuses: number[] = [];
    for (let i = 0; i <= MAIL_TARGET_LIMIT; i++)
      statuses.push(
        (await post('/password/recovery', { email: `${name}+${i}@Example.test` }, freshIp())).status,
      );
    expect(statuses).toEqual([...Array(MAIL_TARGET_LIMIT).fill(200), 429]);
    expectRefused(
      await post('/password/recovery', { email: `${name}@example.test` }, freshIp()),
      'too_many_requests',
    );
  });

  it('limits one address sending to many e-mails', async () => {
    const ip = freshIp();
    const statuses: number[] = [];
    for (let i = 0; i <= MAIL_ADDRESS_LIMIT; i++)
      statuses.push((await post('/password/recovery', { email: `nobody-${uid()}@example.test` }, ip)).status);
    expect(statuses).toEqual([...Array(MAIL_ADDRESS_LIMIT).fill(200), 429]);
  });
});

describe('point 8: unauthenticated password hashing', () => {
  it('refuses a bad reset code, invitation link or taken e-mail without hashing, and throttles the route', async () => {
    const taken = `taken-${uid()}@example.test`;
    await account(taken);
    const before = argonCount.value;
    const ip = freshIp();
    for (let i = 0; i < PASSWORD_ROUTE_LIMIT; i++) {
      const r = await post('/password/reset', { code: `bad-code-${i}`, password: 'a-new-password-1' }, ip);
      expect(r.status).toBe(400);
      expect(r.body.message).toBe('verification_link_outdated');
    }
    const invite = await post(
      '/registration/invite',
      { token: 'bad-token', password: 'a-new-password-1' },
      freshIp(),
    );
    expect(invite.body.message).toBe('verification_link_outdated');
    const self = await post(
      '/self-registration',
      {
        user_name: 'Taken',
        user_email: taken,
        user_type: 'private',
        object_name: 'Flat 1',
        user_password: 'long-enough-1',
      },
      freshIp(),
    );
    expect(self.body.message).toBe('email_already_used');
    expect(argonCount.value - before).toBe(0);
    // the next bad code from that address is refused before the handler runs
    expectRefused(
      await post('/password/reset', { code: 'bad-code-x', password: 'a-new-password-1' }, ip),
      'too_many_attempts',
    );
    expect(argonCount.value - before).toBe(0);
  });
});

describe('point 9: the self-registration code', () => {
  it('takes five guesses in all, however many arrive at once', async () => {
    const email = `guess-${uid()}@example.test`;
    const started = await post(
      '/self-registration',
      {
        user_name: 'Guess',
        user_email: email,
        user_type: 'private',
        object_name: 'Flat 7',
        user_password: 'long-enough-1',
      },
      freshIp(),
    );
    expect(started.status).toBe(200);
    const token = (started.body as { token: string }).token;
    const mail = await ts.server.context.db
      .selectFrom('outbox')
      .select('body')
      .where('to_address', '=', email)
      .executeTakeFirstOrThrow();
    const code = /\b(\d{6})\b/.exec(mail.body)![1]!;
    const wrongCode = code === '123456' ? '654321' : '123456';
    // from fifty addresses, so no per-address limit hides the code's own
    const replies = await Promise.all(
      Array.from({ length: 50 }, () =>
        post('/self-registration/confirm', { token, code: wrongCode }, freshIp()),
      ),
    );
    expect(replies.every((r) => r.status === 400 && r.body.message === 'invalid_confirmation_code')).toBe(
      true,
    );
    // each evaluated guess saw its own count: 4, 3, 2, 1 left once each; every other one found the code locked
    const left = replies.map((r) => Number(r.body.data?.attempts_left)).filter((n) => n > 0);
    expect(left.sort()).toEqual([1, 2, 3, 4]);
    const row = await ts.server.context.db
      .selectFrom('auth_codes')
      .select('attempts')
      .where('kind', '=', 'self_registration')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(row.attempts).toBe(5);
    const right = await post('/self-registration/confirm', { token, code }, freshIp());
    expect(right.body).toMatchObject({ message: 'invalid_confirmation_code', data: { attempts_left: 0 } });
  });
});
