/**
 * The White-label tab of /general-settings in Chromium (issue 24 item 2): a name typed and saved, a logo
 * uploaded from a file; after a reload the tab shows both, the logo as the server serves it. The console's
 * brand (the side menu's mark and name) is the product's until the white-label is enabled, then its name and
 * logo, at once and after the reload.
 */
import { describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { Jimp } from 'jimp';
import { getCommand } from '@lintel/commands';
import type { TestServer } from '../support/server';
import { admin } from '../support/fixtures';
import { keyboardSignIn } from '../support/console';
import { WAIT, consoleWorld, onPage } from '../support/web';

let server: TestServer;
let browser: Browser;
consoleWorld({}, (w) => ({ server, browser } = w));

describe('the white-label tab', () => {
  it('saves a name and a logo, which show again after a reload', async () => {
    const api = await admin(server);
    const png = await new Jimp({ width: 300, height: 100, color: 0x1f6feba0 }).getBuffer('image/png');
    await onPage(browser, 'whitelabel-tab', async (page) => {
      await keyboardSignIn(page, server, server.adminLogin, server.adminPassword, `/general-settings`);
      await page.getByTestId('settings-tab-whitelabel').click();
      await page.getByTestId('whitelabel-no-logo').waitFor({ timeout: WAIT });
      const brand = page.getByTestId('sidebar').getByTestId('brand');
      expect(await brand.getAttribute('data-source')).toBe('product');
      expect(await brand.innerText()).toBe('Lintel');
      await page.getByTestId('field-whitelabel-name').fill('Riverside Management');
      await page.getByTestId('whitelabel-enabled').check();
      await page.getByTestId('whitelabel-save').click();
      await page.getByText('White-label saved').waitFor({ timeout: WAIT });
      await page.getByTestId('whitelabel-logo-file').setInputFiles({
        name: 'logo.png',
        mimeType: 'image/png',
        buffer: Buffer.from(png),
      });
      await page.getByTestId('whitelabel-logo').waitFor({ timeout: WAIT });
      // the brand follows: the project's name and logo
      await page.waitForFunction(
        () =>
          (
            document.querySelector(
              '[data-testid="sidebar"] [data-testid="brand-logo"]',
            ) as HTMLImageElement | null
          )?.naturalWidth === 300,
        undefined,
        { timeout: WAIT },
      );
      expect(await brand.getAttribute('data-source')).toBe('project');
      expect(await brand.innerText()).toBe('Riverside Management');
      expect(await brand.getAttribute('aria-label')).toBe('Riverside Management, home');

      await page.reload();
      await page.getByTestId('settings-tab-whitelabel').click();
      const logo = page.getByTestId('whitelabel-logo');
      await logo.waitFor({ timeout: WAIT });
      expect(await page.getByTestId('field-whitelabel-name').inputValue()).toBe('Riverside Management');
      expect(await page.getByTestId('whitelabel-enabled').isChecked()).toBe(true);
      // the image is loaded from the server, the size it was stored at
      await page.waitForFunction(
        () =>
          (document.querySelector('[data-testid="whitelabel-logo"]') as HTMLImageElement)?.naturalWidth > 0,
        undefined,
        { timeout: WAIT },
      );
      const size = await logo.evaluate((img: HTMLImageElement) => [img.naturalWidth, img.naturalHeight]);
      expect(size).toEqual([300, 100]);
      const stored = (await getCommand('settings.whitelabel_get').run({ api }, {})).data;
      expect(await logo.getAttribute('src')).toBe(stored.logo);
      expect(stored.name).toBe('Riverside Management');
      await brand.getByTestId('brand-logo').waitFor({ timeout: WAIT });
      expect(await brand.getByTestId('brand-logo').getAttribute('src')).toBe(stored.logo);
      expect(await brand.innerText()).toBe('Riverside Management');
    });
  }, 240_000);
});
