/**
 * The integrations' pages in Chromium (issue 24 item 5; spec part 1 routes /integration/add and
 * /integration/{id}/edit): an Axxon One server added from the generated form, seen through the API, and its
 * edit page showing the password's placeholder, never the password.
 */
import { describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { getCommand } from '@lintel/commands';
import { DUMMY_PASSWORD } from '@lintel/core';
import type { TestServer } from '../support/server';
import { admin, uid } from '../support/fixtures';
import { keyboardSignIn } from '../support/console';
import { alertWatch, consoleWorld, moveTo, onPage, WAIT, waitForPath } from '../support/web';

let server: TestServer;
let browser: Browser;
consoleWorld({}, (w) => ({ server, browser } = w));

describe('integrations pages', () => {
  it('adds an Axxon One integration and edits it without showing its password', async () => {
    const api = await admin(server);
    const name = `VMS ${uid()}`;
    const password = `axxon-${uid()}-secret`;
    await onPage(browser, 'integrations-page', async (page) => {
      await keyboardSignIn(page, server, server.adminLogin, server.adminPassword, `/integration/add`);
      await page.getByTestId('field-name').fill(name);
      await page.getByTestId('field-axxon_one_settings.server_url').fill('https://vms.example.test:8443/api');
      await page.getByTestId('field-axxon_one_settings.login').fill('root');
      await page.getByTestId('field-axxon_one_settings.password').fill(password);
      const created = alertWatch(page, 'success', /The integration is created/);
      await page.keyboard.press('Control+Enter');
      await waitForPath(page, '/integration');
      await created();
      const row = (await getCommand('integration.list').run({ api }, {})).data.find((i) => i.name === name)!;
      expect(row.axxon_one_settings).toMatchObject({
        server_url: 'https://vms.example.test:8443/api',
        login: 'root',
        password: DUMMY_PASSWORD,
      });
      await moveTo(page, `${server.url}/integration/${row.id}/edit`);
      await page.getByTestId('field-name').waitFor({ timeout: WAIT });
      await page
        .getByTestId('fieldset-axxon_one_settings')
        .getByText('Axxon One server', { exact: true })
        .first()
        .click();
      const field = page.locator('input[name="axxon_one_settings.password"]');
      await field.waitFor({ timeout: WAIT });
      expect(await field.inputValue()).toBe(DUMMY_PASSWORD);
      expect(await page.content()).not.toContain(password);
    });
  });
});
