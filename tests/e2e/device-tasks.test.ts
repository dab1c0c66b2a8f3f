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
import { consoleWorld, expectText, freshPage, moveTo } from '../support/web';

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
    const task = (await getCommand('device.tasks').run({ api }, { device_id: data.id })).data[0]!;
    // issue 25, item 2: times in the browser's zone (the profile has none) and the user's format, as on
    // every other page (the page showed the US format; profiles said +02:00)
    const { context, page } = await freshPage(browser, { timezoneId: 'Asia/Tokyo' });
    try {
      await keyboardSignIn(page, server, server.adminLogin, server.adminPassword, `/devices/tasks`);
      // the generic table (issue 25 item 7): rows of the grid, cells in the columns' order
      const row = page.locator('[role="row"]', { hasText: `Gate ${serial}` });
      await expectText(row, /Restart\s*Waiting/);
      const tokyo = new Date(new Date(task.updated_at).getTime() + 9 * 3600_000);
      const p = (n: number) => String(n).padStart(2, '0');
      const shown = `${p(tokyo.getUTCDate())}.${p(tokyo.getUTCMonth() + 1)}.${tokyo.getUTCFullYear()} ${p(tokyo.getUTCHours())}:${p(tokyo.getUTCMinutes())}:${p(tokyo.getUTCSeconds())}`;
      const headers = (await page.locator('[role="columnheader"]').allTextContents()).map((h) => h.trim());
      await expectText(
        row.locator('[role="gridcell"]').nth(headers.findIndex((h) => h.startsWith('Updated'))),
        shown,
      );
      await row.getByRole('button', { name: 'Stop' }).click();
      await expectText(row, /Stopped/);
      // the state filter is the table's, in the address as the home's link writes it; a move of the router's to
      // the page it is on makes the table again from the address (it kept its view while the address said another)
      await moveTo(page, `${server.url}/devices/tasks?where=${encodeURIComponent('state equals stopped')}`);
      await expectText(page.locator('[role="row"]', { hasText: `Gate ${serial}` }), /Stopped/);
      await row.getByRole('button', { name: 'Restart' }).click();
      await page.getByTestId('table-empty').waitFor();
      await moveTo(page, `${server.url}/devices/tasks`);
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
      await keyboardSignIn(page, server, server.adminLogin, server.adminPassword, `/devices/${data.id}/edit`);
      await page.getByTestId('device-init').click();
      await expectText(page.locator('body'), /configuration is queued/);
      await moveTo(page, `${server.url}/devices/tasks`);
      const rows = page.locator('[role="row"]', { hasText: `Door ${serial}` });
      await expectText(rows.nth(0), /Identifiers and schedules\s*Waiting/);
      await expectText(rows.nth(1), /Initialise\s*Waiting/);
    } finally {
      await context.close();
    }
  }, 120_000);
});
