/**
 * Issue 22: calls to numbers that do not exist, and calls in from a SIP trunk, through the real Kamailio of
 * the project's template with clients that are not ours (sipp). A number Lintel does not hold is refused
 * 404 and written to the history as `failed` with the spec's cause `wrong_number`. A provider — sipp sending
 * from the trunk's address, 127.0.0.3, without credentials — calls a DID: the virtual number of that number
 * in the trunk's groups, rung with its forward rules (here: not registered, so its redirect_if_error rule
 * rings a sipp phone that answers); the history says incoming, through that trunk. A number the trunk does
 * not carry is a wrong number; a call from an address that is no trunk's is challenged as any phone's.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand, type CallHistoryItem } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import type { SipConfig } from '@lintel/server';
import { startTestServer, type TestServer } from '../support/server';
import { admin, everyFeatureOn, group, licence, rootGroup, uid } from '../support/fixtures';
import { sippCall, sippCredentials, sippPhone, sippRegistrar, sipTestConfig } from './sip-support';

let ts: TestServer;
let api: ApiClient;
let sip: SipConfig;
let root: number;
let next = 400;

beforeAll(async () => {
  sip = await sipTestConfig();
  ts = await startTestServer({ config: { sip } });
  await licence(ts, everyFeatureOn());
  api = await admin(ts);
  root = await rootGroup(api);
}, 60_000);
afterAll(async () => {
  await ts?.close();
});

async function number(domain: number, password?: string, n = String(next++)) {
  const { data } = await getCommand('sip_number.create').run(
    { api },
    { number: n, name: `Line ${uid()}`, domain_id: domain, ...(password ? { password } : {}) },
  );
  return { id: data.id, number: n };
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

/** The history's line of a call from `from` to `to`, once written. */
async function historyOf(from: string, to: string): Promise<CallHistoryItem> {
  const h = await until(
    () => getCommand('call_history.list').run({ api }, {}),
    (x) => x.data.some((r) => r.from_number === from && r.to_number === to),
  );
  return h.data.find((r) => r.from_number === from && r.to_number === to)!;
}

/** What Kamailio's table of trunk addresses holds for `address` (null: nothing). */
async function trunkAt(address: string): Promise<string | null> {
  const r = await ts.server.context.sip
    .rpc<{ item?: { value?: string } }>('htable.get', ['trunkip', address])
    .catch(() => null);
  return r?.item?.value ?? null;
}

describe('calls to numbers that do not exist', { timeout: 120_000 }, () => {
  it('are refused 404 (sipp sees no ringing) and written to the history as failed, wrong_number', async () => {
    const password = `Pass${uid()}x`;
    const a = await number(root, password);
    const ran = await sippCall(sip, 'call-not-found', [
      a.number,
      sippCredentials(a.number, password),
      '990001',
    ]);
    expect(ran.ok, ran.output).toBe(true);
    expect(await historyOf(a.number, '990001')).toMatchObject({
      status: 'failed',
      reason: 'wrong_number',
      direction: 'incoming',
      duration: 0,
      trunk: null,
    });
    // the history's filter finds them by their cause
    const filtered = await getCommand('call_history.list').run(
      { api },
      { filters: [{ field: 'reason', rule: 'equals', value: 'wrong_number' }] },
    );
    expect(filtered.data.map((r) => r.to_number)).toEqual(['990001']);
  });
});

