/**
 * bench/dialer, the measuring process: Lintel with a real Kamailio on free loopback ports, the built console,
 * and two Chromium pages of concierges (fake media devices). BENCH_CALLS times (default 50): page A calls page
 * B from the keypad; the time from A's INVITE leaving its SIP websocket to B's ringing card on screen (split
 * into the INVITE's way through Kamailio to B's websocket, and B's console: sip.js, the calls reducer,
 * React), then from B's Alt+A to the first audio bytes B receives (split into B's 200 OK leaving, and the
 * media setting up). Every instant is the pages' own `Date.now()` (one clock, one machine). Prints one JSON
 * line of every sample.
 */
import fs from 'node:fs';
import { getCommand } from '@lintel/commands';
import { chromium, type Page } from 'playwright-core';
import { startTestServer } from '../../tests/support/server';
import { chromiumPath } from '../../tests/support/chromium';
import { signIn } from '../../tests/support/fixtures';
import { sipTestConfig } from '../../tests/sip/sip-support';

const CALLS = Number(process.env.BENCH_CALLS ?? 50);
const webDir = new URL('../../apps/web/dist', import.meta.url).pathname;

/** What each page records: its SIP websocket's INVITE and 200 OK, the ringing card, Alt+A, the first bytes. */
const PROBES = `
  window.__reset = () => {
    window.__t = { inviteOut: [], inviteIn: [], okOut: [], ring: [], accept: [], media: [] };
  };
  window.__reset();
  window.__pcs = [];
  const Native = window.RTCPeerConnection;
  window.RTCPeerConnection = class extends Native {
    constructor(...args) { super(...args); window.__pcs.push(this); }
  };
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) {
    if (typeof data === 'string' && data.startsWith('INVITE ') && !/\\r\\nTo: [^\\r]*;tag=/i.test(data)) window.__t.inviteOut.push(Date.now());
    if (typeof data === 'string' && data.startsWith('SIP/2.0 200') && /\\r\\nCSeq: \\d+ INVITE/i.test(data)) window.__t.okOut.push(Date.now());
    return send.call(this, data);
  };
  const NativeWS = window.WebSocket;
  window.WebSocket = class extends NativeWS {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (e) => {
        if (typeof e.data === 'string' && e.data.startsWith('INVITE ') && !/\\r\\nTo: [^\\r]*;tag=/i.test(e.data)) window.__t.inviteIn.push(Date.now());
      });
    }
  };
  new MutationObserver(() => {
    const ringing = document.querySelectorAll('[data-testid="call-card"][data-status="new"]').length;
    if (ringing > (window.__ringing ?? 0)) window.__t.ring.push(Date.now());
    window.__ringing = ringing;
  }).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-status'] });
  document.addEventListener('keydown', (e) => {
    if (e.altKey && e.code === 'KeyA') {
      window.__t.accept.push(Date.now());
      const poll = setInterval(async () => {
        // the ended calls' connections are closed: only this call's counts
        for (const pc of window.__pcs) {
          if (pc.connectionState === 'closed') continue;
          let bytes = 0;
          (await pc.getStats()).forEach((r) => { if (r.type === 'inbound-rtp' && r.kind === 'audio') bytes += r.bytesReceived || 0; });
          if (bytes > 0) { window.__t.media.push(Date.now()); clearInterval(poll); return; }
        }
      }, 5);
    }
  }, true);
`;

/**
 * CPU seconds (utime + stime) so far of this process and of every process below it, by kind: this process (the
 * Lintel server and the bench's driver share it), Kamailio's processes, Chromium's. Read from /proc.
 */
function cpuByKind(): Record<'lintel' | 'kamailio' | 'chromium' | 'other', number> {
  const procs = new Map<number, { ppid: number; comm: string; cpu: number }>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      procs.set(Number(entry), { ppid: Number(f[1]), comm, cpu: (Number(f[11]) + Number(f[12])) / 100 });
    } catch {
      // gone meanwhile
    }
  }
  const below = (pid: number): boolean => {
    for (let p = procs.get(pid)?.ppid; p; p = procs.get(p)?.ppid) if (p === process.pid) return true;
    return false;
  };
  const out = { lintel: procs.get(process.pid)?.cpu ?? 0, kamailio: 0, chromium: 0, other: 0 };
  for (const [pid, p] of procs) {
    if (pid === process.pid || !below(pid)) continue;
    if (p.comm.startsWith('kamailio')) out.kamailio += p.cpu;
    else if (p.comm.startsWith('chrom')) out.chromium += p.cpu;
    else out.other += p.cpu;
  }
  return out;
}

