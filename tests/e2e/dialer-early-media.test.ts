/**
 * Issue 23 item 7: video from the door panel before answering. A door panel that is not ours (Debian's baresip,
 * as in dialer-door.test.ts: ICE, DTLS-SRTP, a sine tone as its microphone, here also a camera — baresip's
 * fakevideo source sent as VP8 —, in a network namespace of its own joined by a veth pair) calls a concierge.
 * The concierge's dialer answers the video offer provisionally (a 183 whose SDP receives the panel's media and
 * sends none): the ringing card shows the panel's video while the ring goes on, and the concierge's microphone
 * is not sent; Alt+A answers (the 200 OK), the video goes on and audio flows both ways. The panel giving up
 * during the early media (a CANCEL through Kamailio) ends the card cleanly; a call offering no video rings as
 * before, with no video. One server, one Kamailio, one browser and one panel for the file.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Locator, Page } from 'playwright-core';
import { getCommand } from '@lintel/commands';
import { loadSipConfig, type SipConfig } from '@lintel/server';
import type { ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin, everyFeatureOn, licence, rootGroup, uid } from '../support/fixtures';
import { keyboardSignIn } from '../support/console';
import { ensureBuilt, WAIT, webDist } from '../support/web';
import { freePort } from '../sip/sip-support';
import {
  conciergeUser,
  DialerLog,
  endCalls,
  inboundBytes,
  launchDialerChromium,
  outboundBytes,
  sipNumber,
} from '../support/dialer';
import { BaresipPanel } from '../support/baresip-panel';

const tag = uid().slice(0, 6);
const panel = new BaresipPanel('early', 233);
const hostIp = panel.hostIp;
const digits = tag.replace(/\D/g, '').padEnd(3, '4').slice(0, 3);
const door = `9${digits}`;
const doorPassword = `Door${uid()}X1`;
const own = `83${digits}`;

let server: TestServer;
let browser: Browser;
let sip: SipConfig;
let api: ApiClient;
let page: Page;
/** whether the panel running has its camera */
let panelVideo = false;
/** the page's console with sip.js's log, and Kamailio's output: printed when a test fails */
const log = new DialerLog();

/** The panel (re)started with or without its camera, registered with Kamailio. */
async function startPanel(video: boolean): Promise<void> {
  await panel.stop();
  // the contact the panel it replaces registered goes: the one looked up below is the new panel's own (its
  // address and port are the same from one start to the next)
  await server.server.context.sip.rpc('ul.rm', ['location', door]).catch(() => null);
  panel.start(door, doorPassword, sip.port, { answer: false, video });
  panelVideo = video;
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
}

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
  browser = await launchDialerChromium([
    '--ignore-certificate-errors',
    `--unsafely-treat-insecure-origin-as-secure=${server.url}`,
  ]);
  const root = await rootGroup(api);
  await sipNumber(api, root, door, doorPassword);
  const password = `Desk${uid()}X1`;
  const numberId = await sipNumber(api, root, own, password);
  const user = await conciergeUser(api, root, numberId, 'Early Desk');
  const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1440, height: 900 } });
  await context.addInitScript(panel.oneAddressScript());
  await log.watch(context);
  page = await context.newPage();
  log.follow(page, 'Early Desk');
  page.setDefaultTimeout(WAIT);
  await keyboardSignIn(page, server, user.login, user.password);
  await page.locator('[data-testid="dialer-button"][data-state="registered"]').waitFor();
}, 180_000);

afterEach(async ({ task }) => {
  if (task.result?.state !== 'fail') return;
  console.log(log.report(server.server.context.sip.recentOutput()));
  // what the failed test left is undone — its calls ended on the page, the panel started anew — so the next
  // test fails, or not, on its own
  await endCalls(page);
  await startPanel(panelVideo);
});

afterAll(async () => {
  await page?.context().close();
  await panel.down();
  await browser?.close();
  await server?.close();
});

const card = (more = ''): Locator => page.locator(`[data-testid="call-card"][data-number="${door}"]${more}`);
const ringingButton = () => page.locator('[data-testid="dialer-button"][data-ringing="true"]');
const videoWidth = () =>
  card()
    .getByTestId('call-video')
    .evaluate((v: HTMLVideoElement) => v.videoWidth)
    .catch(() => 0);
const poll = { timeout: WAIT, interval: 100 };

/** The panel calls the concierge; its card rings. */
async function panelCalls(): Promise<void> {
  panel.command('dial', `sip:${own}@${hostIp}:${sip.port}`);
  await card('[data-status="new"]').waitFor();
  await ringingButton().waitFor();
}

/** Waits for the card to end, the ring with it, and the panel's call to close. */
async function ended(closedBefore: number): Promise<void> {
  await card('[data-status="destroyed"]').waitFor();
  await page.locator('[data-testid="dialer-button"]:not([data-ringing])').waitFor();
  await expect
    .poll(() => panel.events.filter((e) => e.type === 'CALL_CLOSED').length, poll)
    .toBeGreaterThan(closedBefore);
  await page.getByTestId('dialer-no-calls').waitFor();
}

const closed = () => panel.events.filter((e) => e.type === 'CALL_CLOSED').length;

