/**
 * Issue 22 items 5, 6, 8: Kamailio asks Lintel where each call goes (the `sip` principal through dispatch)
 * and tells it what happens; Lintel keeps the calls, publishes them live and writes the history.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionState } from 'sip.js';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import type { SipConfig } from '@lintel/server';
import { startTestServer, type TestServer } from '../support/server';
import { admin, everyFeatureOn, licence, rootGroup, uid } from '../support/fixtures';
import { SipPhone, sessionIn, sipTestConfig } from './sip-support';

let ts: TestServer;
let api: ApiClient;
let sip: SipConfig;
let group: number;
let next = 300;
const phones: SipPhone[] = [];

beforeAll(async () => {
  sip = await sipTestConfig();
  ts = await startTestServer({ config: { sip } });
  await licence(ts, everyFeatureOn());
  api = await admin(ts);
  group = await rootGroup(api);
}, 60_000);
afterAll(async () => {
  for (const p of phones) await p.stop();
  await ts?.close();
});

async function phone(): Promise<SipPhone> {
  const n = String(next++);
  const password = `Pass${n}x`;
  await getCommand('sip_number.create').run(
    { api },
    { number: n, name: `Flat ${uid()}`, domain_id: group, password },
  );
  const end = Date.now() + 20_000;
  for (;;) {
    try {
      const p = await SipPhone.register(sip, n, password);
      phones.push(p);
      return p;
    } catch (err) {
      if (Date.now() > end) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > end)
      throw new Error(`not reached: ${JSON.stringify(v)}\n${ts.logs().split('\n').slice(-15).join('\n')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('calls through Lintel', { timeout: 120_000 }, () => {
  it('a call between two numbers is routed, listed answered, and ended by stop', async () => {
    const a = await phone();
    const b = await phone();
    const session = a.call(b.number);
    await sessionIn(session, [SessionState.Established, SessionState.Terminated]);
    expect(session.state).toBe(SessionState.Established);
    const list = await until(
      () => getCommand('call.list').run({ api }, {}),
      (l) => l.data.some((c) => c.caller === a.number && c.status === 'answered'),
    );
    const call = list.data.find((c) => c.caller === a.number)!;
    expect(call).toMatchObject({ callee: b.number, answered_by: b.number, type: 'normal' });
    await getCommand('call.stop').run({ api }, { id: call.id });
    await sessionIn(session, [SessionState.Terminated]);
    await sessionIn(b.incoming[0]!, [SessionState.Terminated]);
  });
});
