/**
 * Issue 22, bench/sip-routing: `sip.route` answers from memory (the numbers, their owners, forward rules and
 * trunks kept by each instance, sip/calls.ts). A change takes effect on the next call without a restart: a
 * number deactivated, a forward rule changed through the API or by hand in SQL. With DATABASE_URL set, the
 * changes are made through a second instance on the same database, and the instance Kamailio asks hears of
 * them through the events and the database's notifications (migration 0079).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { ManualClock, type SipConfig } from '@lintel/server';
import { freshDatabase, startTestServer, type TestServer } from '../support/server';
import { everyFeatureOn, licence, rootGroup, signIn, uid } from '../support/fixtures';
import { sipTestConfig } from './sip-support';

let database: Awaited<ReturnType<typeof freshDatabase>> | null = null;
/** the instance Kamailio asks (it runs the SIP service) */
let a: TestServer;
/** where the changes are made: a second instance on PostgreSQL, else the same one */
let b: TestServer;
let apiB: ApiClient;
let sip: SipConfig;
let group: number;
let secret: string;
const twoInstances = !!process.env.DATABASE_URL;
/** the routing instance's clock: a Wednesday at 12:00 UTC, so the forward rules' periods are read at a known time */
const clock = new ManualClock(Date.UTC(2026, 10, 25, 12, 0, 0));

beforeAll(async () => {
  sip = await sipTestConfig();
  if (twoInstances) {
    database = await freshDatabase({ migrated: true });
    a = await startTestServer({ database: database.url, config: { sip, clock } });
    b = await startTestServer({ database: database.url });
  } else {
    a = await startTestServer({ config: { sip, clock } });
    b = a;
  }
  await licence(a, everyFeatureOn());
  // one installation: the administrator's password is the one the first start set
  apiB = await signIn(b, a.adminLogin, a.adminPassword);
  group = await rootGroup(apiB);
  secret = await a.server.context.sip.secret();
}, 90_000);
afterAll(async () => {
  if (b !== a) await b?.close();
  await a?.close();
  await database?.drop();
});

interface Answer {
  action: 'route' | 'reject';
  plan?: string;
  code?: string;
  cache?: string;
  gen?: string;
}

