/**
 * The console over the websocket in Chromium (spec part 1 §4 "Real-time"): when the signed-in user's role
 * changes, or the user is given another role, the profile is read again and the menu and the palette follow
 * at once, without a reload of the page.
 */
import { describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { getCommand } from '@lintel/commands';
import { type TestServer } from '../support/server';
import { admin, rootGroup, userWith } from '../support/fixtures';
import { keyboardSignIn } from '../support/console';
import { freshPage, consoleWorld } from '../support/web';

let server: TestServer;
let browser: Browser;
consoleWorld({}, (w) => ({ server, browser } = w));

const menu = async (page: Page) =>
  (await page.getByTestId('side-menu').locator('a').allTextContents()).map((s) => s.trim());

describe('a role changed while the console is open', () => {
  it('updates the menu without a reload, for a change of the role and for another role given', async () => {
    const api = await admin(server);
    const clerk = await userWith(server, api, {
      permissions: ['users.view'],
      domains: [await rootGroup(api)],
      name: 'Clerk Live',
    });
    const { context, page } = await freshPage(browser);
    try {
      await keyboardSignIn(page, server, clerk.login, clerk.password);
      await expect.poll(() => menu(page)).toEqual(['Home', 'Notifications', 'Users']);
      // the console listens (its socket holds both topics on the server) before anything changes
      const sockets = server.server.context.sockets!;
      await expect
        .poll(() => [
          sockets.subscribers('private-app-changes'),
          sockets.subscribers(`private-users.${clerk.id}`),
        ])
        .toEqual([1, 1]);
      // a mark on the page: a reload would lose it
      await page.evaluate(() => ((window as unknown as { lintelMark: number }).lintelMark = 42));

      // the administrator lets the clerk's role view roles
      await getCommand('role.update').run(
        { api },
        { id: clerk.roleId, permissions: ['users.view', 'roles.view'] },
      );
      await expect.poll(() => menu(page)).toEqual(['Home', 'Notifications', 'Users', 'Roles']);

      // then gives the clerk a role that sees only the audit log
      const auditor = await getCommand('role.create').run(
        { api },
        { name: 'Auditor live', permissions: ['audit.view'], available_roles: [] },
      );
      await getCommand('user.update').run({ api }, { id: clerk.id, role: auditor.data.id });
      await expect.poll(() => menu(page)).toEqual(['Home', 'Notifications', 'Audit log']);

      expect(await page.evaluate(() => (window as unknown as { lintelMark?: number }).lintelMark)).toBe(42);
    } finally {
      await context.close();
    }
  }, 90_000);
});
