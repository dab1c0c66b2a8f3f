/**
 * Issue 23: a door panel that is not ours (Debian's baresip: auto-answer, ICE, DTLS-SRTP, its control socket
 * reporting the tones it receives) answers a concierge's call from the web dialer, media flows, and the
 * concierge's Alt+O reaches it as `#`. baresip needs an address that is not loopback and one candidate
 * address (../shared/SIP.md), so it runs in a network namespace of its own, joined to this machine by a veth
 * pair; Kamailio and Lintel listen on the host's end of it, the SIP websocket is secure (not loopback), and
 * Chromium treats that origin as secure. Its own world (a namespace, a Kamailio on that address): a file of
 * its own, with one server, one Kamailio, one browser and one panel.
 */
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
import { BaresipPanel } from '../support/baresip-panel';

const tag = uid().slice(0, 6);
const panel = new BaresipPanel('door', 231);
const hostIp = panel.hostIp;

let server: TestServer;
let browser: Browser;
let sip: SipConfig;
let api: ApiClient;

beforeAll(async () => {
  ensureBuilt();
  panel.up();

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
  await panel.down();
  await browser?.close();
  await server?.close();
});

const number = async (n: string, password: string) => sipNumber(api, await rootGroup(api), n, password);

describe('a door panel that is not ours', { timeout: 180_000 }, () => {
  it('answers the concierge, media flows, and Alt+O reaches it as #', async () => {
    const door = `9${tag.replace(/\D/g, '').padEnd(3, '1').slice(0, 3)}`;
    const doorPassword = `Door${uid()}X1`;
    await number(door, doorPassword);
    panel.start(door, doorPassword, sip.port, { answer: true });
    await panel.listen();
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
    await context.addInitScript(panel.oneAddressScript());
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
        .poll(() => panel.events.some((e) => e.type === 'CALL_DTMF_START' && e.param === '#'), {
          timeout: WAIT,
          interval: 100,
        })
        .toBe(true);
      await page.keyboard.press('Alt+x');
      await page
        .locator(`[data-testid="call-card"][data-number="${door}"][data-status="destroyed"]`)
        .waitFor();
    } catch (err) {
      throw new Error(
        `${(err as Error).message}\npanel: ${panel.log}\nevents: ${JSON.stringify(panel.events)}`,
      );
    } finally {
      await context.close();
    }
  });
});
