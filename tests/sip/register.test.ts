/**
 * Issue 22, first increment: Lintel runs a real Kamailio from its template on free loopback ports and keeps
 * the virtual numbers' credentials in it. Clients that are not ours register with numbers created through
 * Lintel's API: sipp over UDP and sip.js over the websocket. A wrong password is refused; a changed password
 * works on the next REGISTER and a deactivated or deleted number is refused, without a restart; Kamailio
 * killed under Lintel is reported, restarted and registers clients again. The storage is the numbers' table
 * as every family's: one pass (PGlite) says as much as two.
 */
import process from 'node:process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand, type IpBan, type SipStatus } from '@lintel/commands';
import { DUMMY_PASSWORD, type ApiClient } from '@lintel/core';
import type { SipConfig } from '@lintel/server';
import { startTestServer, type TestServer } from '../support/server';
import {
  admin,
  everyFeatureOn,
  failure,
  licence,
  raw,
  rootGroup,
  tokenOf,
  uid,
  userWith,
} from '../support/fixtures';
import { RawSocket } from '../support/ws';
import { sipjsRegister, sippRegister, sipTestConfig } from './sip-support';

let ts: TestServer;
let api: ApiClient;
let sip: SipConfig;
let group: number;
let next = 200;

beforeAll(async () => {
  sip = await sipTestConfig();
  ts = await startTestServer({ config: { sip } });
  await licence(ts, everyFeatureOn());
  api = await admin(ts);
  group = await rootGroup(api);
}, 60_000);
afterAll(async () => {
  await ts?.close();
});

const status = () => getCommand('sip.status').run({ api }, {});
/** polls the status until `ok` holds (generous bound: the CI machine is slow) */
async function statusUntil(ok: (s: SipStatus) => boolean, ms = 20_000): Promise<SipStatus> {
  const end = Date.now() + ms;
  for (;;) {
    const s = await status();
    if (ok(s)) return s;
    if (Date.now() > end)
      throw new Error(
        `the SIP status awaited did not come: ${JSON.stringify(s)}\n${ts
          .logs()
          .split('\n')
          .filter((l) => /SIP/.test(l))
          .slice(-5)
          .join('\n')}`,
      );
    await new Promise((r) => setTimeout(r, 50));
  }
}
/** a number with this password, made through the API */
async function number(password: string | undefined) {
  const n = String(next++);
  const { data } = await getCommand('sip_number.create').run(
    { api },
    { number: n, name: `Desk ${uid()}`, domain_id: group, ...(password ? { password } : {}) },
  );
  return { id: data.id, number: n };
}
const sipp = (
  scenario: 'register' | 'register-refused',
  n: string,
  password: string,
  opts: { from?: string; waitMs?: number } = {},
) => sippRegister(sip, scenario, n, password, opts);
/**
 * registers, retrying while the change may still be on its way to Kamailio (it is sent after the commit):
 * a generous bound in time, not a count of tries, so a loaded machine is given the time it needs
 */
async function eventually(register: () => Promise<{ ok: boolean; output: string }>) {
  const end = Date.now() + 20_000;
  let last = await register();
  while (!last.ok && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 100));
    last = await register();
  }
  return last;
}

