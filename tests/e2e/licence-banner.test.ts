/**
 * The evaluation licence and the licence warning in the console (issue 15 items 3 and 6): a fresh
 * installation's administrator sees the evaluation marked with its days left, persistently; a user who
 * neither manages nor views licences never sees it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startTestServer, type TestServer } from '../support/server';
import { admin, rootGroup, userWith } from '../support/fixtures';
import { keyboardSignIn } from '../support/console';
import { ensureBuilt, expectText, freshPage, launchChromium, moveTo, webDist } from '../support/web';

let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  ensureBuilt();
  server = await startTestServer({
    webDir: webDist,
    config: { licences: { publicKeys: [], cloudTimeoutMs: 1000, evaluationDays: 30 } },
  });
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('the licence banner', () => {
  it('marks the evaluation licence for a licence manager and stays; a plain user never sees it', async () => {
    const api = await admin(server);
    const plain = await userWith(server, api, {
      permissions: ['users.view'],
      domains: [await rootGroup(api)],
    });
    const { context, page } = await freshPage(browser);
    try {
      await keyboardSignIn(page, server, server.adminLogin, server.adminPassword);
      const banner = page.getByTestId('licence-warning');
      await expectText(banner, /Evaluation licence: .*Days left: (29|30)\./);
      // no automatic timeout: still there after moving between pages
      await moveTo(page, `${server.url}/users`);
      await expectText(page.getByTestId('licence-warning'), /Evaluation licence/);
    } finally {
      await context.close();
    }
    const second = await freshPage(browser);
    try {
      await keyboardSignIn(second.page, server, plain.login, plain.password);
      await second.page.getByTestId('count-users').waitFor();
      expect(await second.page.getByTestId('licence-warning').count()).toBe(0);
    } finally {
      await second.context.close();
    }
  });
});
