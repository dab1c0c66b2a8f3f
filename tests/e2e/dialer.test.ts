/**
 * Issue 23: the web dialer in Chromium against a real Kamailio run by Lintel. Two concierges' pages (fake
 * media devices, WebRTC on loopback, no ICE servers) register with numbers created in Lintel; one calls the
 * other from the keypad, the other answers from the keyboard; media flows both ways (WebRTC stats show
 * inbound bytes); hold and resume go through re-INVITEs; the call ends. A caller that is not ours (sipp)
 * calling a concierge's number makes the page ring and show the caller's number. One Kamailio, one server
 * and one browser for the file; the pages stay signed in from test to test.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import type { SipConfig } from '@lintel/server';
import { startTestServer, type TestServer } from '../support/server';
import { createHash } from 'node:crypto';
import { admin, everyFeatureOn, licence, rootGroup, signIn, uid } from '../support/fixtures';
import { keyboardSignIn } from '../support/console';
import { ensureBuilt, expectText, repo, WAIT, webDist } from '../support/web';
import { sippCallRefused, sipTestConfig } from '../sip/sip-support';
import {
  conciergeUser,
  DialerLog,
  inboundBytes,
  launchDialerChromium,
  RECORD_PEER_CONNECTIONS,
  sipNumber,
} from '../support/dialer';

let server: TestServer;
let browser: Browser;
let sip: SipConfig;
let api: ApiClient;
let group: number;
const contexts: BrowserContext[] = [];
/** the pages' consoles with sip.js's log, and Kamailio's output: printed when a test fails */
const log = new DialerLog();
let next = 3000 + Math.floor(Math.random() * 5000);

const shots = path.join(repo, '.test-results/e2e');

beforeAll(async () => {
  ensureBuilt();
  sip = await sipTestConfig();
  server = await startTestServer({ webDir: webDist, config: { sip } });
  await licence(server, everyFeatureOn());
  api = await admin(server);
  group = await rootGroup(api);
  // WebRTC between two pages of this machine (../shared/SIP.md)
  browser = await launchDialerChromium(['--allow-loopback-in-peer-connection']);
}, 180_000);

afterEach(({ task }) => {
  if (task.result?.state === 'fail') console.log(log.report(server.server.context.sip.recentOutput()));
});

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => undefined);
  await browser?.close();
  await server?.close();
});

/** A virtual number with a password, made through Lintel's API. */
async function number(password: string): Promise<{ id: number; number: string }> {
  const n = String(next++);
  return { id: await sipNumber(api, group, n, password), number: n };
}

/** A concierge: a user whose profile names a number of his, signed in on a page of his own. */
async function concierge(name: string): Promise<{
  page: Page;
  id: number;
  number: string;
  password: string;
  api: () => Promise<ApiClient>;
}> {
  const password = `Pw${uid()}x9`;
  const n = await number(password);
  const { login, password: userPassword } = await conciergeUser(api, group, n.id, name);
  const context = await browser.newContext({
    locale: 'en-US',
    viewport: { width: 1440, height: 900 },
    permissions: ['microphone', 'camera'],
  });
  contexts.push(context);
  await context.addInitScript(RECORD_PEER_CONNECTIONS);
  await log.watch(context);
  const page = await context.newPage();
  log.follow(page, name);
  page.setDefaultTimeout(WAIT);
  await keyboardSignIn(page, server, login, userPassword);
  return { page, id: n.id, number: n.number, password, api: () => signIn(server, login, userPassword) };
}

const button = (page: Page) => page.getByTestId('dialer-button');
const card = (page: Page, number: string) =>
  page.locator(`[data-testid="call-card"][data-number="${number}"]`);

async function cardStatus(page: Page, number: string, status: string): Promise<void> {
  await card(page, number)
    .and(page.locator(`[data-status="${status}"]`))
    .first()
    .waitFor();
}

/** Waits until the page has received more than `than` bytes of audio. */
async function mediaFlows(page: Page, than = 0): Promise<number> {
  await expect.poll(() => inboundBytes(page), { timeout: WAIT, interval: 100 }).toBeGreaterThan(than);
  return inboundBytes(page);
}

