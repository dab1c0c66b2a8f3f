/**
 * The SIP settings, SIP nodes and push server tabs of /general-settings in Chromium (issue 24 item 2, issue 22
 * items 1 and 10), against a real Kamailio of the template: a realm refused in the form names its field; a
 * new realm and a TURN server saved from the tab restart the SIP server, and the credential is shown as the
 * placeholder only; the SIP nodes tab shows the node with its ports and Kamailio's figures, restarts it and
 * shows the SIP reboot's phases as the notifications come; the push tab saves a relay and shows it ready.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { getCommand, PASSWORD_PLACEHOLDER } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import type { SipConfig } from '@lintel/server';
import { startTestServer, type TestServer } from '../support/server';
import { admin, everyFeatureOn, licence } from '../support/fixtures';
import { keyboardSignIn } from '../support/console';
import { ensureBuilt, launchChromium, onPage, WAIT, webDist } from '../support/web';
import { sipTestConfig } from '../sip/sip-support';

let server: TestServer;
let browser: Browser;
let sip: SipConfig;
let api: ApiClient;

beforeAll(async () => {
  ensureBuilt();
  sip = await sipTestConfig();
  server = await startTestServer({ webDir: webDist, config: { sip } });
  await licence(server, everyFeatureOn());
  api = await admin(server);
  browser = await launchChromium();
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('the SIP and push tabs', () => {
  it('save the SIP settings, show and restart the SIP node, and save the push server', async () => {
    const secret = 'turn-console-secret';
    await onPage(browser, 'sip-settings-tabs', async (page) => {
      await keyboardSignIn(page, server, server.adminLogin, server.adminPassword, `/general-settings`);

      // SIP settings: the installation's realm; a realm that cannot be one is refused naming the field
      await page.getByTestId('settings-tab-sip').click();
      const realm = page.getByTestId('field-sip-realm');
      await realm.waitFor({ timeout: WAIT });
      expect(await realm.inputValue()).toBe('lintel');
      await page
        .getByTestId('sip-mode')
        .getByText('the Kamailio this server runs', { exact: false })
        .waitFor();
      await realm.fill('towers example');
      await page.getByRole('button', { name: 'Change the SIP settings' }).click();
      await page.getByTestId('error-sip-realm').waitFor({ timeout: WAIT });

      await realm.fill('towers.example');
      await page.getByRole('button', { name: 'Add a server' }).click();
      await page.getByTestId('field-sip-ice-0-urls').fill('turn:turn.towers.example:3478');
      await page.getByTestId('field-sip-ice-0-username').fill('desk');
      await page.getByTestId('field-sip-ice-0-credential').fill(secret);
      await page.getByTestId('field-sip-ring_timeout_s').fill('45');
      await page.getByRole('button', { name: 'Change the SIP settings' }).click();
      await page
        .getByText('the SIP server was restarted with the new settings', { exact: false })
        .waitFor({ timeout: WAIT });
      const saved = await getCommand('settings.sip_get').run({ api }, {});
      expect(saved.data).toMatchObject({
        realm: 'towers.example',
        ring_timeout_s: 45,
        ice_servers: [
          { urls: ['turn:turn.towers.example:3478'], username: 'desk', credential: PASSWORD_PLACEHOLDER },
        ],
      });
      expect((await getCommand('sip.status').run({ api }, {})).listen?.realm).toBe('towers.example');
      await page.reload();
      await page.getByTestId('settings-tab-sip').click();
      await page.getByTestId('field-sip-ice-0-credential').waitFor({ timeout: WAIT });
      expect(await page.getByTestId('field-sip-ice-0-credential').inputValue()).toBe(PASSWORD_PLACEHOLDER);
      expect(await page.content()).not.toContain(secret);

      // SIP nodes: the local Kamailio with its ports and figures; a restart, its phases told live
      await page.getByTestId('settings-tab-sip_nodes').click();
      await page.getByTestId('sip-node-state').getByText('Up', { exact: true }).waitFor({ timeout: WAIT });
      expect(await page.getByTestId('sip-node-ports').textContent()).toContain(String(sip.port));
      for (const column of ['State', 'Uptime', 'Registered contacts', 'Active calls'])
        await page.getByRole('columnheader', { name: column, exact: true }).waitFor();
      await page.getByTestId('sip-node-contacts').getByText('0', { exact: true }).waitFor({ timeout: WAIT });
      const pid = (await getCommand('sip.status').run({ api }, {})).instances[0]!.pid;
      await page.getByRole('button', { name: 'Restart the SIP server' }).click();
      await page
        .locator('[data-testid="sip-reboot-phase"][data-phase="completed"]')
        .waitFor({ timeout: WAIT });
      await page.getByTestId('sip-node-state').getByText('Up', { exact: true }).waitFor({ timeout: WAIT });
      expect((await getCommand('sip.status').run({ api }, {})).instances[0]!.pid).not.toBe(pid);

      // the push server: a relay with its key, ready; the key never shown again
      await page.getByTestId('settings-tab-push').click();
      await page.getByTestId('push-provider').selectOption('gateway');
      await page.getByTestId('field-push-endpoint_url').fill('https://push.towers.example/v1');
      await page.getByTestId('push-api_key').fill('relay-console-key');
      await page.getByRole('button', { name: 'Change the push server settings' }).click();
      await page
        .getByTestId('push-state')
        .getByText('sent through this provider', { exact: false })
        .waitFor({ timeout: WAIT });
      const push = await getCommand('settings.push_get').run({ api }, {});
      expect(push).toMatchObject({
        ready: true,
        data: { provider: 'gateway', api_key: PASSWORD_PLACEHOLDER },
      });
      expect(await page.getByTestId('push-api_key').inputValue()).toBe(PASSWORD_PLACEHOLDER);
    });
  }, 240_000);
});
