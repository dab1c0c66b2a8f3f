/**
 * /backups in Chromium (issue 24 item 1): the menu opens it, Make starts a backup that turns Ready without a
 * reload, Download saves its zip, Apply (after the confirmation) restores a user deleted since, Delete removes it.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { getCommand } from '@lintel/commands';
import { backupsDir } from '../../apps/server/src/backup/service';
import type { TestServer } from '../support/server';
import { admin, rootGroup, userWith } from '../support/fixtures';
import { keyboardSignIn } from '../support/console';
import { WAIT, consoleWorld, onPage, waitForPath } from '../support/web';

let server: TestServer;
let browser: Browser;
consoleWorld({}, (w) => ({ server, browser } = w));

describe('/backups', () => {
  it('makes, downloads, applies and deletes a backup', async () => {
    const api = await admin(server);
    const victim = await userWith(server, api, {
      permissions: ['users.view'],
      domains: [await rootGroup(api)],
      name: 'Restored person',
    });
    await onPage(browser, 'backups-page', async (page) => {
      await keyboardSignIn(page, server, server.adminLogin, server.adminPassword);
      await page.getByTestId('side-menu').getByRole('link', { name: 'Backups', exact: true }).click();
      await waitForPath(page, '/backups');
      await page.getByRole('textbox', { name: 'Name' }).fill('Before the change');
      await page.getByRole('button', { name: 'Make a backup' }).click();
      const row = page.getByTestId('backup-row').filter({ hasText: 'Before the change' });
      await row.getByText('Ready').waitFor({ timeout: WAIT * 2 });

      const [download] = await Promise.all([
        page.waitForEvent('download'),
        row.getByRole('button', { name: 'Download' }).click(),
      ]);
      const file = await download.path();
      expect(fs.readFileSync(file).subarray(0, 2).toString()).toBe('PK');

      await getCommand('user.delete').run({ api }, { id: victim.id });
      await row.getByRole('button', { name: 'Apply' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Apply' }).click();
      await page.getByText(/Backup applied/).waitFor();
      expect((await getCommand('user.get').run({ api }, { id: victim.id })).name).toBe('Restored person');

      await row.getByRole('button', { name: 'Delete' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
      await expect.poll(() => row.count(), { timeout: WAIT, interval: 100 }).toBe(0);
    });
    fs.rmSync(backupsDir(server.server.context.config), { recursive: true, force: true });
  }, 240_000);
});
