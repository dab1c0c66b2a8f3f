/**
 * Issue 22: without a SIP server the telephony screens say so, and the rest works. The test server runs
 * without telephony (`LINTEL_SIP=off`, as every test server unless it asks for Kamailio): /virtual-numbers
 * shows why above the list, and the list itself answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { getCommand } from '@lintel/commands';
import { startTestServer, type TestServer } from '../support/server';
import { admin, everyFeatureOn, licence, rootGroup } from '../support/fixtures';
import { keyboardSignIn } from '../support/console';
import { ensureBuilt, expectText, freshPage, launchChromium, webDist } from '../support/web';

let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  ensureBuilt();
  server = await startTestServer({ webDir: webDist });
  await licence(server, everyFeatureOn());
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('telephony down', () => {
  it('/virtual-numbers says why above the list of numbers', { timeout: 120_000 }, async () => {
    const api = await admin(server);
    await getCommand('sip_number.create').run(
      { api },
      { number: '301', name: 'Reception', domain_id: await rootGroup(api) },
    );
    const { context, page } = await freshPage(browser);
    try {
      await keyboardSignIn(page, server, server.adminLogin, server.adminPassword, `/virtual-numbers`);
      await expectText(page.getByTestId('sip-status'), 'Telephony is not configured on this server');
      await page.getByText('Reception', { exact: true }).waitFor();
      expect(await page.getByText('301', { exact: true }).count()).toBe(1);
    } finally {
      await context.close();
    }
  });
});
