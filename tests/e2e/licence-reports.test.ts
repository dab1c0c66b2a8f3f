/**
 * /reports/licenses in Chromium (issue 15 item 7): bars of usage per seeded group and the timeline of their
 * licence periods; the filters applied from the keyboard narrow the bars.
 */
import { describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { type TestServer } from '../support/server';
import { admin, group, rootGroup, uid, userWith } from '../support/fixtures';
import { keyboardSignIn } from '../support/console';
import { onPage, consoleWorld } from '../support/web';

let server: TestServer;
let browser: Browser;
consoleWorld({}, (w) => ({ server, browser } = w));

describe('/reports/licenses', () => {
  it('draws a bar per group and a timeline of the licence periods; a filter typed and sent by Enter narrows them', async () => {
    const api = await admin(server);
    const root = await rootGroup(api);
    const tag = uid();
    const withLicence = {
      license_settings: {
        is_enabled: true,
        notifications: { period: 'never', notify_before: 0 },
        licenses: [
          {
            is_active: true,
            features: { sip: { is_enabled: true } },
            restrict_period: { is_active: true, from: '2020-01-01', to: '2099-12-31' },
          },
        ],
      },
      license_limits: { users: 4 },
    };
    const alpha = await group(api, `Alpha ${tag}`, root, withLicence);
    const beta = await group(api, `Beta ${tag}`, root, withLicence);
    for (let i = 0; i < 3; i++) await userWith(server, api, { permissions: [], domains: [alpha] });
    await userWith(server, api, { permissions: [], domains: [beta] });

    await onPage(browser, 'licence-reports', async (page) => {
      await keyboardSignIn(page, server, server.adminLogin, server.adminPassword, `/reports/licenses`);
      const bar = (name: string) => page.getByRole('img', { name: new RegExp(`^${name} ${tag}: `) });
      await bar('Alpha').waitFor();
      expect(await bar('Alpha').getAttribute('aria-label')).toBe(`Alpha ${tag}: 3 used of 4`);
      expect(await bar('Beta').getAttribute('aria-label')).toBe(`Beta ${tag}: 1 used of 4`);
      // the used part of Alpha's bar is three times Beta's
      const width = async (name: string) => (await bar(name).locator('span').last().boundingBox())!.width;
      expect(Math.round((await width('Alpha')) / (await width('Beta')))).toBe(3);
      // the timeline has each group's licence
      const line = page.getByRole('img', {
        name: new RegExp(`^Alpha ${tag}, licence 1: 2020-01-01 – 2099-12-31`),
      });
      await line.waitFor();

      // keyboard: the groups filter, then Enter sends the form
      await page.getByLabel('Groups (ids)').focus();
      await page.keyboard.type(String(beta));
      await page.keyboard.press('Enter');
      await bar('Alpha').waitFor({ state: 'detached' });
      expect(await page.getByTestId('usage-bar').count()).toBe(1);
      await bar('Beta').waitFor();
      // the export buttons are reachable by Tab from the filters
      await page.getByTestId('reports-apply').focus();
      await page.keyboard.press('Tab');
      expect(await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe(
        'export-used-csv',
      );
    });
  }, 120_000);
});
