/**
 * /devices/search in Chromium, by the keyboard: two simulated devices on 127.0.0.41 and .42 (one port), a
 * range typed and searched with Enter, the progress and the devices arriving live (the page has only the
 * POST's "running" answer until the websocket tells it more), one ticked with Space and added into a group
 * chosen in the group picker; it is then registered, an http device in that group.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { getCommand } from '@lintel/commands';
import { SimulatedDevice } from '@lintel/device-sim';
import { startTestServer, type TestServer } from '../support/server';
import { admin, group, rootGroup, uid } from '../support/fixtures';
import { keyboardSignIn, pickWithKeyboard } from '../support/console';
import { ensureBuilt, expectText, launchChromium, onPage, webDist } from '../support/web';

let server: TestServer;
let browser: Browser;
let port = 0;
const sims: SimulatedDevice[] = [];
const tag = uid().toUpperCase();
const serialOf = (host: string) => `WEBS-${tag}-${host.split('.')[3]}`;

beforeAll(async () => {
  ensureBuilt();
  server = await startTestServer({
    webDir: webDist,
    config: {
      mqtt: {
        port: 0,
        host: '127.0.0.1',
        shared: false,
        requestTimeoutMs: 1000,
        sweepMs: 0,
        searchProbeTimeoutMs: 2000,
      },
    },
  });
  browser = await launchChromium();
  for (const [host, type] of [
    ['127.0.0.41', 'panel'],
    ['127.0.0.42', 'liftcontroller'],
  ] as const) {
    const sim = new SimulatedDevice({
      serial: serialOf(host),
      type,
      name: `Sim ${host}`,
      httpHost: host,
      httpPort: port,
    });
    await sim.start();
    port = sim.httpPort;
    sims.push(sim);
  }
}, 180_000);

afterAll(async () => {
  await Promise.all(sims.map((s) => s.stop().catch(() => undefined)));
  await browser?.close();
  await server?.close();
});

describe('/devices/search', () => {
  it('finds simulated devices live and adds the one ticked into the chosen group', async () => {
    const api = await admin(server);
    const lobby = `Lobby ${tag}`;
    const lobbyId = await group(api, lobby, await rootGroup(api));
    await onPage(browser, 'device-search', async (page) => {
      await keyboardSignIn(page, server, server.adminLogin, server.adminPassword);
      // from the menu, under Device management
      await page.getByTestId('side-menu').getByRole('link', { name: 'Network search' }).click();
      await page.waitForURL((u) => u.pathname === '/devices/search');
      // the first field has the cursor
      await page.getByRole('textbox', { name: 'Start address' }).waitFor();
      await page.keyboard.type('127.0.0.40');
      await page.keyboard.press('Tab');
      await page.keyboard.type('127.0.0.43');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Control+a');
      await page.keyboard.type(String(port));
      await page.keyboard.press('Enter');

      await expectText(page.getByTestId('search-state'), 'Done');
      await expectText(page.getByTestId('search-progress'), 'Probed 4 of 4 (100%), found 2');
      const lift = page.locator('tbody tr', { hasText: serialOf('127.0.0.42') });
      await expectText(
        lift,
        new RegExp(`127\\.0\\.0\\.42:${port}.*Lift controller.*Sim 127\\.0\\.0\\.42.*New`),
      );
      // the request id is in the address: a reload catches up with the same search
      expect(new URL(page.url()).searchParams.get('request')).toBeTruthy();

      await page.getByRole('checkbox', { name: `Add device ${serialOf('127.0.0.42')}` }).focus();
      await page.keyboard.press('Space');
      await page.getByTestId('field-domain_id').focus();
      await pickWithKeyboard(page, lobby, lobby);
      await page.keyboard.press('Tab');
      await expectText(page.locator(':focus'), 'Add selected (1)');
      await page.keyboard.press('Enter');
      await expectText(page.getByTestId('search-added'), 'Devices added: 1');
      await expectText(lift, /Registered$/);

      const list = await getCommand('device.list').run({ api }, { search: serialOf('127.0.0.42') });
      expect(list.data).toMatchObject([
        { type: 'liftcontroller', ip_address: '127.0.0.42', port, protocol: 'http', domain_id: lobbyId },
      ]);

      await page.reload();
      await expectText(page.getByTestId('search-progress'), 'Probed 4 of 4 (100%), found 2');
    });
  }, 120_000);
});
