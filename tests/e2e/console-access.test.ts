/**
 * Gates in the console (issue 4, spec part 1 §2.3): a user whose role lacks a permission sees neither the
 * menu item nor the palette command, and opening the page's address directly shows the catalogue error.
 */
import { describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { registry } from '@lintel/commands';
import { type TestServer } from '../support/server';
import { admin, rootGroup, userWith } from '../support/fixtures';
import { keyboardSignIn } from '../support/console';
import { expectText, freshPage, consoleWorld } from '../support/web';

let server: TestServer;
let browser: Browser;
consoleWorld({}, (w) => ({ server, browser } = w));

describe('what a limited role sees', () => {
  it('hides menu items and commands it may not use, and answers their addresses with the catalogue error', async () => {
    const api = await admin(server);
    const permissions = ['users.view', 'users.create'];
    const clerk = await userWith(server, api, {
      permissions,
      domains: [await rootGroup(api)],
      name: 'Clerk Limited',
    });
    const { context, page } = await freshPage(browser);
    try {
      await keyboardSignIn(page, server, clerk.login, clerk.password);

      // the menu: Users only (no Roles, Groups, Audit log)
      const menu = await page.getByTestId('side-menu').locator('a').allTextContents();
      expect(menu.map((s) => s.trim())).toEqual(['Home', 'Notifications', 'Users']);
      // the dashboard counts only what the role may list
      await page.getByTestId('count-users').waitFor();
      expect(await page.getByTestId('count-roles').count()).toBe(0);

      // the palette: exactly the commands the role passes, and the pages it may open
      await page.keyboard.press('Control+k');
      await page.getByTestId('palette-input').waitFor();
      const keys = await page
        .getByTestId('palette-item')
        .evaluateAll((els) => els.map((e) => e.getAttribute('data-key')));
      const shownCommands = keys
        .filter((k) => k?.startsWith('command:'))
        .map((k) => k!.slice('command:'.length))
        .sort();
      const expected = [...registry.values()]
        .filter((c) => !c.hidden && !c.developer && c.access !== 'public')
        .filter(
          (c) => !c.gates.anyPermission?.length || c.gates.anyPermission.some((p) => permissions.includes(p)),
        )
        .filter((c) => !c.gates.licence?.length)
        .map((c) => c.id)
        .sort();
      expect(shownCommands).toEqual(expected);
      expect(shownCommands).toContain('user.create');
      expect(shownCommands).not.toContain('role.create');
      expect(shownCommands).not.toContain('audit_event.list');
      expect(keys.filter((k) => k?.startsWith('page:'))).toEqual([
        'page:/home',
        'page:/notifications',
        'page:/users',
        'page:/profile',
      ]);
      // typed, "create role" finds nothing to run
      await page.keyboard.type('create role');
      await expect
        .poll(() =>
          page.getByTestId('palette-item').evaluateAll((els) => els.map((e) => e.getAttribute('data-key'))),
        )
        .not.toContain('command:role.create');
      await page.keyboard.press('Escape');

      // the addresses themselves: the catalogue's "method or action is prohibited", not a blank page
      for (const path of ['/roles', '/groups', '/audit-events', '/roles/add', '/groups/1/edit']) {
        await page.goto(`${server.url}${path}`);
        await expectText(
          page.getByTestId('forbidden').locator('div').first(),
          'Method or action is prohibited',
        );
        expect(await page.getByTestId('forbidden').textContent()).toContain('Needs one of these permissions');
      }
      // …while the allowed page opens
      await page.goto(`${server.url}/users`);
      await expectText(page.getByTestId('page-title'), 'Users');
      expect(await page.getByTestId('forbidden').count()).toBe(0);
    } finally {
      await context.close();
    }
  }, 90_000);
});