describe('video from the door panel before answering (early media)', { timeout: 240_000 }, () => {
  it('the ringing card shows the panel’s video; nothing is sent until Alt+A answers; then audio flows', async () => {
    await startPanel(true);
    try {
      await panelCalls();
      // the early media: the panel's video plays on the ringing card, its bytes grow
      await expect.poll(videoWidth, poll).toBeGreaterThan(0);
      const first = await inboundBytes(page, 'video');
      expect(first).toBeGreaterThan(0);
      await expect.poll(() => inboundBytes(page, 'video'), poll).toBeGreaterThan(first);
      await card().getByTestId('call-early-media').waitFor();
      // still ringing: the status, the ring (the button, the tab's title), Answer on the card
      expect(await card().getByTestId('call-status').textContent()).toBe('Ringing');
      expect(await ringingButton().count()).toBe(1);
      expect(await page.title()).toContain(door);
      await card().getByTestId('call-accept').waitFor();
      // the visitor hears nothing: no audio leaves the concierge's page before the answer
      expect(await outboundBytes(page, 'audio')).toBe(0);
      // the panel's call is in progress with early media, not answered
      expect(panel.events.some((e) => e.type === 'CALL_PROGRESS')).toBe(true);
      expect(panel.events.some((e) => e.type === 'CALL_ESTABLISHED')).toBe(false);
      const listed = await getCommand('call.list').run({ api }, {});
      expect(listed.data.find((c) => c.caller === door)?.status).not.toBe('answered');

      // Alt+A answers: the 200 OK; the video goes on, the microphone is sent, the panel's sound comes
      await page.keyboard.press('Alt+a');
      await card('[data-status="active"]').waitFor();
      await expect.poll(() => panel.events.some((e) => e.type === 'CALL_ESTABLISHED'), poll).toBe(true);
      await page.locator('[data-testid="dialer-button"]:not([data-ringing])').waitFor();
      expect(await page.title()).not.toContain(door);
      expect(await card().getByTestId('call-early-media').count()).toBe(0);
      const video = await inboundBytes(page, 'video');
      await expect.poll(() => inboundBytes(page, 'video'), poll).toBeGreaterThan(video);
      expect(await videoWidth()).toBeGreaterThan(0);
      const heard = await inboundBytes(page, 'audio');
      await expect.poll(() => inboundBytes(page, 'audio'), poll).toBeGreaterThan(heard);
      await expect.poll(() => outboundBytes(page, 'audio'), poll).toBeGreaterThan(0);
      await expect
        .poll(
          async () =>
            (await getCommand('call.list').run({ api }, {})).data.find((c) => c.caller === door)?.status,
          poll,
        )
        .toBe('answered');

      const before = closed();
      await page.keyboard.press('Alt+x');
      await ended(before);
    } catch (err) {
      throw new Error(
        `${(err as Error).message}\npanel: ${panel.log}\nevents: ${JSON.stringify(panel.events)}`,
      );
    }
  });

  it('the panel giving up during the early media (CANCEL) ends the card and the ring, never answered', async () => {
    try {
      await panelCalls();
      await expect.poll(videoWidth, poll).toBeGreaterThan(0);
      const before = closed();
      panel.command('hangup', '');
      await ended(before);
      expect(panel.events.filter((e) => e.type === 'CALL_ESTABLISHED')).toHaveLength(1);
      // the server's call is gone, as a call nobody answered
      await expect
        .poll(
          async () => (await getCommand('call.list').run({ api }, {})).data.some((c) => c.caller === door),
          poll,
        )
        .toBe(false);
      // the history holds it unanswered, after the answered call before it (no early dialog taken for an answer)
      const history = async () =>
        (await getCommand('call_history.list').run({ api }, {})).data.filter((h) => h.from_number === door);
      await expect.poll(async () => (await history()).length, poll).toBe(2);
      const [cancelled, answered] = await history();
      expect(answered).toMatchObject({ status: 'answered', to_number: own });
      expect(cancelled!.status).not.toBe('answered');
      expect(cancelled!.duration).toBe(0);
    } catch (err) {
      throw new Error(
        `${(err as Error).message}\npanel: ${panel.log}\nevents: ${JSON.stringify(panel.events)}`,
      );
    }
  });

  it('a panel offering no video rings as before: no early media, no video; answered, audio flows', async () => {
    await startPanel(false);
    try {
      const progressBefore = panel.events.filter((e) => e.type === 'CALL_PROGRESS').length;
      await panelCalls();
      expect(await card().getByTestId('call-video').count()).toBe(0);
      expect(await card().getByTestId('call-early-media').count()).toBe(0);
      await page.keyboard.press('Alt+a');
      await card('[data-status="active"]').waitFor();
      await expect.poll(() => inboundBytes(page, 'audio'), poll).toBeGreaterThan(0);
      expect(await card().getByTestId('call-video').count()).toBe(0);
      // no 183 with media reached the panel
      expect(panel.events.filter((e) => e.type === 'CALL_PROGRESS')).toHaveLength(progressBefore);
      const before = closed();
      await page.keyboard.press('Alt+x');
      await ended(before);
    } catch (err) {
      throw new Error(
        `${(err as Error).message}\npanel: ${panel.log}\nevents: ${JSON.stringify(panel.events)}`,
      );
    }
  });
});
