/**
 * Webhooks (issue 24 item 5, beyond the spec): a project's endpoint receives the platform's events, signed
 * with its secret, only those its maker may receive, with a delivery log, retries until `failed`, and never to
 * the server's own addresses. The endpoints are plain HTTP servers of this test on loopback (the server's
 * `webhooks.insecure` switch, which tests and labs turn on, allows them; the last test turns it off).
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import { DUMMY_PASSWORD, type ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin, everyFeatureOn, failure, licence, rootGroup, uid, userWith } from '../support/fixtures';
import { ManualClock } from '../../apps/server/src/clock';

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

let ts: TestServer;
let api: ApiClient;
let root: number;
let endpoint: http.Server;
let base: string;
const received: Received[] = [];
/** what the endpoint answers, by path */
const answers = new Map<string, number>();
const clock = new ManualClock();
const SECRET = 'a-secret-of-twenty-chars';

beforeAll(async () => {
  endpoint = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body });
      res.statusCode = answers.get(req.url ?? '') ?? 200;
      res.end('ok');
    });
  });
  await new Promise<void>((r) => endpoint.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}`;
  ts = await startTestServer({
    config: { clock, webhooks: { insecure: true, timeoutMs: 5_000, pollMs: 3_600_000 } },
  });
  await licence(ts, everyFeatureOn());
  api = await admin(ts);
  root = await rootGroup(api);
});
afterAll(async () => {
  await ts?.close();
  await new Promise((r) => endpoint?.close(r));
});

/** The pump reads the outbox on, and every delivery due now is attempted. */
async function send(): Promise<void> {
  const { webhooks, jobs } = ts.server.context;
  await webhooks.pump();
  await jobs.drain();
  await jobs.idle();
}

const at = (path: string) => received.filter((r) => r.path === path);
const signed = (r: Received, secret: string) => {
  const [t, v1] = String(r.headers['x-lintel-signature']).split(',');
  const expected = crypto
    .createHmac('sha256', secret)
    .update(`${t!.slice(2)}.${r.body}`)
    .digest('hex');
  return v1 === `v1=${expected}`;
};

describe('webhooks', () => {
  it('never give their secret back, and keep it when the placeholder is sent back', async () => {
    const { data } = await getCommand('webhook.create').run(
      { api },
      { name: `Keep ${uid()}`, url: `${base}/keep`, secret: SECRET, events: ['RoleChangedEvent'] },
    );
    expect(data.secret).toBe(DUMMY_PASSWORD);
    const listed = await getCommand('webhook.list').run({ api }, {});
    expect(JSON.stringify(listed)).not.toContain(SECRET);
    await getCommand('webhook.update').run(
      { api },
      { id: data.id, name: `Kept ${uid()}`, secret: DUMMY_PASSWORD },
    );
    const role = await getCommand('role.create').run({ api }, { name: `R ${uid()}`, permissions: [] });
    await getCommand('role.update').run({ api }, { id: role.data.id, permissions: ['users.view'] });
    await send();
    const got = at('/keep');
    expect(got.length).toBeGreaterThan(0);
    for (const r of got) {
      expect(signed(r, SECRET)).toBe(true);
      expect(r.headers['x-lintel-event']).toBe('RoleChangedEvent');
      expect(JSON.parse(r.body)).toMatchObject({
        type: 'RoleChangedEvent',
        data: { projectId: expect.any(Number) },
      });
    }
    // the secret is no filter: it could be guessed a character at a time
    expect(
      (
        await failure(
          getCommand('webhook.list').run(
            { api },
            { filters: [{ field: 'secret', rule: 'equals', value: SECRET }] },
          ),
        )
      ).status,
    ).toBe(422);
  });

  it('send only what their maker may receive, each event once, and log each delivery', async () => {
    const mine = await getCommand('webhook.create').run(
      { api },
      { name: `All ${uid()}`, url: `${base}/admin`, secret: SECRET },
    );
    // a maker who may manage integrations but not see virtual numbers
    const plain = await userWith(ts, api, {
      permissions: ['integrations.edit', 'integrations.view'],
      domains: [root],
    });
    const theirs = await getCommand('webhook.create').run(
      { api: await plain.client() },
      { name: `Theirs ${uid()}`, url: `${base}/plain`, secret: SECRET },
    );
    const number = String(100000 + Math.floor(Math.random() * 800000));
    await getCommand('sip_number.create').run({ api }, { number, name: `N ${number}`, domain_id: root });
    const role = await getCommand('role.create').run({ api }, { name: `R ${uid()}`, permissions: [] });
    await getCommand('role.update').run({ api }, { id: role.data.id, permissions: ['users.view'] });
    await send();
    await send();
    const types = (path: string) => at(path).map((r) => JSON.parse(r.body).type as string);
    expect(types('/admin')).toContain('SipNumberChangedEvent');
    expect(types('/plain')).not.toContain('SipNumberChangedEvent');
    // once each: an event is never sent twice to one webhook
    const ids = at('/admin').map((r) => JSON.parse(r.body).id as number);
    expect(new Set(ids).size).toBe(ids.length);
    const log = await getCommand('webhook.deliveries').run({ api }, { id: mine.data.id });
    expect(log.data.length).toBe(ids.length);
    for (const d of log.data)
      expect(d).toMatchObject({ state: 'delivered', attempts: 1, response_status: 200 });
    // what that maker may receive reaches his webhook (a role's change: the whole project's)
    expect(types('/plain')).toContain('RoleChangedEvent');
    expect(theirs.data.id).toBeGreaterThan(0);
  });

  it('retry an endpoint that fails until it gives up, and a test event reaches it at once', async () => {
    answers.set('/down', 503);
    const hook = await getCommand('webhook.create').run(
      { api },
      { name: `Down ${uid()}`, url: `${base}/down`, secret: SECRET },
    );
    const { delivery_id } = await getCommand('webhook.test').run({ api }, { id: hook.data.id });
    await send();
    let [d] = (await getCommand('webhook.deliveries').run({ api }, { id: hook.data.id })).data;
    expect(d).toMatchObject({
      id: delivery_id,
      event_type: 'WebhookTest',
      state: 'pending',
      attempts: 1,
      response_status: 503,
      error: 'HTTP 503',
    });
    // the server's clock moves past every back-off: the attempts run out
    for (let i = 0; i < 10; i++) {
      clock.advance(3_600_000);
      await send();
    }
    [d] = (await getCommand('webhook.deliveries').run({ api }, { id: hook.data.id })).data;
    expect(d).toMatchObject({ state: 'failed', attempts: 8 });
    expect(at('/down').length).toBe(8);
  });

  it("refuse plain HTTP and the server's own addresses unless the operator allows them", async () => {
    const config = ts.server.context.config.webhooks;
    config.insecure = false;
    try {
      const plainHttp = await getCommand('webhook.create').run(
        { api },
        { name: `Http ${uid()}`, url: `${base}/never`, secret: SECRET },
      );
      const loopback = await getCommand('webhook.create').run(
        { api },
        { name: `Loop ${uid()}`, url: `https://localhost:${new URL(base).port}/never`, secret: SECRET },
      );
      // an address written in the URL is checked too (Node does not look it up)
      const literal = await getCommand('webhook.create').run(
        { api },
        { name: `Lit ${uid()}`, url: `https://127.0.0.1:${new URL(base).port}/never`, secret: SECRET },
      );
      for (const id of [plainHttp.data.id, loopback.data.id, literal.data.id])
        await getCommand('webhook.test').run({ api }, { id });
      await send();
      const [a] = (await getCommand('webhook.deliveries').run({ api }, { id: plainHttp.data.id })).data;
      const [b] = (await getCommand('webhook.deliveries').run({ api }, { id: loopback.data.id })).data;
      expect(a).toMatchObject({ state: 'pending', response_status: null, error: 'https is required' });
      expect(b!.error).toMatch(/^refused address (127\.0\.0\.1|::1)$/);
      const [c] = (await getCommand('webhook.deliveries').run({ api }, { id: literal.data.id })).data;
      expect(c!.error).toBe('refused address 127.0.0.1');
      expect(at('/never')).toEqual([]);
    } finally {
      config.insecure = true;
    }
  });
});