/** What instance `a` answers Kamailio for a new call from `caller` to `callee`. */
async function route(caller: string, callee: string): Promise<Answer> {
  const res = await fetch(`${a.url}/api/v0/sip/route`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
    body: JSON.stringify({ call_id: `${uid()}@route-cache`, caller, callee }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Answer;
}

/** The answer once it satisfies `ok` (another instance's change arrives by notification). */
async function routeUntil(caller: string, callee: string, ok: (a: Answer) => boolean): Promise<Answer> {
  const end = Date.now() + 20_000;
  for (;;) {
    const answer = await route(caller, callee);
    if (ok(answer)) return answer;
    if (Date.now() > end) throw new Error(`the route did not change: ${JSON.stringify(answer)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

let next = 600;
async function number(): Promise<{ id: number; number: string }> {
  const n = String(next++);
  const { data } = await getCommand('sip_number.create').run(
    { api: apiB },
    { number: n, name: `Route ${uid()}`, domain_id: group, password: `Pass${n}x` },
  );
  return { id: data.id, number: n };
}

describe(`the routing from memory${twoInstances ? ', two instances on one database' : ''}`, () => {
  it('a number deactivated is refused on the next call, and rung again once active', async () => {
    const caller = await number();
    const callee = await number();
    const first = await route(caller.number, callee.number);
    expect(first).toMatchObject({ action: 'route' });
    expect(first.plan).toContain(callee.number);
    // the facts are held: a second call is answered the same from memory
    expect(a.server.context.routeCache.size).toBeGreaterThan(0);
    expect(await route(caller.number, callee.number)).toMatchObject({ action: 'route' });

    await getCommand('sip_number.update').run({ api: apiB }, { id: callee.id, is_active: false });
    const refused = await routeUntil(caller.number, callee.number, (x) => x.action === 'reject');
    expect(refused).toMatchObject({ action: 'reject', code: '480' });
    // one instance: the change is there on the very next call
    if (!twoInstances) expect(await route(caller.number, callee.number)).toMatchObject({ action: 'reject' });

    await getCommand('sip_number.update').run({ api: apiB }, { id: callee.id, is_active: true });
    await routeUntil(caller.number, callee.number, (x) => x.action === 'route');
  });

  it('a forward rule changed through the API, then by hand in SQL, sends the next call to its new numbers', async () => {
    const caller = await number();
    const callee = await number();
    const first = await number();
    const second = await number();
    const rule = await getCommand('forward_rule.create').run(
      { api: apiB },
      {
        name: `No answer ${uid()}`,
        domain_id: group,
        type: 'redirect_if_no_answer',
        timeout: 5,
        numbers: [first.number],
      },
    );
    await getCommand('sip_number.update').run(
      { api: apiB },
      { id: callee.id, forward_mode: 'manual', forward_rules: [rule.data.id] },
    );
    const before = await routeUntil(caller.number, callee.number, (x) => !!x.plan?.includes(first.number));
    expect(before.plan).not.toContain(second.number);

    await getCommand('forward_rule.update').run(
      { api: apiB },
      { id: rule.data.id, numbers: [second.number] },
    );
    const after = await routeUntil(caller.number, callee.number, (x) => !!x.plan?.includes(second.number));
    expect(after.plan).not.toContain(first.number);
    if (!twoInstances) expect((await route(caller.number, callee.number)).plan).toBe(after.plan);

    // by hand, on the database both instances share: its notification reaches the one Kamailio asks
    await sql`update forward_rules set numbers = ${JSON.stringify([first.number])}::jsonb
      where id = ${rule.data.id}`.execute(b.server.context.db);
    const byHand = await routeUntil(caller.number, callee.number, (x) => !!x.plan?.includes(first.number));
    expect(byHand.plan).not.toContain(second.number);
  });

  it("how long the SIP server may keep an answer: the cache's time, less when the callee's rules change sooner; never a refusal", async () => {
    const caller = await number();
    const callee = await number();
    const plain = await routeUntil(caller.number, callee.number, (x) => x.action === 'route' && !!x.cache);
    expect(plain.cache).toBe('60');
    expect(plain.gen).toMatch(/^[0-9a-f]{8}-[0-9]+$/);

    // a rule whose period (in the callee's zone: UTC) ends at 12:10, ten minutes after the routing's clock
    const rule = await getCommand('forward_rule.create').run(
      { api: apiB },
      {
        name: `Ends soon ${uid()}`,
        domain_id: group,
        type: 'redirect_if_no_answer',
        timeout: 5,
        numbers: [(await number()).number],
        period: { from: 11 * 3600, to: 12 * 3600 + 600 },
      },
    );
    await getCommand('sip_number.update').run(
      { api: apiB },
      { id: callee.id, forward_mode: 'manual', forward_rules: [rule.data.id] },
    );
    // the cache's 60 s come first
    const capped = await routeUntil(caller.number, callee.number, (x) => x.plan !== plain.plan);
    expect(capped.cache).toBe('60');
    // ending at 12:00:30, thirty seconds on: a second early
    await getCommand('forward_rule.update').run(
      { api: apiB },
      { id: rule.data.id, period: { from: 11 * 3600, to: 12 * 3600 + 30 } },
    );
    const sooner = await routeUntil(caller.number, callee.number, (x) => x.cache !== '60');
    expect(sooner.cache).toBe('29');
    expect(sooner.plan).toBe(capped.plan);

    await getCommand('sip_number.update').run({ api: apiB }, { id: callee.id, is_active: false });
    const refused = await routeUntil(caller.number, callee.number, (x) => x.action === 'reject');
    expect(refused.cache).toBeUndefined();
  });
});
