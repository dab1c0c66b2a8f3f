/**
 * Issue 23 (with issue 22 item 7): interception and waiting calls in the web dialer. A concierge starts
 * intercepting a group from the dialer's interception panel; a door panel of that group that is not ours
 * (Debian's baresip, as in dialer-door.test.ts: ICE, DTLS-SRTP, a sine tone, in a network namespace of its own
 * joined by a veth pair) calls a flat; the call rings the concierge instead; nobody answers, so after the ring
 * time it waits (held by Kamailio); a second concierge, who may intercept but does not, sees it on his dialer
 * (the waiting calls' channel) and joins it with Alt+J — the join MESSAGE, then the held INVITE answered by
 * itself —; media flows from the panel; the first concierge's card shows it answered by another user; the
 * call ends. A join the server refuses — a concierge who may not take waiting calls, a call gone before his
 * join came — says why on the call's card, and the call stays as it was. The interception panel's groups are
 * searched by name from the keyboard. One server, one Kamailio, one browser and one panel for the file.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { getCommand } from '@lintel/commands';
import { loadSipConfig, type SipConfig } from '@lintel/server';
import type { ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin, everyFeatureOn, group, licence, rootGroup, uid } from '../support/fixtures';
import { keyboardSignIn } from '../support/console';
import { ensureBuilt, WAIT, webDist } from '../support/web';
import { freePort } from '../sip/sip-support';
import { conciergeUser, DialerLog, inboundBytes, launchDialerChromium, sipNumber } from '../support/dialer';
import { BaresipPanel } from '../support/baresip-panel';

const INTERCEPT = 'calls.can_intercept_call_like_concierge';
const tag = uid().slice(0, 6);
const panel = new BaresipPanel('icp', 232);
const hostIp = panel.hostIp;

let server: TestServer;
let browser: Browser;
let sip: SipConfig;
let api: ApiClient;
/** the pages' consoles with sip.js's log, and Kamailio's output: printed when a test fails */
const log = new DialerLog();

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
    // LINTEL_SIP_INTERCEPT_RING_S: the intercepting concierge is rung 2 s, then the call waits
    interceptRingS: 2,
    waitingHoldS: 120,
  };
  server = await startTestServer({ webDir: webDist, config: { sip, host: hostIp } });
  await licence(server, everyFeatureOn());
  api = await admin(server);
  browser = await launchDialerChromium([
    '--ignore-certificate-errors',
    `--unsafely-treat-insecure-origin-as-secure=${server.url}`,
  ]);
}, 180_000);

afterEach(({ task }) => {
  if (task.result?.state === 'fail') console.log(log.report(server.server.context.sip.recentOutput()));
});

afterAll(async () => {
  await panel.down();
  await browser?.close();
  await server?.close();
});

/**
 * A concierge of `groupId` (by default one who may intercept), with a number of his, signed in on a page of his
 * own; `prepare` sets up his browser context before the page opens.
 */
async function concierge(
  groupId: number,
  n: string,
  name: string,
  permissions = ['users.view', INTERCEPT],
  prepare?: (context: BrowserContext) => Promise<void>,
): Promise<Page> {
  const password = `Desk${uid()}X1`;
  const numberId = await sipNumber(api, await rootGroup(api), n, password);
  const user = await conciergeUser(api, groupId, numberId, name, permissions);
  const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1440, height: 900 } });
  await context.addInitScript(panel.oneAddressScript());
  await prepare?.(context);
  await log.watch(context);
  const page = await context.newPage();
  log.follow(page, name);
  page.setDefaultTimeout(WAIT);
  await keyboardSignIn(page, server, user.login, user.password);
  await page.locator('[data-testid="dialer-button"][data-state="registered"]').waitFor();
  return page;
}

const card = (page: Page, number: string, more = '') =>
  page.locator(`[data-testid="call-card"][data-number="${number}"]${more}`);