/** The direction the far end asked for in the live peer connection's last remote description. */
function remoteDirection(page: Page): Promise<string> {
  return page.evaluate(() => {
    const pcs = (window as unknown as { __pcs: RTCPeerConnection[] }).__pcs.filter(
      (pc) => pc.connectionState !== 'closed',
    );
    const sdp = pcs.at(-1)?.currentRemoteDescription?.sdp ?? '';
    return /a=(sendrecv|sendonly|recvonly|inactive)/.exec(sdp)?.[1] ?? '';
  });
}

function localTrackEnabled(page: Page): Promise<boolean | null> {
  return page.evaluate(() => {
    const pcs = (window as unknown as { __pcs: RTCPeerConnection[] }).__pcs.filter(
      (pc) => pc.connectionState !== 'closed',
    );
    const track = pcs
      .at(-1)
      ?.getSenders()
      .find((s) => s.track?.kind === 'audio')?.track;
    return track ? track.enabled : null;
  });
}

let alice: Awaited<ReturnType<typeof concierge>>;
let bob: Awaited<ReturnType<typeof concierge>>;

describe('the web dialer', { timeout: 180_000 }, () => {
  it('registers with the number of the profile; the button turns green', async () => {
    [alice, bob] = await Promise.all([concierge('Alice Desk'), concierge('Bob Desk')]);
    for (const c of [alice, bob]) {
      await button(c.page).and(c.page.locator('[data-state="registered"]')).waitFor();
      expect(await button(c.page).getAttribute('class')).toContain('text-green-700');
    }
    // Kamailio's registrar holds both
    for (const c of [alice, bob]) {
      const found = await server.server.context.sip.rpc('ul.lookup', ['location', c.number]);
      expect(JSON.stringify(found)).toContain(c.number);
    }
  });

  it("reads the user's SIP profile: the number and its HA1, never a password; nothing without a number", async () => {
    const own = await alice.api();
    const profile = await getCommand('sip.profile').run({ api: own }, {});
    expect(profile).toEqual({
      number: alice.number,
      name: `Desk ${alice.number}`,
      realm: 'lintel',
      ha1: createHash('md5').update(`${alice.number}:lintel:${alice.password}`).digest('hex'),
      ws_port: sip.wsPort,
      ws_secure: false,
      ice_servers: [],
    });
    expect((await getCommand('profile.get').run({ api: own }, {})).profile.sip_number).toBe(alice.number);
    // the administrator has no number: no dialer
    expect(await getCommand('sip.profile').run({ api }, {})).toBeNull();
    expect((await getCommand('profile.get').run({ api }, {})).profile.sip_number).toBeNull();
  });

  it('calls from the keypad, is answered from the keyboard, media flows, holds, resumes and ends', async () => {
    const a = alice.page;
    const b = bob.page;
    // Alice: Alt+P opens the dialer with the number field focused; the number and Enter call
    await a.keyboard.press('Alt+p');
    await a.getByTestId('dialer-panel').waitFor();
    await expect.poll(() => a.evaluate(() => document.activeElement?.id)).toBe('dialer-entry');
    await a.screenshot({ path: path.join(shots, 'dialer-idle.png') });
    await a.keyboard.type(bob.number);
    await a.keyboard.press('Enter');
    await cardStatus(a, bob.number, 'calling');

    // Bob's page rings with Alice's number; the panel opened by itself
    await cardStatus(b, alice.number, 'new');
    await button(b).and(b.locator('[data-ringing="true"]')).waitFor();
    await expect(b.getByTestId('call-status').first().textContent()).resolves.toBe('Ringing');
    await b.screenshot({ path: path.join(shots, 'dialer-ringing.png') });

    // Bob answers with Alt+A, without the mouse
    await b.keyboard.press('Alt+a');
    await cardStatus(b, alice.number, 'active');
    await cardStatus(a, bob.number, 'active');
    expect(await b.locator('[data-ringing="true"]').count()).toBe(0);

    // media flows both ways
    const aBytes = await mediaFlows(a);
    const bBytes = await mediaFlows(b);
    await a.screenshot({ path: path.join(shots, 'dialer-talking.png') });

    // Alice mutes her microphone with Alt+M: her sender's track is off, the button pressed
    await a.keyboard.press('Alt+m');
    await expect.poll(() => localTrackEnabled(a)).toBe(false);
    await a.getByTestId('call-mute-mic').and(a.locator('[aria-pressed="true"]')).waitFor();
    await a.keyboard.press('Alt+m');
    await expect.poll(() => localTrackEnabled(a)).toBe(true);

    // Alice holds with Alt+H: a re-INVITE reaches Bob asking him to only receive
    await a.keyboard.press('Alt+h');
    await cardStatus(a, bob.number, 'paused');
    await expect.poll(() => remoteDirection(b), { timeout: WAIT }).toBe('sendonly');
    // and resumes with Alt+H: sendrecv again, media flows again
    await a.keyboard.press('Alt+h');
    await cardStatus(a, bob.number, 'active');
    await expect.poll(() => remoteDirection(b), { timeout: WAIT }).toBe('sendrecv');
    await mediaFlows(b, bBytes);
    await mediaFlows(a, aBytes);
    // Alt+H twice at once: the resume waits for the hold's answer, then goes (sip.js refused it while the
    // hold's re-INVITE was unanswered, and the call stayed held)
    await a.keyboard.press('Alt+h');
    await a.keyboard.press('Alt+h');
    await cardStatus(a, bob.number, 'active');
    await expect.poll(() => remoteDirection(b), { timeout: WAIT }).toBe('sendrecv');

    // Alice ends with Alt+X: both cards end
    await a.keyboard.press('Alt+x');
    await cardStatus(a, bob.number, 'destroyed');
    await cardStatus(b, alice.number, 'destroyed');
    // destroyed calls leave the list after 5 s
    await a.getByTestId('dialer-no-calls').waitFor();
  });

  it('a caller that is not ours (sipp) rings the concierge with its number; Alt+X turns it down', async () => {
    const a = alice.page;
    const callerPassword = `Sipp${uid()}X1`;
    const caller = await number(callerPassword);
    const sipp = sippCallRefused(sip, caller.number, callerPassword, alice.number);
    await cardStatus(a, caller.number, 'new');
    await button(a).and(a.locator('[data-ringing="true"]')).waitFor();
    await expect(a.getByTestId('call-number').first().textContent()).resolves.toBe(caller.number);
    // the tab's title says who calls (it may be in the background)
    expect(await a.title()).toContain(caller.number);
    await a.keyboard.press('Alt+x');
    const result = await sipp;
    expect(result.ok, result.output).toBe(true);
    await cardStatus(a, caller.number, 'destroyed');
    expect(await a.title()).not.toContain(caller.number);
  });

  it('Shift+Enter with no number makes a video call to the last number; the far video shows', async () => {
    const a = alice.page;
    const b = bob.page;
    await a.getByTestId('dialer-entry').focus();
    expect(await a.getByTestId('dialer-entry').inputValue()).toBe('');
    await a.keyboard.press('Shift+Enter');
    await cardStatus(b, alice.number, 'new');
    await b.keyboard.press('Alt+a');
    await cardStatus(a, bob.number, 'active');
    // each side shows the other's camera (Chromium's fake one)
    for (const p of [a, b])
      await expect
        .poll(
          () =>
            p.evaluate(
              () => document.querySelector<HTMLVideoElement>('[data-testid="call-video"]')?.videoWidth ?? 0,
            ),
          {
            timeout: WAIT,
          },
        )
        .toBeGreaterThan(0);
    await a.screenshot({ path: path.join(shots, 'dialer-video.png') });
    await a.keyboard.press('Alt+x');
    await cardStatus(b, alice.number, 'destroyed');
  });

  it('registers again by itself when the SIP server restarts under it (a transport error retries in 5 s)', async () => {
    const a = alice.page;
    await button(a).and(a.locator('[data-state="registered"]')).waitFor();
    await getCommand('sip.restart').run({ api }, {});
    // the websocket dropped: the error colour, then registered again after the retry
    await button(a).and(a.locator('[data-state="error"]')).waitFor();
    expect(await button(a).getAttribute('class')).toContain('text-red-700');
    await button(a).and(a.locator('[data-state="registered"]')).waitFor();
    await expect
      .poll(
        async () =>
          JSON.stringify(
            await server.server.context.sip.rpc('ul.lookup', ['location', alice.number]).catch(() => null),
          ),
        { timeout: WAIT },
      )
      .toContain(alice.number);
  });

  it('declares its keys in the ? sheet and its actions in the palette', async () => {
    const a = alice.page;
    await a.locator('body').click({ position: { x: 600, y: 400 } });
    await a.keyboard.press('Shift+Slash');
    const sheet = a.getByTestId('shortcut-scope-dialer');
    await sheet.waitFor();
    const text = (await sheet.textContent()) ?? '';
    expect(text).toContain('Open or close the dialer');
    await a.keyboard.press('Escape');
    await a.keyboard.press('Control+k');
    await a.getByTestId('palette-input').waitFor();
    await a.keyboard.type('call a number');
    await a.locator('[cmdk-item][data-key="action:dialer.dial"]').first().waitFor();
    await a.keyboard.press('Escape');
    fs.mkdirSync(shots, { recursive: true });
  });

  it('two tabs of one browser: one registers, the other shows its calls and answers them; the registration passes on when that tab closes', async () => {
    const carol = await concierge('Carol Desk');
    const first = carol.page;
    // the number's live contacts in Kamailio's registrar (a dropped one reads "deleted" or "expired")
    const contacts = async () => {
      const found = (await server.server.context.sip
        .rpc('ul.lookup', ['location', carol.number])
        .catch(() => null)) as { Contacts?: { Contact?: { Expires?: unknown } }[] } | null;
      return (found?.Contacts ?? []).filter((c) => typeof c.Contact?.Expires === 'number').length;
    };
    await button(first).and(first.locator('[data-state="registered"]')).waitFor();
    // a second tab of the same browser (opened from the first, as a concierge opens one)
    const [second] = await Promise.all([
      first.context().waitForEvent('page'),
      first.evaluate((url) => void window.open(url, '_blank'), `${server.url}/home`),
    ]);
    second.setDefaultTimeout(WAIT);
    log.follow(second, 'Carol Desk (second tab)');
    await second.getByTestId('side-menu').waitFor();
    // it shows the first tab's registration and says where it is, without registering itself
    await button(second).and(second.locator('[data-state="registered"]')).waitFor();
    await second.keyboard.press('Alt+p');
    await second.getByTestId('dialer-mirrored').waitFor();
    expect(await first.getByTestId('dialer-mirrored').count()).toBe(0);
    expect(await contacts()).toBe(1);

    // Bob calls Carol: both tabs show the ringing card; the second answers with Alt+A, the first talks
    const b = bob.page;
    await button(b).and(b.locator('[data-state="registered"]')).waitFor();
    // Bob's dialer is open (or opens now): the number field takes the call
    if ((await button(b).getAttribute('aria-pressed')) !== 'true') await button(b).click();
    await b.getByTestId('dialer-entry').focus();
    await b.keyboard.type(carol.number);
    await b.keyboard.press('Enter');
    await cardStatus(first, bob.number, 'new');
    await cardStatus(second, bob.number, 'new');
    await second.keyboard.press('Alt+a');
    await cardStatus(b, carol.number, 'active');
    await cardStatus(second, bob.number, 'active');
    await cardStatus(first, bob.number, 'active');
    await mediaFlows(first);
    // and ends it from the second tab
    await second.keyboard.press('Alt+x');
    await cardStatus(b, carol.number, 'destroyed');
    await cardStatus(second, bob.number, 'destroyed');

    // the first tab closes: the second registers in its place, one contact still
    await first.close();
    await second.getByTestId('dialer-mirrored').waitFor({ state: 'detached' });
    await button(second).and(second.locator('[data-state="registered"]')).waitFor();
    await expect.poll(contacts, { timeout: WAIT }).toBe(1);
    // and rings itself now
    await b.getByTestId('dialer-entry').focus();
    await b.keyboard.type(carol.number);
    await b.keyboard.press('Enter');
    await cardStatus(second, bob.number, 'new');
    await second.keyboard.press('Alt+a');
    await cardStatus(b, carol.number, 'active');
    await mediaFlows(second);
    await b.keyboard.press('Alt+x');
    await cardStatus(second, bob.number, 'destroyed');
  });

  it('shows a refused registration (its number got a new password) with a locked phone', async () => {
    const a = alice.page;
    await getCommand('sip_number.update').run({ api }, { id: alice.id, password: `New${uid()}x7` });
    // the websocket dropped with the restart; the retry's REGISTER carries the old credentials
    await getCommand('sip.restart').run({ api }, {});
    await button(a).and(a.locator('[data-state="invalid_registration"]')).waitFor();
    expect(await button(a).getAttribute('class')).toContain('text-red-700');
    expect(await button(a).getAttribute('aria-label')).toBe('Dialer: Registration refused');
    await expectText(a.getByTestId('dialer-registration'), 'Registration refused');
  });
});