const sip = await sipTestConfig();
const server = await startTestServer({ webDir, config: { sip } });
const browser = await chromium.launch({
  executablePath: chromiumPath(),
  headless: true,
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--no-first-run',
    '--allow-loopback-in-peer-connection',
    '--use-fake-ui-for-media-stream',
    '--use-fake-device-for-media-stream',
    '--autoplay-policy=no-user-gesture-required',
  ],
});
try {
  const api = await signIn(server, server.adminLogin, server.adminPassword);
  // every feature on, the web dialer included
  const { everyFeatureOn, licence, rootGroup } = await import('../../tests/support/fixtures');
  await licence(server, everyFeatureOn());
  const group = await rootGroup(api);
  const role = await getCommand('role.create').run(
    { api },
    { name: 'Bench concierge', permissions: ['users.view'], available_roles: [] },
  );
  const pages: { page: Page; number: string }[] = [];
  for (const n of ['7001', '7002']) {
    const password = `Bench${n}Pass`;
    const { data } = await getCommand('sip_number.create').run(
      { api },
      { number: n, name: `Desk ${n}`, domain_id: group, password },
    );
    await getCommand('user.create').run(
      { api },
      {
        login: `bench${n}`,
        name: `Desk ${n}`,
        role: role.data.id,
        domains: [group],
        password: `bench-${n}-secret`,
        send_registration_link: false,
        profile: { sip_number_id: data.id },
      },
    );
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    await context.addInitScript(PROBES);
    const page = await context.newPage();
    page.setDefaultTimeout(60_000);
    await page.goto(`${server.url}/login`);
    await page.getByRole('textbox', { name: 'Login or e-mail', exact: true }).fill(`bench${n}`);
    await page.getByRole('textbox', { name: 'Password', exact: true }).fill(`bench-${n}-secret`);
    await page.keyboard.press('Enter');
    await page.locator('[data-testid="dialer-button"][data-state="registered"]').waitFor();
    pages.push({ page, number: n });
  }
  const [a, b] = pages as [{ page: Page; number: string }, { page: Page; number: string }];
  await a.page.keyboard.press('Alt+p');
  await a.page.getByTestId('dialer-entry').waitFor();
  const live = (p: Page, status: string) =>
    p.locator(`[data-testid="call-card"][data-status="${status}"]`).first().waitFor();
  const count = (p: Page, status: string) =>
    p.locator(`[data-testid="call-card"][data-status="${status}"]`).count();

  const samples: Record<string, number>[] = [];
  const cpu0 = cpuByKind();
  for (let i = 0; i < CALLS; i++) {
    // each call's instants from nothing: the first INVITE (before the proxy's 407) is the one that leaves
    await a.page.evaluate(() => window.__reset());
    await b.page.evaluate(() => window.__reset());
    await a.page.getByTestId('dialer-entry').focus();
    await a.page.keyboard.type(b.number);
    await a.page.keyboard.press('Enter');
    await live(b.page, 'new');
    await b.page.keyboard.press('Alt+a');
    await live(b.page, 'active');
    await b.page.waitForFunction(() => window.__t.media.length > 0);
    const ta = await a.page.evaluate(() => window.__t);
    const tb = await b.page.evaluate(() => window.__t);
    samples.push({
      inviteOut: ta.inviteOut[0]!,
      inviteIn: tb.inviteIn[0]!,
      ring: tb.ring[0]!,
      accept: tb.accept[0]!,
      okOut: tb.okOut[0]!,
      media: tb.media[0]!,
    });
    await a.page.keyboard.press('Alt+x');
    await b.page.waitForFunction(
      () => !document.querySelector('[data-testid="call-card"]:not([data-status="destroyed"])'),
    );
    await a.page.waitForFunction(
      () => !document.querySelector('[data-testid="call-card"]:not([data-status="destroyed"])'),
    );
    if ((await count(a.page, 'calling')) + (await count(b.page, 'new')) > 0) throw new Error('a call stayed');
  }
  const cpu1 = cpuByKind();
  // CPU milliseconds a call costs (ringing, answering, a second of talk at most, hanging up), each kind's
  const cpuMsPerCall = Object.fromEntries(
    (Object.keys(cpu1) as (keyof typeof cpu1)[]).map((k) => [k, ((cpu1[k] - cpu0[k]) * 1000) / CALLS]),
  );
  process.stdout.write(`${JSON.stringify({ calls: CALLS, samples, cpuMsPerCall })}\n`);
} finally {
  await browser.close();
  await server.close();
}

declare global {
  interface Window {
    __t: Record<'inviteOut' | 'inviteIn' | 'okOut' | 'ring' | 'accept' | 'media', number[]>;
    __reset: () => void;
  }
}