describe('the SIP service', { timeout: 120_000 }, () => {
  it('runs Kamailio from the template: up, and server-settings says SIP is enabled', async () => {
    const s = await statusUntil((x) => x.state === 'up');
    expect(s.mode).toBe('local');
    expect(s.instances).toHaveLength(1);
    expect(s.instances[0]!.version).toMatch(/kamailio/);
    expect(s.listen).toEqual({ sip_port: sip.port, ws_port: sip.wsPort, ws_secure: false, realm: 'lintel' });
    const settings = await getCommand('server.settings').run({ api }, {});
    expect(settings.sip_enabled).toBe(true);
  });

  it('sipp registers a number created in Lintel; the password is never returned; a wrong one is refused', async () => {
    const n = await number('Door4Pass');
    const got = await getCommand('sip_number.get').run({ api }, { id: n.id });
    expect(got.password).toBe(DUMMY_PASSWORD);
    expect(got.is_active).toBe(true);
    expect(JSON.stringify(await getCommand('sip_number.list').run({ api }, {}))).not.toContain('Door4Pass');

    const ok = await eventually(() => sipp('register', n.number, 'Door4Pass'));
    expect(ok.ok, ok.output).toBe(true);
    // Kamailio's registrar holds the contact
    const found = await ts.server.context.sip.rpc<{ AoR: string }>('ul.lookup', ['location', n.number]);
    expect(JSON.stringify(found)).toContain(n.number);

    const wrong = await sipp('register-refused', n.number, 'Wrong4Pass');
    expect(wrong.ok, wrong.output).toBe(true);
    // a number without a password cannot register
    const bare = await number(undefined);
    expect((await getCommand('sip_number.get').run({ api }, { id: bare.id })).password).toBeNull();
    const none = await sipp('register-refused', bare.number, 'Door4Pass');
    expect(none.ok, none.output).toBe(true);
    // the password is not in the log
    expect(ts.logs()).not.toContain('Door4Pass');
  });

  it('sip.js registers over the websocket; a wrong password is rejected', async () => {
    const n = await number('Web5Phone');
    let result = '';
    for (let i = 0; i < 20 && result !== 'registered'; i++)
      result = await sipjsRegister(sip, n.number, 'Web5Phone');
    expect(result).toBe('registered');
    expect(await sipjsRegister(sip, n.number, 'Web5Wrong')).toBe('rejected 401');
  });

  it('a changed password works on the next REGISTER and the old one no longer does, without a restart', async () => {
    const n = await number('First1Pass');
    expect((await eventually(() => sipp('register', n.number, 'First1Pass'))).ok).toBe(true);
    const pid = (await status()).instances[0]!.pid;

    await getCommand('sip_number.update').run({ api }, { id: n.id, password: 'Second2Pass' });
    const fresh = await eventually(() => sipp('register', n.number, 'Second2Pass'));
    expect(fresh.ok, fresh.output).toBe(true);
    const old = await sipp('register-refused', n.number, 'First1Pass');
    expect(old.ok, old.output).toBe(true);
    // the placeholder sent back keeps the password
    await getCommand('sip_number.update').run({ api }, { id: n.id, password: DUMMY_PASSWORD, name: 'Kept' });
    expect((await sipp('register', n.number, 'Second2Pass')).ok).toBe(true);
    expect((await status()).instances[0]!.pid).toBe(pid);
  });

  it('a deactivated or deleted number can no longer register; reactivated, it can', async () => {
    const n = await number('Active3Pass');
    expect((await eventually(() => sipp('register', n.number, 'Active3Pass'))).ok).toBe(true);

    await getCommand('sip_number.update').run({ api }, { id: n.id, is_active: false });
    const off = await eventually(() => sipp('register-refused', n.number, 'Active3Pass'));
    expect(off.ok, off.output).toBe(true);

    await getCommand('sip_number.update').run({ api }, { id: n.id, is_active: true });
    expect((await eventually(() => sipp('register', n.number, 'Active3Pass'))).ok).toBe(true);

    // activation is a permission of its own: an editor without it cannot switch a number off
    const editor = await (
      await userWith(ts, api, {
        permissions: ['sip_numbers.view_descendant', 'sip_numbers.edit'],
        domains: [group],
      })
    ).client();
    const e = await failure(
      getCommand('sip_number.update').run({ api: editor }, { id: n.id, is_active: false }),
    );
    expect(e.code).toBe('method_prohibited');
    await getCommand('sip_number.update').run({ api: editor }, { id: n.id, name: 'Renamed desk' });
    expect((await getCommand('sip_number.get').run({ api }, { id: n.id })).is_active).toBe(true);

    await getCommand('sip_number.delete').run({ api }, { id: n.id });
    const gone = await eventually(() => sipp('register-refused', n.number, 'Active3Pass'));
    expect(gone.ok, gone.output).toBe(true);
  });

  it('a new number needs its password again: the credentials are made with the number', async () => {
    const n = await number('Renum4Pass');
    const e = await failure(
      getCommand('sip_number.update').run({ api }, { id: n.id, number: String(next++) }),
    );
    expect(e.code).toBe('check_fields_data');
    const renamed = String(next++);
    await getCommand('sip_number.update').run({ api }, { id: n.id, number: renamed, password: 'Renum5Pass' });
    expect((await eventually(() => sipp('register', renamed, 'Renum5Pass'))).ok).toBe(true);
    expect((await sipp('register-refused', n.number, 'Renum4Pass')).ok).toBe(true);
  });

  it('a weak password is refused with the field named, and nothing changes', async () => {
    const n = await number('Strong6Pass');
    // sent as a client that is not ours would: the command's own schema would not send it
    const r = await raw(ts, api, 'PATCH', `/sip-numbers/${n.id}`, { body: { password: 'weakpass' } });
    expect(r.status).toBe(422);
    expect(JSON.stringify(r.body)).toContain('check_fields_data');
    expect(JSON.stringify(r.body)).toContain('password');
    expect((await eventually(() => sipp('register', n.number, 'Strong6Pass'))).ok).toBe(true);
  });

  it('an address failing to authenticate is banned: Kamailio drops it, Lintel lists the ban and lifts it', async () => {
    await getCommand('ip_blocking.status_set').run(
      { api },
      { service: 'sip', enabled: true, max_failures: 2, window_s: 600, ban_time_s: 3600 },
    );
    // only the SIP server may report: no secret, a wrong one or a person's token is refused
    const report = (authorization: string | undefined, ip: string) =>
      fetch(`${ts.url}/api/v0/sip/auth-failed`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
        body: JSON.stringify({ ip }),
      });
    for (const authorization of [undefined, 'Bearer wrong', `Bearer ${tokenOf(api)}`])
      expect((await report(authorization, '192.0.2.7')).status).toBe(401);
    const secret = `Bearer ${await ts.server.context.sip.secret()}`;
    expect((await report(secret, 'not-an-address')).status).toBe(422);
    expect((await getCommand('ip_blocking.banned').run({ api }, { service: 'sip' })).data).toEqual([]);

    const n = await number('Right8Pass');
    const attacker = '127.0.0.2';
    // the first wrong password is refused (challenged again) and counted
    const first = await sipp('register-refused', n.number, 'Guess1Pass', { from: attacker });
    expect(first.ok, first.output).toBe(true);
    expect((await getCommand('ip_blocking.banned').run({ api }, { service: 'sip' })).data).toEqual([]);
    // the second bans the address: Lintel lists it, Kamailio holds it
    await sipp('register-refused', n.number, 'Guess2Pass', { from: attacker, waitMs: 2_000 });
    // sipp stops waiting after 2 s; Kamailio's report may reach Lintel later on a loaded machine
    let banned: IpBan[] = [];
    for (const end = Date.now() + 20_000; !banned.length && Date.now() < end;)
      banned = (await getCommand('ip_blocking.banned').run({ api }, { service: 'sip' })).data;
    expect(banned).toMatchObject([{ service: 'sip', ip: attacker, cause: 'auth_failed', failures: 2 }]);
    const held = await ts.server.context.sip.rpc<unknown>('htable.get', ['ipban', attacker]);
    expect(JSON.stringify(held)).toContain('1');
    // banned, even the right password gets no answer from that address; the host's own address still works
    const silent = await sipp('register', n.number, 'Right8Pass', { from: attacker, waitMs: 2_000 });
    expect(silent.ok).toBe(false);
    expect((await sipp('register', n.number, 'Right8Pass')).ok).toBe(true);
    // the host's own address is never counted, however often it fails
    for (let i = 0; i < 3; i++)
      expect((await sipp('register-refused', n.number, 'Local9Wrong')).ok).toBe(true);
    expect((await getCommand('ip_blocking.banned').run({ api }, { service: 'sip' })).data).toHaveLength(1);
    // lifted in Lintel, lifted in Kamailio: the address registers again
    await getCommand('ip_blocking.unban').run({ api }, { service: 'sip', ips: [attacker] });
    const back = await sipp('register', n.number, 'Right8Pass', { from: attacker });
    expect(back.ok, back.output).toBe(true);
  });

  it('Kamailio killed: Lintel reports it down, restarts it, and clients register again', async () => {
    const n = await number('Crash7Pass');
    expect((await eventually(() => sipp('register', n.number, 'Crash7Pass'))).ok).toBe(true);
    const before = await status();
    const pid = before.instances[0]!.pid!;
    process.kill(pid, 'SIGKILL');

    const after = await statusUntil(
      (s) => s.state === 'up' && s.instances[0]!.restarts > before.instances[0]!.restarts,
    );
    expect(after.instances[0]!.pid).not.toBe(pid);
    expect(after.last_failure?.reason).toBe('exited');
    // the registrar was in memory: the client registers again, with the credentials Lintel loaded
    const again = await sipp('register', n.number, 'Crash7Pass');
    expect(again.ok, again.output).toBe(true);
  });

  it('restart: a new Kamailio, SIP reboot started and completed on the websocket', async () => {
    const me = await getCommand('profile.get').run({ api }, {});
    const socket = await RawSocket.signedIn(ts.url, tokenOf(api));
    const topic = `private-users.${me.id}`;
    await socket.subscribe(topic);
    const pid = (await status()).instances[0]!.pid;

    const s = await getCommand('sip.restart').run({ api }, { type: 'kamailio', ip_address: '127.0.0.1' });
    expect(s.state).toBe('up');
    expect(s.instances[0]!.pid).not.toBe(pid);
    const types = () =>
      socket.events(topic).map((m) => (m.data as { notification?: { type: string } }).notification?.type);
    await socket.until(() => types().includes('sip_reboot_completed'));
    expect(types()).toEqual(expect.arrayContaining(['sip_reboot_started', 'sip_reboot_completed']));
    socket.close();

    const n = await number('Reboot8Pass');
    expect((await eventually(() => sipp('register', n.number, 'Reboot8Pass'))).ok).toBe(true);
    // re-initialised: every number's credentials loaded again, the same Kamailio
    const re = await getCommand('sip.reinit').run({ api }, {});
    expect(re.instances[0]!.pid).toBe(s.instances[0]!.pid);
    expect(re.numbers).toBeGreaterThan(0);
    expect((await sipp('register', n.number, 'Reboot8Pass')).ok).toBe(true);
    // a viewer of the settings sees the status but may not restart or re-initialise
    const viewer = await (
      await userWith(ts, api, { permissions: ['project_settings.view'], domains: [group] })
    ).client();
    expect((await getCommand('sip.status').run({ api: viewer }, {})).state).toBe('up');
    const refused = [
      await failure(getCommand('sip.restart').run({ api: viewer }, {})),
      await failure(getCommand('sip.reinit').run({ api: viewer }, {})),
    ];
    expect(refused.map((e) => e.status)).toEqual([403, 403]);
    // another instance's address is not one of ours
    const e = await failure(
      getCommand('sip.restart').run({ api }, { type: 'kamailio', ip_address: '10.9.9.9' }),
    );
    expect(e.code).toBe('item_not_found');
  });
});

describe('without Kamailio', () => {
  let other: TestServer;
  beforeAll(async () => {
    other = await startTestServer({
      config: { sip: { ...(await sipTestConfig()), bin: '/nonexistent/kamailio' } },
    });
    await licence(other, everyFeatureOn());
  }, 60_000);
  afterAll(async () => {
    await other?.close();
  });

  it('telephony says it is down and why; numbers and everything else work', async () => {
    const a = await admin(other);
    const s = await getCommand('sip.status').run({ api: a }, {});
    expect(s).toMatchObject({ state: 'down', reason: 'not_installed' });
    expect((await getCommand('server.settings').run({ api: a }, {})).sip_enabled).toBe(false);
    const { data } = await getCommand('sip_number.create').run(
      { api: a },
      { number: '501', name: 'Lobby', domain_id: await rootGroup(a), password: 'Lobby9Pass' },
    );
    expect(data.password).toBe(DUMMY_PASSWORD);
    const e = await failure(getCommand('sip.restart').run({ api: a }, {}));
    expect(e.code).toBe('sip_service_start_failed');
  });
});
