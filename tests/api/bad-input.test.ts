import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { registry, getCommand, toRequest } from '@lintel/commands';
import { ErrorCatalogue } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { startSmtpReceiver, type SmtpReceiver } from '../support/smtp';

let ts: TestServer;
let smtp: SmtpReceiver;
let token = '';
beforeAll(async () => {
  smtp = await startSmtpReceiver();
  // the fuzzing below sends hundreds of public calls from one address: the rate limits (tested in
  // abuse.test.ts) are raised here so that the log check after it is not refused as a flood
  const lots = { limit: 100_000, windowS: 600 };
  ts = await startTestServer({
    config: { smtpUrl: smtp.url, rateLimits: { public: lots, mail_address: lots, password_address: lots } },
  });
  const reply = await getCommand('session.login').run(
    { api: ts.client() },
    { login: ts.adminLogin, password: ts.adminPassword },
  );
  token = reply.sessions[0]!.token;
});
afterAll(async () => {
  await ts?.close();
  await smtp?.close();
});

const known = new Set([...Object.keys(ErrorCatalogue), 'Unauthenticated']);

async function raw(method: string, path: string, body?: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${ts.url}/api/v0${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body,
  });
  const text = await res.text();
  // a report's export answers with its file (CSV, XLSX): only JSON replies are parsed
  const json = res.headers.get('content-type')?.includes('json') ?? false;
  return { status: res.status, body: text ? (json ? JSON.parse(text) : text) : null };
}

describe('bad input gets a 4xx with a catalogue code, never a 500', () => {
  it('missing fields, wrong types and oversized strings are named', async () => {
    const r = await raw(
      'POST',
      '/self-registration',
      JSON.stringify({
        user_name: 'x'.repeat(256),
        user_email: 'not-an-email',
        user_type: 'wizard',
        user_password: 42,
      }),
    );
    expect(r.status).toBe(422);
    expect(r.body.message).toBe('check_fields_data');
    expect(r.body.data.fields).toEqual(
      expect.arrayContaining([
        { field: 'user_name', rule: 'max_length', params: { length: 255 } },
        { field: 'user_email', rule: 'email' },
        { field: 'user_type', rule: 'one_of', params: { values: ['installer', 'private'] } },
        { field: 'object_name', rule: 'required' },
        { field: 'user_password', rule: 'invalid_type', params: { expected: 'string' } },
      ]),
    );
  });

  it('a body that is not JSON, an array, a huge body, an unknown route', async () => {
    expect(await raw('POST', '/login', '{"login": ')).toMatchObject({
      status: 400,
      body: { message: 'invalid_data_sent' },
    });
    expect(await raw('POST', '/login', '[1,2]')).toMatchObject({
      status: 400,
      body: { message: 'invalid_data_sent' },
    });
    expect(
      await raw('POST', '/login', 'login=a', { 'content-type': 'application/x-www-form-urlencoded' }),
    ).toMatchObject({ status: 415, body: { message: 'invalid_data_sent' } });
    expect(
      await raw('POST', '/login', JSON.stringify({ login: 'a', password: 'x'.repeat(2 * 1024 * 1024) })),
    ).toMatchObject({ status: 413, body: { message: 'payload_too_large' } });
    expect(await raw('GET', '/no-such-thing')).toMatchObject({
      status: 404,
      body: { message: 'item_not_found' },
    });
    expect(
      await raw(
        'POST',
        '/login',
        JSON.stringify({ login: 'admin', password: 'x', project: 'no-such-project' }),
      ),
    ).toMatchObject({ status: 401 });
  });

  it('random bodies on every route: only 2xx or 4xx with a catalogue code (property test)', async () => {
    const value = fc.oneof(
      fc.string({ maxLength: 300 }),
      fc.integer(),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
      fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 3 }),
    );
    const commands = [...registry.values()].filter(
      (c) => c.id !== 'profile.delete' && c.id !== 'session.logout',
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...commands),
        fc.dictionary(
          fc.constantFrom(
            'login',
            'password',
            'token',
            'code',
            'name',
            'locale',
            'email',
            'user_email',
            'project',
            'profile',
            'new',
            'old',
            'x',
          ),
          value,
          { maxKeys: 6 },
        ),
        async (cmd, args) => {
          const req = toRequest(cmd, { token: 'random-token', ...args });
          const qs = req.query && Object.keys(req.query).length ? `?${new URLSearchParams(req.query)}` : '';
          const r = await raw(
            cmd.http.method,
            `${req.path}${qs}`,
            req.body === undefined ? undefined : JSON.stringify(req.body),
          );
          expect(r.status, `${cmd.id} ${JSON.stringify(args)}`).toBeLessThan(500);
          if (r.status >= 400) expect(known.has(r.body.message), `${cmd.id}: ${r.body.message}`).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('no password, token or code reaches the log', () => {
  it('after logins, refreshes, registrations and resets', async () => {
    const password = 'Sekr3t-Pass-Word';
    const started = await getCommand('self_registration.create').run(
      { api: ts.client() },
      {
        user_name: 'Log Check',
        user_email: 'logcheck@example.test',
        user_type: 'private',
        object_name: 'Flat 1',
        user_password: password,
      },
    );
    const mail = await smtp.next('logcheck@example.test');
    const code = /\b(\d{6})\b/.exec(mail.text)![1]!;
    const reply = await getCommand('self_registration.confirm').run(
      { api: ts.client() },
      { token: started.token, code },
    );
    const s = reply.sessions[0]!;
    const refreshed = await getCommand('session.refresh').run({ api: ts.client() }, { token: s.refresh });
    await getCommand('password.recovery').run({ api: ts.client() }, { email: 'logcheck@example.test' });
    const reset = /\/password\/reset\/([A-Za-z0-9_-]+)/.exec(
      (await smtp.next('logcheck@example.test')).text,
    )![1]!;
    await getCommand('password.reset').run({ api: ts.client() }, { code: reset, password: 'Another-Pass-1' });
    await raw('GET', `/self-registration/${started.token}`);
    await raw(
      'POST',
      '/login',
      JSON.stringify({ login: 'logcheck@example.test', password: 'wrong-Pass-77' }),
    );

    const logs = ts.logs();
    expect(logs).toContain('"route":"/api/v0/self-registration/:token"');
    for (const secret of [
      password,
      'Another-Pass-1',
      'wrong-Pass-77',
      ts.adminPassword,
      code,
      reset,
      started.token,
      s.token,
      s.refresh,
      refreshed.session.token,
      refreshed.session.refresh,
      token,
    ]) {
      expect(logs.includes(secret), `a secret reached the log`).toBe(false);
    }
  });
});
