/**
 * The licence part of the group form (issue 15 item 4): an administrator sets a group's maximum of users
 * from the form; a value under what the group already uses is refused with the catalogue's message, the
 * field marked and the form kept open; a value it holds is saved.
 */
import { describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { getCommand } from '@lintel/commands';
import { type TestServer } from '../support/server';
import { admin, group, rootGroup, uid, userWith } from '../support/fixtures';
import { keyboardSignIn } from '../support/console';
import { expectText, onPage, waitForPath, consoleWorld } from '../support/web';

let server: TestServer;
let browser: Browser;
consoleWorld({}, (w) => ({ server, browser } = w));

describe("the group form's licence part", () => {
  it('refuses a maximum under the used count with the catalogue message, and saves one it holds', async () => {
    const api = await admin(server);
    const name = `Block ${uid()}`;
    const id = await group(api, name, await rootGroup(api));
    for (let i = 0; i < 2; i++) await userWith(server, api, { permissions: [], domains: [id] });

    await onPage(browser, 'group-licences', async (page) => {
      await keyboardSignIn(page, server, server.adminLogin, server.adminPassword, `/groups/${id}/edit`);
      // the maximums are a closed part of the form: open it, type one under the two users the group holds
      await page.getByTestId('fieldset-license_limits').locator('summary').click();
      const users = page.getByTestId('field-license_limits.users');
      await users.fill('1');
      await page.getByTestId('form-approve').click();
      await expectText(
        page.getByTestId('form-error'),
        "Used counts are greater than the group's maximum of users: used 2, max 1",
      );
      await expectText(
        page.getByTestId('error-license_limits.users'),
        "Used counts are greater than the group's maximum of users: used 2, max 1",
      );
      expect(await users.getAttribute('aria-invalid')).toBe('true');
      expect(new URL(page.url()).pathname).toBe(`/groups/${id}/edit`);

      // two it holds: saved, back to the list
      await users.fill('2');
      await page.getByTestId('form-approve').click();
      await waitForPath(page, '/groups');
    });
    expect((await getCommand('group.get').run({ api }, { id })).license_limits.users).toBe(2);
  }, 120_000);
});