describe('interception and waiting calls in the dialer', { timeout: 240_000 }, () => {
  it('a concierge intercepts a group; its panel’s call waits; another concierge joins it; media flows', async () => {
    const root = await rootGroup(api);
    const building = await group(api, `Building ${uid()}`, root);
    const digits = tag.replace(/\D/g, '').padEnd(3, '7').slice(0, 3);
    // the door panel: a device of the building with a number of its own
    const serial = `IC${uid()}`;
    const device = await getCommand('device.create').run({ api }, {
      name: `Panel ${serial}`,
      type: 'panel',
      serial_number: serial,
      domain_id: building,
    } as never);
    const door = `9${digits}`;
    const doorPassword = `Door${uid()}X1`;
    await getCommand('sip_number.create').run(
      { api },
      {
        number: door,
        name: `Door ${door}`,
        domain_id: root,
        password: doorPassword,
        device_id: device.data.id,
      },
    );
    const flat = `5${digits}`;
    await sipNumber(api, root, flat, `Flat${uid()}X1`);
    panel.start(door, doorPassword, sip.port, { answer: false });
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

    const [ann, ben] = await Promise.all([
      concierge(building, `81${digits}`, 'Ann Desk'),
      concierge(root, `82${digits}`, 'Ben Desk'),
    ]);
    try {
      // Ann starts intercepting the building from the dialer's interception panel (Alt+T starts it)
      await ann.keyboard.press('Alt+p');
      await ann.getByTestId('dialer-tab-interception').click();
      await ann.getByTestId('interception-status').and(ann.locator('[data-active="false"]')).waitFor();
      // starting with no group: the spec's warning, nothing started
      await ann.keyboard.press('Alt+t');
      await ann.getByText('Select at least one group to intercept its calls').first().waitFor();
      await ann.getByTestId(`interception-group-${building}`).check();
      await ann.keyboard.press('Alt+t');
      await ann.getByTestId('interception-status').and(ann.locator('[data-active="true"]')).waitFor();
      // the groups are locked while active
      expect(await ann.getByTestId(`interception-group-${building}`).isDisabled()).toBe(true);

      // the panel calls the flat: the call rings Ann instead
      panel.command('dial', `sip:${flat}@${hostIp}:${sip.port}`);
      await card(ann, door, '[data-status="new"]').waitFor();
      // nobody answers: after the ring time it waits — an awaiting call, still ringing Ann's phone
      await card(ann, door, '[data-type="awaiting"]').waitFor();
      // Ben, who may intercept but does not, sees it waiting, with Join
      await ben.keyboard.press('Alt+p');
      await card(ben, door, '[data-type="awaiting"][data-status="paused"]').waitFor();
      await card(ben, door).getByTestId('call-join').waitFor();
      const listed = await getCommand('call.list').run({ api }, {});
      const waiting = listed.data.find((c) => c.caller === door);
      expect(waiting).toMatchObject({ status: 'waiting', type: 'awaiting', callee: flat });

      // with a call to join, the ? sheet names its key
      await ben.locator('body').click({ position: { x: 600, y: 400 } });
      await ben.keyboard.press('Shift+Slash');
      expect(await ben.getByTestId('shortcut-scope-dialer').textContent()).toContain('Join the waiting call');
      await ben.keyboard.press('Escape');
      await ben.getByTestId('shortcuts-dialog').waitFor({ state: 'detached' });

      // Ben joins from the keyboard: the MESSAGE, the held INVITE answered by itself, media from the panel
      await ben.keyboard.press('Alt+j');
      await card(ben, door, '[data-status="active"]').waitFor();
      await expect.poll(() => inboundBytes(ben), { timeout: WAIT, interval: 100 }).toBeGreaterThan(0);
      const answered = await getCommand('call.list').run({ api }, {});
      expect(answered.data.find((c) => c.id === waiting!.id)).toMatchObject({
        status: 'answered',
        answered_by: expect.stringMatching(new RegExp(`^82${digits}`)),
      });
      // Ann's card: answered by another user, disabled (no buttons), her phone no longer ringing
      await card(ann, door, '[data-answered-elsewhere="true"]').waitFor();
      await expect
        .poll(() => card(ann, door).getByTestId('call-status').textContent())
        .toBe('Answered by another user');
      expect(await card(ann, door).getByTestId('call-accept').count()).toBe(0);
      await ann.locator('[data-testid="dialer-button"]:not([data-ringing])').waitFor();

      // Ben ends it: the panel hears the BYE, the call is gone from the server
      await ben.keyboard.press('Alt+x');
      await card(ben, door, '[data-status="destroyed"]').waitFor();
      await expect
        .poll(() => panel.events.some((e) => e.type === 'CALL_CLOSED'), { timeout: WAIT, interval: 100 })
        .toBe(true);
      await expect
        .poll(
          async () => (await getCommand('call.list').run({ api }, {})).data.some((c) => c.caller === door),
          {
            timeout: WAIT,
            interval: 200,
          },
        )
        .toBe(false);

      // Ann stops intercepting: the groups unlock
      await ann.getByTestId('interception-stop').click();
      await ann.getByTestId('interception-status').and(ann.locator('[data-active="false"]')).waitFor();
      expect(await ann.getByTestId(`interception-group-${building}`).isDisabled()).toBe(false);

      // the new keys are in the ? sheet, the actions in the palette
      await ann.locator('body').click({ position: { x: 600, y: 400 } });
      await ann.keyboard.press('Shift+Slash');
      const sheet = (await ann.getByTestId('shortcut-scope-dialer').textContent()) ?? '';
      expect(sheet).toContain('Start or stop intercepting calls');
      await ann.keyboard.press('Escape');
      await ann.keyboard.press('Control+k');
      await ann.getByTestId('palette-input').waitFor();
      await ann.keyboard.type('intercept');
      await ann.locator('[cmdk-item][data-key="action:dialer.intercept"]').first().waitFor();
      await ann.locator('[cmdk-item][data-key="action:dialer.tab_interception"]').first().waitFor();
      await ann.keyboard.press('Escape');
    } catch (err) {
      throw new Error(
        `${(err as Error).message}\npanel: ${panel.log}\nevents: ${JSON.stringify(panel.events)}\nserver: ${server
          .logs()
          .split('\n')
          .slice(-30)
          .join('\n')}`,
      );
    } finally {
      await ann.context().close();
      await ben.context().close();
    }
  });

  it('a refused join says why on the card and the call stays as it was; the groups are searched by name', async () => {
    const root = await rootGroup(api);
    const mark = uid().slice(0, 6);
    const tower = await group(api, `Tower ${mark}`, root);
    const annex = await group(api, `Annex ${mark}`, root);
    const digits2 = String(100 + Math.floor(Math.random() * 900));
    const serial = `IC${uid()}`;
    const device = await getCommand('device.create').run({ api }, {
      name: `Panel ${serial}`,
      type: 'panel',
      serial_number: serial,
      domain_id: tower,
    } as never);
    const door = `7${digits2}`;
    const doorPassword = `Door${uid()}X1`;
    await getCommand('sip_number.create').run(
      { api },
      {
        number: door,
        name: `Door ${door}`,
        domain_id: root,
        password: doorPassword,
        device_id: device.data.id,
      },
    );
    await panel.stop();
    panel.start(door, doorPassword, sip.port, { answer: false });
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

    // Cleo's number is the flat the panel calls; she sees its calls but may not take waiting calls. Her
    // console's socket to Lintel can be held (what it sends her dropped), as when an update is on its way
    const flat = `6${digits2}`;
    let held = false;
    const lintelPort = new URL(server.url).port;
    const holdable = async (context: BrowserContext) => {
      await context.routeWebSocket(
        (url) => url.port === lintelPort,
        (ws) => {
          const lintel = ws.connectToServer();
          ws.onMessage((m) => lintel.send(m));
          lintel.onMessage((m) => {
            if (!held) ws.send(m);
          });
        },
      );
    };
    const [dora, cleo] = await Promise.all([
      concierge(root, `84${digits2}`, 'Dora Desk'),
      concierge(root, flat, 'Cleo Desk', ['users.view', 'calls.concierge_receive'], holdable),
    ]);
    try {
      // Dora reaches the interception panel from the palette: the focus lands in its group search
      await dora.keyboard.press('Control+k');
      await dora.getByTestId('palette-input').waitFor();
      await dora.keyboard.type('Dialer: call interception');
      await dora
        .locator('[cmdk-item][data-selected="true"][data-key="action:dialer.tab_interception"]')
        .waitFor();
      await dora.keyboard.press('Enter');
      await expect
        .poll(() => dora.evaluate(() => document.activeElement?.getAttribute('data-testid')))
        .toBe('interception-search');
      await dora.getByTestId(`interception-group-${annex}`).waitFor();
      // any case: the tower alone is left
      await dora.keyboard.type(`tower ${mark}`);
      await dora.getByTestId(`interception-group-${annex}`).waitFor({ state: 'detached' });
      expect(await dora.getByTestId(`interception-group-${tower}`).isVisible()).toBe(true);
      // a name no group has
      await dora.keyboard.type('zz');
      await expect
        .poll(() => dora.getByTestId('interception-no-match').textContent())
        .toBe('No group has that name');
      expect(await dora.locator('[data-testid^="interception-group-"]').count()).toBe(0);
      await dora.keyboard.press('Backspace');
      await dora.keyboard.press('Backspace');
      // Tab reaches the tower's box, Space ticks it, Alt+T starts
      await dora.keyboard.press('Tab');
      await expect
        .poll(() => dora.evaluate(() => document.activeElement?.getAttribute('data-testid')))
        .toBe(`interception-group-${tower}`);
      await dora.keyboard.press('Space');
      expect(await dora.getByTestId(`interception-group-${tower}`).isChecked()).toBe(true);
      await dora.keyboard.press('Alt+t');
      await dora.getByTestId('interception-status').and(dora.locator('[data-active="true"]')).waitFor();
      // the search still filters the locked groups
      expect(await dora.getByTestId('interception-search').isEnabled()).toBe(true);

      // the panel calls Cleo's flat: Dora is rung, then it waits; Cleo sees it waiting, with Join
      panel.command('dial', `sip:${flat}@${hostIp}:${sip.port}`);
      await card(dora, door, '[data-status="new"]').waitFor();
      await cleo.keyboard.press('Alt+p');
      const waitingCard = '[data-type="awaiting"][data-status="paused"]';
      await card(cleo, door, waitingCard).waitFor();
      await card(cleo, door).getByTestId('call-join').waitFor();

      // Cleo may not take it: Alt+J, the join refused (403), said on the card; the call stays as it was
      await cleo.locator('body').click({ position: { x: 600, y: 400 } });
      await cleo.keyboard.press('Alt+j');
      await expect
        .poll(() => card(cleo, door).getByTestId('call-refusal').textContent())
        .toBe('You may not take waiting calls');
      await card(cleo, door, waitingCard).getByTestId('call-join').waitFor();
      expect(await cleo.locator('[data-testid="call-card"][data-status="active"]').count()).toBe(0);
      const waiting = (await getCommand('call.list').run({ api }, {})).data.find((c) => c.caller === door);
      expect(waiting).toMatchObject({ status: 'waiting', type: 'awaiting', callee: flat });
      expect(waiting!.answered_by).toBeNull();

      // the call goes while what Lintel tells Cleo is held back: her card still shows it waiting
      held = true;
      panel.command('hangup', '');
      await expect
        .poll(
          async () => (await getCommand('call.list').run({ api }, {})).data.some((c) => c.caller === door),
          { timeout: WAIT, interval: 200 },
        )
        .toBe(false);
      await card(dora, door, '[data-status="destroyed"]').waitFor();
      await card(cleo, door, waitingCard).waitFor();
      // her join finds it gone (404): said on the card, which stays as it was
      await cleo.keyboard.press('Alt+j');
      await expect
        .poll(() => card(cleo, door).getByTestId('call-refusal').textContent())
        .toBe('This waiting call has ended or was taken by another user');
      await card(cleo, door, waitingCard).getByTestId('call-join').waitFor();
      expect(await cleo.locator('[data-testid="call-card"][data-status="active"]').count()).toBe(0);

      await dora.getByTestId('interception-stop').click();
      await dora.getByTestId('interception-status').and(dora.locator('[data-active="false"]')).waitFor();
    } catch (err) {
      throw new Error(
        `${(err as Error).message}\npanel: ${panel.log}\nevents: ${JSON.stringify(panel.events)}\nserver: ${server
          .logs()
          .split('\n')
          .slice(-30)
          .join('\n')}`,
      );
    } finally {
      held = false;
      await dora.context().close();
      await cleo.context().close();
    }
  });
});
