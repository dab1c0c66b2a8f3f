/**
 * What the web dialer's browser tests share (tests/e2e/dialer*.test.ts): Chromium's flags for WebRTC with fake
 * devices, the peer connections a page makes kept for their stats, and a concierge — a user whose profile
 * names a virtual number of his.
 */
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { getCommand } from '@lintel/commands';
import { Dialer, type ApiClient } from '@lintel/core';
import { expect } from 'vitest';
import { uid } from './fixtures';
import { WAIT } from './web';
import { chromiumPath, chromiumStarted } from './chromium';

/** Debian's Chromium with fake media devices (../shared/SIP.md); `extra`: flags a test's network needs. */
export function launchDialerChromium(extra: string[] = []): Promise<Browser> {
  chromiumStarted();
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--use-fake-ui-for-media-stream',
      '--use-fake-device-for-media-stream',
      // the ring plays without a gesture on the page
      '--autoplay-policy=no-user-gesture-required',
      ...extra,
    ],
  });
}

/** An init script: every RTCPeerConnection the page makes, kept in `window.__pcs` for its stats. */
export const RECORD_PEER_CONNECTIONS = `
  window.__pcs = [];
  const Native = window.RTCPeerConnection;
  window.RTCPeerConnection = class extends Native {
    constructor(...args) { super(...args); window.__pcs.push(this); }
  };
`;

/** Ends every live call of the page from the keyboard (Alt+x), and waits until none is left. */
export async function endCalls(page: Page): Promise<void> {
  await expect
    .poll(
      async () => {
        const live = await page.locator('[data-testid="call-card"]:not([data-status="destroyed"])').count();
        if (live) await page.keyboard.press('Alt+x');
        return live;
      },
      { timeout: WAIT, interval: 250 },
    )
    .toBe(0);
}

/** The bytes of `kind` (audio unless told) received over the page's open peer connections. */
export function inboundBytes(page: Page, kind: 'audio' | 'video' = 'audio'): Promise<number> {
  return page.evaluate(async (kind) => {
    let total = 0;
    for (const pc of (window as unknown as { __pcs: RTCPeerConnection[] }).__pcs) {
      if (pc.connectionState === 'closed') continue;
      (await pc.getStats()).forEach((r: { type: string; kind?: string; bytesReceived?: number }) => {
        if (r.type === 'inbound-rtp' && r.kind === kind) total += r.bytesReceived ?? 0;
      });
    }
    return total;
  }, kind);
}

/** The bytes of `kind` sent over the page's open peer connections. */
export function outboundBytes(page: Page, kind: 'audio' | 'video' = 'audio'): Promise<number> {
  return page.evaluate(async (kind) => {
    let total = 0;
    for (const pc of (window as unknown as { __pcs: RTCPeerConnection[] }).__pcs) {
      if (pc.connectionState === 'closed') continue;
      (await pc.getStats()).forEach((r: { type: string; kind?: string; bytesSent?: number }) => {
        if (r.type === 'outbound-rtp' && r.kind === kind) total += r.bytesSent ?? 0;
      });
    }
    return total;
  }, kind);
}

/** A virtual number with a password in the group, made through Lintel's API. */
export async function sipNumber(
  api: ApiClient,
  group: number,
  number: string,
  password: string,
): Promise<number> {
  const { data } = await getCommand('sip_number.create').run(
    { api },
    { number, name: `Desk ${number}`, domain_id: group, password },
  );
  return data.id;
}

/**
 * A concierge's account: a user of the group whose profile names the number `numberId`; his role holds
 * `permissions` (by default only `users.view`).
 */
export async function conciergeUser(
  api: ApiClient,
  group: number,
  numberId: number,
  name: string,
  permissions: string[] = ['users.view'],
): Promise<{ login: string; password: string }> {
  const role = await getCommand('role.create').run(
    { api },
    { name: `Concierge ${uid()}`, permissions, available_roles: [] },
  );
  const login = `c${uid()}`;
  const password = `pw-${uid()}-secret`;
  await getCommand('user.create').run(
    { api },
    {
      login,
      name,
      role: role.data.id,
      domains: [group],
      password,
      send_registration_link: false,
      profile: { sip_number_id: numberId },
    },
  );
  return { login, password };
}

/**
 * What the dialer's pages and the SIP server said, kept for the report of a failed test: each page's console
 * with sip.js's own log switched on (every SIP message the page sent and received, its media steps), and
 * Kamailio's last lines. Nothing is printed while the tests pass.
 */
export class DialerLog {
  private readonly lines: string[] = [];
  private reported = 0;

  /** Switches sip.js's log on in the pages `context` opens from now on (before the console's script runs). */
  async watch(context: BrowserContext): Promise<void> {
    await context.addInitScript(
      ([key, level]) => {
        window.localStorage.setItem(key, level);
        // a hidden or frozen page defers timers and media: said in the log when it happens
        const say = (what: string) =>
          console.info(`lintel-test: ${what}, the page is ${document.visibilityState}`);
        document.addEventListener('visibilitychange', () => say('visibility changed'));
        document.addEventListener('freeze', () => say('frozen'));
        document.addEventListener('resume', () => say('resumed'));
        say('loaded');
      },
      [Dialer.sipLogKey, 'debug'] as const,
    );
  }

  /** Keeps `page`'s console, its errors and a crash, under `name`. */
  follow(page: Page, name: string): void {
    const keep = (line: string) => {
      this.lines.push(`${new Date().toISOString().slice(11, 23)} ${name} ${line}`);
      if (this.lines.length > 50_000) {
        this.lines.splice(0, 10_000);
        this.reported = Math.max(0, this.reported - 10_000);
      }
    };
    page.on('console', (m) => keep(`${m.type()}: ${m.text()}`));
    page.on('pageerror', (err) => keep(`page error: ${err.message}`));
    page.on('crash', () => keep('the page crashed'));
  }

  /**
   * For a failed test's output: the last `pages` entries the pages logged since the last report (a test's
   * own, when each failure is reported), and the SIP server's last lines.
   */
  report(sipOutput: string[], pages = 400): string {
    const fresh = this.lines.slice(this.reported);
    this.reported = this.lines.length;
    return [
      `== the dialer pages' console, ${Math.min(pages, fresh.length)} of ${fresh.length} entries since the last report (sip.js at debug)`,
      ...fresh.slice(-pages),
      '== the SIP server (Kamailio) last lines',
      ...sipOutput,
    ].join('\n');
  }
}
