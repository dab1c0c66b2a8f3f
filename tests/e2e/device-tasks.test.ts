/**
 * /devices/tasks in Chromium: a restart of an offline device is listed as waiting, with its device; Stop
 * stops it, Restart queues it again; the state filter narrows the list.
 */
import { describe, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { getCommand } from '@lintel/commands';
import { type TestServer } from '../support/server';
import { admin, rootGroup, uid } from '../support/fixtures';
import { keyboardSignIn } from '../support/console';
import { expectText, freshPage, consoleWorld } from '../support/web';

let server: TestServer;
let browser: Browser;
consoleWorld({}, (w) => ({ server, browser } = w));

describe('/devices/tasks', () => {
  it('lists a waiting task, stops it and queues it again', async () => {
    const api = await admin(server);
    const serial = `WEB-${uid()}`;
    const { data } = await getCommand('device.create').run(
      { api },
      { name: `Gate ${serial}`, type: 'panel', serial_number: serial, domain_id: await rootGroup(api) },
    );
    await getCommand('device.restart').run({ api }, { id: data.id });
    const { context, page } = await freshPage(browser);
    try {
      await keyboardSignIn(page, server, server.adminLogin, server.adminPassword);
      await page.goto(`${server.url}/devices/tasks`);
      const row = page.locator('tbody tr', { hasText: `Gate ${serial}` });
      await expectText(row, /Restart\s*Waiting/);
      await row.getByRole('button', { name: 'Stop' }).click();
      await expectText(row, /Stopped/);
      await page.locator('select').selectOption('stopped');
      await expectText(page.locator('tbody'), new RegExp(`Gate ${serial}`));
      await row.getByRole('button', { name: 'Restart' }).click();
      await expectText(page.locator('tbody'), /^$/);
      await page.locator('select').selectOption('');
      await expectText(row, /Waiting/);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('"Init device" on the edit page queues the init and the entities tasks', async () => {
    const api = await admin(server);
    const serial = `WEB-${uid()}`;
    const { data } = await getCommand('device.create').run(
      { api },
      { name: `Door ${serial}`, type: 'panel', serial_number: serial, domain_id: await rootGroup(api) },
    );
    const { context, page } = await freshPage(browser);
    try {
      await keyboardSignIn(page, server, server.adminLogin, server.adminPassword);
      await page.goto(`${server.url}/devices/${data.id}/edit`);
      await page.getByTestId('device-init').click();
      await expectText(page.locator('body'), /configuration is queued/);
      await page.goto(`${server.url}/devices/tasks`);
      const rows = page.locator('tbody tr', { hasText: `Door ${serial}` });
      await expectText(rows.nth(0), /Identifiers and schedules\s*Waiting/);
      await expectText(rows.nth(1), /Initialise\s*Waiting/);
    } finally {
      await context.close();
    }
  }, 120_000);
});
