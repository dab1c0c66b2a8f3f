import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server';
import { ManualClock } from '../../apps/server/src/clock';

/** the server's clock: it stands still unless a test moves it */
const clock = new ManualClock();

let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer({
    config: {
      clock,
      trustProxy: true,
      login: { slowAfter: 2, blockAfter: 5, accountBlockAfter: 20, windowS: 600, maxDelayMs: 400 },
    },
  });
});
afterAll(async () => {
  await ts?.close();
});

const attempt = (password: string, ip = '203.0.113.7') =>
  fetch(`${ts.url}/api/v0/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': ip },
    body: JSON.stringify({ login: ts.adminLogin, password }),
  });

describe('repeated failed logins', () => {
  it('are slowed, then blocked until the window ends, then allowed again', async () => {
    const timings: number[] = [];
    for (let i = 0; i < 4; i++) {
      const t0 = performance.now();
      const res = await attempt('wrong');
      timings.push(performance.now() - t0);
      expect(res.status).toBe(401);
    }
    // the third and fourth failures were held back (250 ms, then 400 ms, the configured maximum)
    expect(timings[3]!).toBeGreaterThanOrEqual(380);
    expect((await attempt('wrong')).status).toBe(401); // the fifth: now blocked
    const blocked = await attempt(ts.adminPassword);
    expect(blocked.status).toBe(429);
    const body = await blocked.json();
    expect(body).toMatchObject({ message: 'too_many_attempts', error_code: 'too_many_attempts' });
    expect(body.data.seconds).toBeGreaterThan(0);
    const events = await ts.server.context.db
      .selectFrom('audit_events')
      .select('action')
      .where('action', '=', 'login_failed')
      .execute();
    expect(events.length).toBe(5);

    // another address is not affected
    expect((await attempt(ts.adminPassword, '198.51.100.20')).status).toBe(200);

    // the window (600 s) ends: the server's clock moves on instead of the test waiting
    clock.advance(601_000);
    try {
      expect((await attempt(ts.adminPassword)).status).toBe(200);
    } finally {
      clock.advance(-601_000);
    }
  });
});

describe('a lock-out aimed at an account (issue 20, item 9)', () => {
  it('does not keep its owner out from an address that never failed; the addresses that failed stay refused', async () => {
    // 20 failures (the account's limit) from five addresses, then one more: the administrator's account is over
    const attackers = ['192.0.2.1', '192.0.2.2', '192.0.2.3', '192.0.2.4', '192.0.2.5'];
    for (const ip of attackers)
      for (let i = 0; i < 4; i++) expect((await attempt(`guess-${i}`, ip)).status).toBe(401);
    expect((await attempt('one-more', '192.0.2.6')).status).toBe(401);
    // an attacker's address, even with the right password, is refused while the account is over its limit
    const refused = await attempt(ts.adminPassword, '192.0.2.1');
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ error_code: 'too_many_attempts' });
    // the administrator, from an address that never failed, signs in (before: 429 for 15 minutes)
    expect((await attempt(ts.adminPassword, '198.51.100.77')).status).toBe(200);
  }, 60_000);
});
