/**
 * Issue 23: a door panel that is not ours (Debian's baresip: auto-answer, ICE, DTLS-SRTP, its control socket
 * reporting the tones it receives) answers a concierge's call from the web dialer, media flows, and the
 * concierge's Alt+O reaches it as `#`. baresip needs an address that is not loopback and one candidate
 * address (../shared/SIP.md), so it runs in a network namespace of its own, joined to this machine by a veth
 * pair; Kamailio and Lintel listen on the host's end of it, the SIP websocket is secure (not loopback), and
 * Chromium treats that origin as secure. Its own world (a namespace, a Kamailio on that address): a file of
 * its own, with one server, one Kamailio, one browser and one panel.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { loadSipConfig, type SipConfig } from '@lintel/server';
import type { ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin, everyFeatureOn, licence, rootGroup, uid } from '../support/fixtures';
import { keyboardSignIn } from '../support/console';
import { ensureBuilt, WAIT, webDist } from '../support/web';
import { freePort } from '../sip/sip-support';
import { conciergeUser, inboundBytes, launchDialerChromium, sipNumber } from '../support/dialer';

const tag = uid().slice(0, 6);
const ns = `lintel-door-${tag}`;
const hostIf = `ldh${tag}`;
const nsIf = `ldn${tag}`;
const octet = 16 + Math.floor(Math.random() * 200);
const hostIp = `10.231.${octet}.1`;
const panelIp = `10.231.${octet}.2`;
const CTRL_PORT = 4444;

let server: TestServer;
let browser: Browser;
let sip: SipConfig;
let api: ApiClient;
let panel: ChildProcess | null = null;
let panelDir = '';
const events: { type?: string; param?: string }[] = [];
let panelLog = '';

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: 'pipe' });

beforeAll(async () => {
  ensureBuilt();
  // the panel's network: a namespace and a veth pair (root only, as the other real parts' installs)
  ip('netns', 'add', ns);
  ip('link', 'add', hostIf, 'type', 'veth', 'peer', 'name', nsIf);
  ip('link', 'set', nsIf, 'netns', ns);
  ip('addr', 'add', `${hostIp}/30`, 'dev', hostIf);
  ip('link', 'set', hostIf, 'up');
  ip('netns', 'exec', ns, 'ip', 'addr', 'add', `${panelIp}/30`, 'dev', nsIf);
  ip('netns', 'exec', ns, 'ip', 'link', 'set', nsIf, 'up');
  ip('netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up');

  sip = {
    ...loadSipConfig({}),
    host: hostIp,
    port: await freePort(),
    wsPort: await freePort(),
    wsPlain: false,
    rpcPort: await freePort(),
    rpcTimeoutMs: 5_000,
  };
  server = await startTestServer({ webDir: webDist, config: { sip, host: hostIp } });
  await licence(server, everyFeatureOn());
  api = await admin(server);
  // Kamailio's self-signed certificate, and media devices on a plain-HTTP console that is not loopback
  browser = await launchDialerChromium([
    '--ignore-certificate-errors',
    `--unsafely-treat-insecure-origin-as-secure=${server.url}`,
  ]);
}, 180_000);

afterAll(async () => {
  panel?.kill('SIGKILL');
  await browser?.close();
  await server?.close();
  try {
    ip('netns', 'del', ns);
  } catch {
    // already gone
  }
  if (panelDir) fs.rmSync(panelDir, { recursive: true, force: true });
});

const number = async (n: string, password: string) => sipNumber(api, await rootGroup(api), n, password);

/** baresip in the namespace as the door panel `n`, registered to Kamailio, answering every call. */
function startPanel(n: string, password: string): void {
  panelDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-baresip-'));
  fs.writeFileSync(
    path.join(panelDir, 'config'),
    [
      'poll_method epoll',
      `sip_listen ${panelIp}:5060`,
      'audio_player aubridge,nil',
      'audio_source ausine,440',
      // the sine source is 48 kHz stereo only; baresip resamples it for G.711
      'ausrc_srate 48000',
      'ausrc_channels 2',
      'auplay_srate 48000',
      'audio_alert aubridge,nil',
      'rtcp_mux yes',
      'module_path /usr/lib/baresip/modules',
      'module g711.so',
      'module ausine.so',
      'module aubridge.so',
      'module ice.so',
      'module dtls_srtp.so',
      'module_app account.so',
      'module_app ctrl_tcp.so',
      `ctrl_tcp_listen 0.0.0.0:${CTRL_PORT}`,
      '',
    ].join('\n'),
  );
  fs.writeFileSync(
    path.join(panelDir, 'accounts'),
    `<sip:${n}@${hostIp}:${sip.port};transport=udp>;auth_pass=${password};answermode=auto;medianat=ice;mediaenc=dtls_srtp;audio_codecs=PCMU;regint=60\n`,
  );
  panel = spawn('ip', ['netns', 'exec', ns, 'baresip', '-f', panelDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  panel.stdout?.on('data', (d: Buffer) => (panelLog = (panelLog + d.toString()).slice(-4000)));
  panel.stderr?.on('data', (d: Buffer) => (panelLog = (panelLog + d.toString()).slice(-4000)));
}

/** The panel's control socket: its events (netstrings of JSON), kept in `events`. */
async function listenToPanel(): Promise<void> {
  const end = Date.now() + WAIT;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect(CTRL_PORT, panelIp);
      let buffer = '';
      socket.once('connect', () => resolve(true));
      socket.once('error', () => resolve(false));
      socket.on('data', (d) => {
        buffer += d.toString();
        for (;;) {
          const colon = buffer.indexOf(':');
          if (colon < 0) break;
          const len = Number(buffer.slice(0, colon));
          if (buffer.length < colon + 1 + len + 1) break;
          try {
            events.push(JSON.parse(buffer.slice(colon + 1, colon + 1 + len)) as { type?: string });
          } catch {
            // not an event
          }
          buffer = buffer.slice(colon + 1 + len + 1);
        }
      });
    });
    if (ok) return;
    if (Date.now() > end) throw new Error(`the panel's control socket did not open\n${panelLog}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('a door panel that is not ours', { timeout: 180_000 }, () => {
  it('answers the concierge, media flows, and Alt+O reaches it as #', async () => {
    const door = `9${tag.replace(/\D/g, '').padEnd(3, '1').slice(0, 3)}`;
    const doorPassword = `Door${uid()}X1`;
    await number(door, doorPassword);
    startPanel(door, doorPassword);
    await listenToPanel();
    await expect
      .poll(
        async () =>
          JSON.stringify(
            await server.server.context.sip.rpc('ul.lookup', ['location', door]).catch(() => null),
          ),
        { timeout: WAIT, interval: 200 },
      )
      .toContain(door);

    // the concierge
    const own = '8100';
    const password = `Desk${uid()}X1`;
    const numberId = await number(own, password);
    const { login, password: userPassword } = await conciergeUser(
      api,
      await rootGroup(api),
      numberId,
      'Door Desk',
    );
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    // the concierge's machine has one network toward the panel: its offer names only that address (baresip's
    // ICE wants a single candidate address, ../shared/SIP.md; this machine has others the panel cannot reach)
    await context.addInitScript(`
      window.__pcs = [];
      const Native = window.RTCPeerConnection;
      const local = Object.getOwnPropertyDescriptor(Native.prototype, 'localDescription').get;
      window.RTCPeerConnection = class extends Native {
        constructor(...args) { super(...args); window.__pcs.push(this); }
        get localDescription() {
          const d = local.call(this);
          if (!d) return d;
          const lines = d.sdp.split('\\r\\n').filter((l) => !l.startsWith('a=candidate') || (l.includes(' ${hostIp} ') && l.includes(' udp ')));
          const kept = lines.find((l) => l.startsWith('a=candidate'));
          if (!kept) return d;
          const port = kept.split(' ')[5];
          const sdp = lines
            .map((l) => (l.startsWith('c=IN IP4 ') ? 'c=IN IP4 ${hostIp}' : l.startsWith('m=audio ') ? l.replace(/^m=audio \\d+/, 'm=audio ' + port) : l))
            .join('\\r\\n');
          return new RTCSessionDescription({ type: d.type, sdp });
        }
      };`);
    const page = await context.newPage();
    page.setDefaultTimeout(WAIT);
    try {
      await keyboardSignIn(page, server, login, userPassword);
      await page.locator('[data-testid="dialer-button"][data-state="registered"]').waitFor();
      await page.keyboard.press('Alt+p');
      await page.getByTestId('dialer-entry').waitFor();
      await page.keyboard.type(door);
      await page.keyboard.press('Enter');
      // the panel answers by itself
      await page.locator(`[data-testid="call-card"][data-number="${door}"][data-status="active"]`).waitFor();
      await expect.poll(() => inboundBytes(page), { timeout: WAIT, interval: 100 }).toBeGreaterThan(0);
      await page.keyboard.press('Alt+o');
      await expect
        .poll(() => events.some((e) => e.type === 'CALL_DTMF_START' && e.param === '#'), {
          timeout: WAIT,
          interval: 100,
        })
        .toBe(true);
      await page.keyboard.press('Alt+x');
      await page
        .locator(`[data-testid="call-card"][data-number="${door}"][data-status="destroyed"]`)
        .waitFor();
    } catch (err) {
      throw new Error(`${(err as Error).message}\npanel: ${panelLog}\nevents: ${JSON.stringify(events)}`);
    } finally {
      await context.close();
    }
  });
});
