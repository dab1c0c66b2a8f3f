/**
 * The MQTT broker tab of /general-settings in Chromium (issue 24 item 2): the embedded broker's status, a
 * restart from the tab (seen in the broker's own count), and its TLS certificate uploaded as two PEM files —
 * the tab then shows what the certificate says and that a key is stored, never the key; the broker serves it.
 */
import { describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { getCommand } from '@lintel/commands';
import type { TestServer } from '../support/server';
import { admin } from '../support/fixtures';
import { keyboardSignIn } from '../support/console';
import { selfSigned } from '../support/certificates';
import { WAIT, consoleWorld, onPage } from '../support/web';

let server: TestServer;
let browser: Browser;
consoleWorld(
  {
    config: {
      mqtt: { port: 0, tlsPort: 0, host: '127.0.0.1', shared: false, requestTimeoutMs: 5_000, sweepMs: 0 },
    },
  },
  (w) => ({ server, browser } = w),
);

describe('the MQTT broker tab', () => {
  it('shows the broker, restarts it, and takes its certificate and key, showing the certificate only', async () => {
    const api = await admin(server);
    const pem = selfSigned('console-broker');
    await onPage(browser, 'broker-tab', async (page) => {
      await keyboardSignIn(page, server, server.adminLogin, server.adminPassword, `/general-settings`);
      await page.getByTestId('settings-tab-broker').click();
      await page.getByTestId('broker-state').getByText('Up', { exact: false }).waitFor({ timeout: WAIT });
      await page.getByTestId('broker-version').getByText('aedes', { exact: false }).waitFor();
      await page.getByTestId('broker-no-certificate').waitFor();

      await page.getByRole('button', { name: 'Restart the broker' }).click();
      await page.getByTestId('broker-restarts').getByText('1', { exact: true }).waitFor({ timeout: WAIT });
      expect((await getCommand('broker.status').run({ api }, {})).restarts).toBe(1);

      await page.getByTestId('broker-certificate-file').setInputFiles({
        name: 'broker.pem',
        mimeType: 'application/x-pem-file',
        buffer: Buffer.from(pem.cert),
      });
      await page.getByTestId('broker-key-file').setInputFiles({
        name: 'broker.key',
        mimeType: 'application/x-pem-file',
        buffer: Buffer.from(pem.key),
      });
      await page.getByRole('button', { name: 'Upload', exact: true }).click();
      await page
        .getByTestId('broker-subject')
        .getByText('console-broker', { exact: false })
        .waitFor({ timeout: WAIT });
      await page.getByText('A private key is stored', { exact: false }).waitFor();
      const status = await getCommand('broker.status').run({ api }, {});
      expect(status.listeners.map((l) => l.protocol)).toEqual(['mqtt', 'mqtts']);
      expect(await page.getByTestId('broker-fingerprint').textContent()).toBe(
        status.certificate!.fingerprint,
      );
      expect(await page.content()).not.toContain('PRIVATE KEY');
    });
  }, 240_000);
});
