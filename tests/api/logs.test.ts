/**
 * Event and system logs (issue 24 item 3; spec part 2 §7 "event logs and system logs (available, get, clear),
 * download"): the instance keeps its own log (`server`) and the event logs (`jobs`, `events`) as bounded files
 * it reads back a page at a time, newest last; clearing is audited and said in the server's log; downloads
 * stream the whole log; no secret — a device's, a SIP number's or a trunk's password, a token — is ever written
 * or served; who may read and who may clear follow the permissions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand, type LogLine } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin, failure, raw, rootGroup, tokenOf, uid, userWith } from '../support/fixtures';

let ts: TestServer;
let api: ApiClient;
let root: number;

beforeAll(async () => {
  ts = await startTestServer();
  api = await admin(ts);
  root = await rootGroup(api);
});
afterAll(() => ts?.close());

const get = (args: Parameters<ReturnType<typeof getCommand<'log.get'>>['run']>[1]) =>
  getCommand('log.get').run({ api }, args);

/** Polls a log until a line passes `test` (the event logs are written as the jobs and events happen). */
async function lineOf(name: 'jobs' | 'events' | 'server', test: (l: LogLine) => boolean): Promise<LogLine> {
  const end = Date.now() + 20_000;
  for (;;) {
    const found = (await get({ name, limit: 1000 })).data.find(test);
    if (found) return found;
    if (Date.now() > end) throw new Error(`no such line in the ${name} log`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function download(name: string, client = api) {
  const res = await fetch(`${ts.url}/api/v0/logs/${name}/download`, {
    headers: { authorization: `Bearer ${tokenOf(client)}` },
  });
  return { res, text: await res.text() };
}

describe('available logs', () => {
  it('lists the system and event logs this instance keeps, with their sizes and bounds', async () => {
    const r = await getCommand('log.available').run({ api }, {});
    // the test servers run no SIP server: its log is not kept here
    expect(r.data.map((s) => [s.name, s.kind])).toEqual([
      ['server', 'system'],
      ['jobs', 'event'],
      ['events', 'event'],
    ]);
    expect(r.data[0]!.size_bytes).toBeGreaterThan(0);
    expect(r.data[0]!.files).toBe(1);
    expect(r.max_bytes).toBe(10 * 1024 * 1024);
    expect(r.max_files).toBe(5);
    expect(r.instance).toBe((await getCommand('system.info').run({ api }, {})).instance);
  });
});

describe('reading a log', () => {
  it('gives the newest lines last, a page at a time, with a cursor to the older ones', async () => {
    for (let i = 0; i < 5; i++) ts.server.context.log.info({ n: i }, `paging line ${i}`);
    const last = await get({ name: 'server', limit: 3, contains: 'paging line' });
    expect(last.data.map((l) => l.message)).toEqual(['paging line 2', 'paging line 3', 'paging line 4']);
    expect(last.data[0]).toMatchObject({ level: 'info', fields: { n: 2 } });
    expect(last.data[0]!.at).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(last.before).toMatch(/^0:\d+$/);
    const older = await get({ name: 'server', limit: 3, contains: 'paging line', before: last.before! });
    expect(older.data.map((l) => l.message)).toEqual(['paging line 0', 'paging line 1']);
    // the server's first line is reached: nothing is older
    expect(older.before).toBeNull();
  });

  it('filters by the least level and by text', async () => {
    const tag = uid();
    ts.server.context.log.debug(`quiet ${tag}`);
    ts.server.context.log.warn(`loud ${tag}`);
    const warn = await get({ name: 'server', contains: tag, level: 'warn' });
    expect(warn.data.map((l) => l.message)).toEqual([`loud ${tag}`]);
    const all = await get({ name: 'server', contains: tag });
    expect(all.data.map((l) => [l.level, l.message])).toEqual([
      ['debug', `quiet ${tag}`],
      ['warn', `loud ${tag}`],
    ]);
  });

  it('has every request the server answered, by route and never by its URL', async () => {
    await getCommand('worker.list').run({ api }, {});
    const line = await lineOf(
      'server',
      (l) => l.message === 'request' && l.fields.route === '/api/v0/workers',
    );
    expect(line.fields).toMatchObject({ method: 'GET', status: 200 });
  });

  it('refuses a log it does not know, and one this instance does not keep', async () => {
    const bad = await raw(ts, api, 'GET', '/logs/passwords');
    expect(bad.status).toBe(422);
    expect(bad.body).toMatchObject({ message: 'check_fields_data' });
    const sip = await failure(get({ name: 'sip' }));
    expect(sip.code).toBe('item_not_found');
    const cursor = await raw(ts, api, 'GET', '/logs/server', { query: { before: '../etc' } });
    expect(cursor.status).toBe(422);
  });
});

describe('event logs', () => {
  it('writes each job run with its kind and outcome into the jobs log', async () => {
    // the day's pruning the jobs module queued at start
    const line = await lineOf('jobs', (l) => l.fields.kind === 'events.prune');
    expect(line).toMatchObject({ level: 'info', message: 'done' });
    expect(line.fields).toMatchObject({ attempt: 1 });
    expect(typeof line.fields.ms).toBe('number');
  });

  it('writes each event delivered, by topic and type, into the events log', async () => {
    const role = await getCommand('role.create').run({ api }, { name: `r ${uid()}`, permissions: [] });
    await getCommand('role.update').run({ api }, { id: role.data.id, permissions: ['audit.view'] });
    const line = await lineOf('events', (l) => l.fields.type === 'RoleChangedEvent');
    expect(line.message).toBe('event');
    expect(line.fields.topic).toBe('private-app-changes');
  });
});

describe('secrets', () => {
  it('are never written into a log nor served from one', async () => {
    const s = (what: string) => `S3cret-${what}-${uid()}`;
    const secrets = {
      devicePassword: s('device'),
      deviceLogin: s('devlogin'),
      sipPassword: s('sip'),
      trunkSecret: s('trunk'),
      token: s('token'),
      bearer: s('bearer'),
      password: s('pw'),
      code: s('code'),
      kamailio: s('kam'),
    };
    // real requests carrying secrets: a failed sign-in, a device with its passwords, a user with hers
    await raw(ts, null, 'POST', '/login', { body: { login: ts.adminLogin, password: secrets.password } });
    const serial = `LG${uid()}`;
    await getCommand('device.create').run({ api }, {
      name: `Door ${serial}`,
      type: 'panel',
      serial_number: serial,
      domain_id: root,
      password: secrets.devicePassword,
      device_password: secrets.deviceLogin,
    } as never);
    await userWith(ts, api, { permissions: [], domains: [root] });
    await fetch(`${ts.url}/api/v0/ws?access_token=${secrets.token}`);
    // what parts of the server might log, at any depth
    ts.server.context.log.warn(
      {
        device: { settings: { sip: { password: secrets.sipPassword } } },
        trunk: { name: 'trunk', secret: secrets.trunkSecret },
        url: `/api/v0/ws?access_token=${secrets.token}&x=1`,
        headers: { authorization: `Bearer ${secrets.bearer}` },
        password: secrets.password,
        body: { code: secrets.code, items: [{ user_password: secrets.password }] },
      },
      `a request with access_token=${secrets.token}`,
    );
    // with no mail server, a mail's text (here a confirmation code) is for the operator's console only
    await getCommand('self_registration.create').run(
      { api: ts.client() },
      {
        user_name: 'No Mail',
        user_email: `nomail-${uid()}@example.test`,
        user_type: 'private',
        object_name: 'Flat 9',
        user_password: 'long-enough-9',
      },
    );
    const kept = await ts.server.context.db
      .selectFrom('outbox')
      .select('body')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    const mailCode = /\b(\d{6})\b/.exec(kept.body)![1]!;
    expect(ts.logs()).toContain(mailCode);
    // the SIP server's output, as Kamailio writes it
    ts.server.context.logFiles.write('sip', `ERROR: auth: password=${secrets.kamailio} for 1001`);

    const served = [
      (await download('server')).text,
      (await download('sip')).text,
      JSON.stringify((await get({ name: 'server', limit: 1000 })).data),
      JSON.stringify((await get({ name: 'sip' })).data),
    ].join('\n');
    expect(served).toContain('mail kept in the outbox (its text is not in this log)');
    expect(served).not.toContain(mailCode);
    for (const [what, value] of Object.entries(secrets)) {
      expect(served, what).not.toContain(value);
      expect(ts.logs(), what).not.toContain(value);
    }
    // …and the lines are there, redacted
    const line = await lineOf('server', (l) => l.message.startsWith('a request with'));
    expect(line.message).toBe('a request with access_token=[redacted]');
    expect(line.fields).toMatchObject({
      device: { settings: { sip: { password: '[redacted]' } } },
      trunk: { name: 'trunk', secret: '[redacted]' },
      url: '/api/v0/ws?access_token=[redacted]&x=1',
      headers: { authorization: '[redacted]' },
      password: '[redacted]',
    });
    expect((await get({ name: 'sip' })).data.at(-1)!.text).toBe('ERROR: auth: password=[redacted] for 1001');
  });
});

describe('download', () => {
  it('streams the whole log as text, oldest line first, under a file name', async () => {
    const { res, text } = await download('jobs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(res.headers.get('content-disposition')).toMatch(/filename="lintel-jobs-\d{4}-\d\d-\d\d\.log"/);
    const times = text
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { time: number }).time);
    expect(times.length).toBeGreaterThan(0);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
  });
});

describe('permissions', () => {
  it('lets system information viewers read, and only those who change the settings clear', async () => {
    const viewer = await (
      await userWith(ts, api, { permissions: ['system_info.view'], domains: [root] })
    ).client();
    const none = await (await userWith(ts, api, { permissions: ['audit.view'], domains: [root] })).client();
    expect((await getCommand('log.get').run({ api: viewer }, { name: 'jobs' })).data.length).toBeGreaterThan(
      0,
    );
    expect((await download('jobs', viewer)).res.status).toBe(200);
    expect((await failure(getCommand('log.clear').run({ api: viewer }, { name: 'jobs' }))).status).toBe(403);
    expect((await failure(getCommand('log.get').run({ api: none }, { name: 'jobs' }))).status).toBe(403);
    expect((await failure(getCommand('log.available').run({ api: none }, {}))).status).toBe(403);
    expect((await download('jobs', none)).res.status).toBe(403);
  });
});

describe('clearing', () => {
  it('empties a log, audits it, and says who did in the server log', async () => {
    const before = (await getCommand('log.available').run({ api }, {})).data.find((s) => s.name === 'jobs')!;
    expect(before.size_bytes).toBeGreaterThan(0);
    const r = await getCommand('log.clear').run({ api }, { name: 'jobs' });
    expect(r.data).toEqual({ name: 'jobs', cleared_bytes: before.size_bytes });
    expect((await get({ name: 'jobs' })).data).toEqual([]);
    expect((await download('jobs')).text).toBe('');
    const said = await lineOf('server', (l) => l.message === 'log cleared' && l.fields.log === 'jobs');
    expect(said.fields.cleared_bytes).toBe(before.size_bytes);
    const audit = await getCommand('audit_event.list').run({ api }, {
      filters: [{ field: 'action', rule: 'equals', value: 'log_cleared' }],
    } as never);
    expect(audit.data[0]).toMatchObject({ action: 'log_cleared', entity: 'log', entity_id: 'jobs' });

    // the server's own log emptied: its first line says who emptied it
    await getCommand('log.clear').run({ api }, { name: 'server' });
    const first = (await get({ name: 'server', limit: 1000 })).data[0]!;
    expect(first).toMatchObject({ message: 'log cleared', fields: { log: 'server' } });
  });
});
