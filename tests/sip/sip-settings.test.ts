/**
 * The SIP settings reach the running Kamailio (issue 24 item 2, issue 22 items 1 and 10), one Kamailio of the
 * template for the file: a new realm and a public address re-render its configuration and restart it without
 * Lintel restarting (the SIP reboot notifications told), after which Kamailio challenges in the new realm,
 * advertises the public address on its sockets, and takes a number whose password was set for the new realm
 * while refusing one made for the old; a change of the ICE servers alone leaves Kamailio running. The SIP
 * nodes' figures (ports, uptime, contacts, dialogs) are Kamailio's own answers.
 */
import dgram from 'node:dgram';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand, type SipStatus } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import type { SipConfig } from '@lintel/server';
import { startTestServer, type TestServer } from '../support/server';
import { admin, everyFeatureOn, licence, rootGroup, uid } from '../support/fixtures';
import { freePort, sippRegister, sipTestConfig } from './sip-support';

let ts: TestServer;
let api: ApiClient;
let sip: SipConfig;
let group: number;

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
async function statusUntil(ok: (s: SipStatus) => boolean, ms = 20_000): Promise<SipStatus> {
  const end = Date.now() + ms;
  for (;;) {
    const s = await status();
    if (ok(s)) return s;
    if (Date.now() > end) throw new Error(`the SIP status awaited did not come: ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
/** a REGISTER without credentials over UDP: Kamailio's 401 challenge as text */
async function challenge(): Promise<string> {
  const sock = dgram.createSocket('udp4');
  const port = await freePort();
  await new Promise<void>((r) => sock.bind(port, '127.0.0.1', () => r()));
  try {
    const tag = uid();
    const msg = [
      `REGISTER sip:127.0.0.1:${sip.port} SIP/2.0`,
      `Via: SIP/2.0/UDP 127.0.0.1:${port};branch=z9hG4bK${tag};rport`,
      'Max-Forwards: 70',
      `From: <sip:4242@127.0.0.1>;tag=${tag}`,
      'To: <sip:4242@127.0.0.1>',
      `Call-ID: ${tag}@127.0.0.1`,
      'CSeq: 1 REGISTER',
      `Contact: <sip:4242@127.0.0.1:${port}>`,
      'Expires: 60',
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n');
    const reply = new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no answer to the REGISTER')), 10_000);
      sock.on('message', (m) => {
        const text = m.toString();
        if (!/^SIP\/2.0 1\d\d/.test(text)) {
          clearTimeout(timer);
          resolve(text);
        }
      });
    });
    sock.send(msg, sip.port, '127.0.0.1');
    return await reply;
  } finally {
    sock.close();
  }
}
let next = 300;
async function number(password: string) {
  const n = String(next++);
  const { data } = await getCommand('sip_number.create').run(
    { api },
    { number: n, name: `Desk ${n}`, domain_id: group, password },
  );
  return { id: data.id, number: n };
}
async function eventually(register: () => Promise<{ ok: boolean; output: string }>) {
  const end = Date.now() + 20_000;
  let last = await register();
  while (!last.ok && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 100));
    last = await register();
  }
  return last;
}
/** the configuration file a running Kamailio was started with (its `-f`) */
function runningConfig(pid: number): string {
  const args = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  return fs.readFileSync(args[args.indexOf('-f') + 1]!, 'utf8');
}
const notifications = async () =>
  (await getCommand('notification.list').run({ api }, { limit: 50 })).data.map((n) => n.type);

describe('the SIP settings on a running Kamailio', { timeout: 120_000 }, () => {
  it("the SIP node: its ports and Kamailio's own figures", async () => {
    const s = await statusUntil((x) => x.state === 'up' && x.instances[0]?.uptime_s !== null);
    const node = s.instances[0]!;
    expect(node).toMatchObject({
      type: 'kamailio',
      sip_port: sip.port,
      ws_port: sip.wsPort,
      public_address: null,
      contacts: 0,
      dialogs: 0,
    });
    expect(node.uptime_s).toBeGreaterThanOrEqual(0);
    const n = await number('Door4Pass');
    const ok = await eventually(() => sippRegister(sip, 'register', n.number, 'Door4Pass'));
    expect(ok.ok, ok.output).toBe(true);
    expect((await status()).instances[0]!.contacts).toBe(1);
    expect(await challenge()).toMatch(/WWW-Authenticate: Digest realm="lintel"/);
  });

  it('a new realm and public address restart Kamailio with them, and the SIP reboot is told', async () => {
    const old = await number('Old4Pass');
    const before = await status();
    const saved = await getCommand('settings.sip_update').run(
      { api },
      { realm: 'towers.example', public_address: '203.0.113.7', public_port: 15060 },
    );
    expect(saved.applied).toBe('restarted');
    expect(saved.data.realm).toBe('towers.example');
    // the numbers whose passwords were made for `lintel`: the first test's and this one's
    expect(saved.numbers_other_realm).toBe(2);
    const after = await statusUntil((x) => x.state === 'up');
    expect(after.instances[0]!.pid).not.toBe(before.instances[0]!.pid);
    expect(after.instances[0]!.public_address).toBe('203.0.113.7');
    expect(after.listen?.realm).toBe('towers.example');
    // Kamailio challenges in the new realm, and advertises the public address on its SIP sockets
    expect(await challenge()).toMatch(/WWW-Authenticate: Digest realm="towers\.example"/);
    const sockets =
      await ts.server.context.sip.rpc<{ PORT: string; ADVERTISE: string }[]>('corex.list_sockets');
    expect(sockets.find((x) => x.PORT === String(sip.port))?.ADVERTISE).toBe('203.0.113.7');
    // the port advertised with it, in the configuration the running Kamailio was started with
    expect(runningConfig(after.instances[0]!.pid!)).toContain(
      `listen=udp:127.0.0.1:${sip.port} advertise 203.0.113.7:15060`,
    );
    expect(await notifications()).toEqual(
      expect.arrayContaining(['sip_reboot_started', 'sip_reboot_completed']),
    );

    // a number made for the old realm is refused until its password is set again; then it registers
    const refused = await sippRegister(sip, 'register-refused', old.number, 'Old4Pass');
    expect(refused.ok, refused.output).toBe(true);
    await getCommand('sip_number.update').run({ api }, { id: old.id, password: 'New4Pass' });
    const ok = await eventually(() => sippRegister(sip, 'register', old.number, 'New4Pass'));
    expect(ok.ok, ok.output).toBe(true);
    const fresh = await number('Fresh4Pass');
    const ok2 = await eventually(() => sippRegister(sip, 'register', fresh.number, 'Fresh4Pass'));
    expect(ok2.ok, ok2.output).toBe(true);
  });

  it('the ICE servers alone leave Kamailio running; null gives the realm back', async () => {
    const before = (await status()).instances[0]!.pid;
    const ice = await getCommand('settings.sip_update').run(
      { api },
      { ice_servers: [{ urls: ['stun:stun.towers.example'] }] },
    );
    expect(ice.applied).toBe('unchanged');
    expect((await status()).instances[0]!.pid).toBe(before);

    const back = await getCommand('settings.sip_update').run(
      { api },
      { realm: null, public_address: null, public_port: null },
    );
    expect(back.applied).toBe('restarted');
    await statusUntil((x) => x.state === 'up');
    expect(await challenge()).toMatch(/WWW-Authenticate: Digest realm="lintel"/);
    expect(JSON.stringify(await ts.server.context.sip.rpc('corex.list_sockets'))).not.toContain(
      '203.0.113.7',
    );
  });
});