describe('calls in from a SIP trunk', { timeout: 180_000 }, () => {
  const PROVIDER = '127.0.0.3';
  let building: number;
  let trunk: { id: number; name: string };
  let did: { id: number; number: string };

  beforeAll(async () => {
    building = await group(api, `Building ${uid()}`, root);
    const name = `Provider ${uid()}`;
    const made = await getCommand('sip_trunk.create').run(
      { api },
      {
        name,
        outgoing_number: '74957770000',
        termination_uri: `sip:${PROVIDER}:5060`,
        login: 'lintel',
        password: 'Provider-Secret-1',
        groups: [building],
      },
    );
    trunk = { id: made.data.id, name };
    // the trunk's address reaches Kamailio once the change commits
    await until(
      () => trunkAt(PROVIDER),
      (v) => v === String(trunk.id),
    );
    // the DID: a number of the building, nobody registered with it, forwarded on error to the concierge
    did = await number(building, undefined, '74957770001');
  });

  it("reach the DID's virtual number and its forward rules; the history says incoming, through the trunk", async () => {
    const password = `Pass${uid()}x`;
    const concierge = await number(building, password);
    const rule = await getCommand('forward_rule.create').run(
      { api },
      {
        name: `On error ${uid()}`,
        domain_id: building,
        type: 'redirect_if_error',
        numbers: [concierge.number],
      },
    );
    await getCommand('sip_number.update').run(
      { api },
      { id: did.id, forward_mode: 'manual', forward_rules: [rule.data.id] },
    );
    const phone = await sippPhone(sip, concierge.number, password);
    // the provider gives the DID in its international form
    const call = await sippCall(sip, 'provider-call', [`+${did.number}`, '79161234567'], { from: PROVIDER });
    expect(call.ok, call.output).toBe(true);
    const answered = await phone.done;
    expect(answered.ok, answered.output).toBe(true);
    expect(await historyOf('79161234567', did.number)).toMatchObject({
      status: 'answered',
      direction: 'incoming',
      answered_by: concierge.number,
      reason: null,
      trunk_id: trunk.id,
      trunk,
    });
  });

  it('a number the trunk does not carry is a wrong number: none, or one outside its groups', async () => {
    const outside = await number(root, `Pass${uid()}x`);
    for (const [dialled, caller] of [
      ['74957779999', '79160000001'],
      [outside.number, '79160000002'],
    ] as const) {
      const ran = await sippCall(sip, 'provider-not-found', [dialled, caller], { from: PROVIDER });
      expect(ran.ok, ran.output).toBe(true);
      expect(await historyOf(caller, dialled)).toMatchObject({
        status: 'failed',
        reason: 'wrong_number',
        direction: 'incoming',
        trunk,
      });
    }
  });

  it("a call without credentials from an address that is no trunk's is challenged, and nothing rings", async () => {
    const ran = await sippCall(sip, 'invite-challenged', [did.number, '79160000003'], { from: '127.0.0.4' });
    expect(ran.ok, ran.output).toBe(true);
    // Lintel was never asked: no call, no history
    const calls = await sql<{
      n: number;
    }>`select count(*)::int as n from sip_calls where caller = '79160000003'`.execute(ts.server.context.db);
    expect(calls.rows[0]!.n).toBe(0);
    const h = await getCommand('call_history.list').run({ api }, {});
    expect(h.data.filter((r) => r.from_number === '79160000003')).toEqual([]);
  });

  it("a trunk's address follows its termination URI; the host's own address is never a provider's", async () => {
    await getCommand('sip_trunk.update').run({ api }, { id: trunk.id, termination_uri: 'sip:127.0.0.5' });
    await until(
      () => trunkAt('127.0.0.5'),
      (v) => v === String(trunk.id),
    );
    expect(await trunkAt(PROVIDER)).toBeNull();
    // the provider's old address is now an unknown one: challenged
    const ran = await sippCall(sip, 'invite-challenged', [did.number, '79160000004'], { from: PROVIDER });
    expect(ran.ok, ran.output).toBe(true);
    await getCommand('sip_trunk.update').run(
      { api },
      { id: trunk.id, termination_uri: 'sip:127.0.0.1:5070' },
    );
    await until(
      () => trunkAt('127.0.0.5'),
      (v) => v === null,
    );
    expect(await trunkAt('127.0.0.1')).toBeNull();
  });
});

describe('registering with a SIP trunk', { timeout: 180_000 }, () => {
  const PROVIDER = '127.0.0.6';

  it("a trunk set to register: its provider's registrar challenges and takes Lintel's registration; the provider's call to that contact rings the DID of the To", async () => {
    const building = await group(api, `Building ${uid()}`, root);
    const registrar = await sippRegistrar(PROVIDER);
    const made = await getCommand('sip_trunk.create').run(
      { api },
      {
        name: `Registered ${uid()}`,
        outgoing_number: '74957770100',
        termination_uri: `sip:${PROVIDER}:${registrar.port}`,
        login: 'lintel-reg',
        password: 'Provider-Secret-2',
        register: true,
        groups: [building],
      },
    );
    expect(made.data.register).toBe(true);
    // the registrar saw the challenge answered with the trunk's credentials and the contact lintel-trunk-<id>
    const registered = await registrar.done;
    expect(registered.ok, registered.output).toBe(true);
    const status = await until(
      () => getCommand('sip.status').run({ api }, {}),
      (s) => s.instances[0]?.trunks.some((t) => t.id === made.data.id && t.state === 'registered') ?? false,
    );
    expect(status.instances[0]!.trunks).toContainEqual({ id: made.data.id, state: 'registered' });

    // the provider calls the DID to the contact Lintel registered: a number of the building, answered by a phone
    const password = `Pass${uid()}x`;
    const flat = await number(building, password);
    const phone = await sippPhone(sip, flat.number, password);
    const call = await sippCall(
      sip,
      'provider-call-contact',
      [flat.number, '79161230000', `lintel-trunk-${made.data.id}`],
      { from: PROVIDER },
    );
    expect(call.ok, call.output).toBe(true);
    expect((await phone.done).ok).toBe(true);
    expect(await historyOf('79161230000', flat.number)).toMatchObject({
      status: 'answered',
      direction: 'incoming',
      trunk_id: made.data.id,
    });

    // a trunk not set to register is not: the one above, turned off, leaves Kamailio's registrations
    await getCommand('sip_trunk.update').run({ api }, { id: made.data.id, register: false });
    await until(
      () => getCommand('sip.status').run({ api }, {}),
      (s) => !(s.instances[0]?.trunks.some((t) => t.id === made.data.id) ?? true),
    );
  });
});
