/**
 * Issue 13's points on the console's forms and keys, each checked in Chromium: `g g` reaches a table's first
 * row (item 3), the `?` sheet groups keys by scope and shows them as typed, a form's button says what it does
 * and a field over its limit says so (item 10), the header's palette button is whole at 1440 × 900 (item 11).
 */
import { describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { type TestServer } from '../support/server';
import { getCommand } from '@lintel/commands';
import { keyboardSignIn } from '../support/console';
import { admin, uid } from '../support/fixtures';
import { expectText, onPage, WAIT, consoleWorld } from '../support/web';

let server: TestServer;
let browser: Browser;
consoleWorld({}, (w) => ({ server, browser } = w));

describe('the console at 1440 × 900', () => {
  it.each(['en-US', 'ru-RU'])(
    'shows the whole palette button (%s)',
    async (locale) => {
      await onPage(
        browser,
        `palette-button-${locale}`,
        async (page) => {
          await keyboardSignIn(page, server, server.adminLogin, server.adminPassword);
          if (locale === 'ru-RU') {
            await page.evaluate(() => localStorage.setItem('i18nextLng', 'ru'));
          }
          await page.goto(`${server.url}/users`);
          const button = page.getByTestId('palette-button');
          await button.waitFor();
          const clipped = await button.evaluate((b) => {
            const r = b.getBoundingClientRect();
            const header = b.closest('header')!.getBoundingClientRect();
            const text = b.querySelector('span')!;
            return {
              text: text.scrollWidth > text.clientWidth,
              box: r.left < header.left || r.right > header.right || r.width < 200,
            };
          });
          expect(clipped).toEqual({ text: false, box: false });
        },
        { locale, width: 1440, height: 900 },
      );
    },
    60_000,
  );
});

describe('keys and forms on a family page', () => {
  it('reaches the first row with g g, and ? lists the keys by scope as typed', async () => {
    const api = await admin(server);
    for (let i = 0; i < 3; i++)
      await getCommand('role.create').run({ api }, { name: `Gg ${uid()}`, permissions: [] });
    await onPage(browser, 'gg-first-row', async (page) => {
      await keyboardSignIn(page, server, server.adminLogin, server.adminPassword, `/roles`);
      await page.getByTestId('table-count').waitFor();
      await page.locator('main').focus();
      // `/` then Enter takes the cursor to the rows
      await page.keyboard.press('/');
      await page.keyboard.press('Enter');
      await page.waitForFunction(() => document.activeElement?.getAttribute('role') === 'grid', undefined, {
        timeout: WAIT,
      });
      const index = () =>
        page.evaluate(() => {
          const g = document.querySelector('[role="grid"]')!;
          const id = g.getAttribute('aria-activedescendant');
          const row = id ? document.getElementById(id) : null;
          return row ? Number(row.getAttribute('aria-rowindex')) - 2 : -1;
        });
      await page.keyboard.press('j');
      await page.keyboard.press('j');
      await expect.poll(index).toBe(2);
      await page.keyboard.press('g');
      await page.keyboard.press('g');
      // the first row, and still on the table (not sent to the groups page)
      await expect.poll(index).toBe(0);
      expect(new URL(page.url()).pathname).toBe('/roles');

      // ? : grouped by scope, each key once, letters as typed
      await page.locator('main').focus();
      await page.keyboard.press('Shift+Slash');
      await page.getByTestId('shortcuts-dialog').waitFor();
      expect(await page.getByTestId('shortcut-scope-table').count()).toBe(1);
      expect(await page.getByTestId('shortcut-scope-global').count()).toBe(1);
      const caps = await page.getByTestId('shortcut-scope-table').locator('kbd').allTextContents();
      expect(caps).toContain('j');
      expect(caps).toContain('G');
      const labels = await page.getByTestId('shortcut-row').locator('td:first-child').allTextContents();
      expect(labels.length).toBe(new Set(labels).size);
    });
  }, 60_000);

  it('names the button by what it does and says when a name is too long', async () => {
    await onPage(browser, 'form-labels', async (page) => {
      await keyboardSignIn(page, server, server.adminLogin, server.adminPassword, `/roles/add`);
      await expectText(page.getByTestId('form-approve'), 'Create');
      const name = page.getByTestId('form-page').locator('input').first();
      await name.fill('n'.repeat(300));
      // nothing cut: the field keeps what was typed and says it is over the limit
      expect((await name.inputValue()).length).toBe(300);
      await expectText(page.getByTestId('error-name'), /300.*255/);
      await page.keyboard.press('Control+Enter');
      await expectText(page.getByTestId('form-error'), /^Check fields data: .*Name/);
    });
  }, 60_000);
});
