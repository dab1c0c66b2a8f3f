/**
 * /logs in Chromium (issue 24 item 3): the side menu opens it on the server's log, newest line last; the
 * arrow keys move between the logs, `/` goes to the text filter and Enter applies it; Download saves the log;
 * Clear, behind its confirmation, empties it, seen through the API afterwards.
 */
import { describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { getCommand } from '@lintel/commands';
import type { TestServer } from '../support/server';
import { admin } from '../support/fixtures';
import { keyboardSignIn } from '../support/console';
import { WAIT, consoleWorld, onPage, waitForPath } from '../support/web';

let server: TestServer;
let browser: Browser;
consoleWorld({}, (w) => ({ server, browser } = w));

describe('logs page', () => {
  it('reads, filters, downloads and clears the logs from the keyboard', async () => {
    const api = await admin(server);
    await onPage(browser, 'logs', async (page) => {
      await keyboardSignIn(page, server, server.adminLogin, server.adminPassword);
      await page.getByTestId('side-menu').getByRole('link', { name: 'Logs', exact: true }).click();
      await waitForPath(page, '/logs');
      await expect.poll(() => page.getByTestId('log-tab-server').getAttribute('aria-selected')).toBe('true');
      server.server.context.log.warn({ door: 'north' }, 'the newest line');
      await page.keyboard.press('r');
      // read again by `r`: the line is there, with its fields, after the page's first lines
      const line = page.getByTestId('log-line').filter({ hasText: 'the newest line' });
      await line.waitFor({ timeout: WAIT });
      expect(await line.textContent()).toContain('{"door":"north"}');
      const texts = await page.getByTestId('log-line').allTextContents();
      expect(texts.findIndex((x) => x.includes('the newest line'))).toBeGreaterThan(
        texts.findIndex((x) => x.includes('Server listening')),
      );

      // the arrow keys move between the logs
      await page.getByTestId('log-tab-server').focus();
      await page.keyboard.press('ArrowRight');
      await expect.poll(() => page.getByTestId('log-tab-jobs').getAttribute('aria-selected')).toBe('true');
      await page.getByTestId('log-lines').getByText('done').first().waitFor({ timeout: WAIT });

      // `/` goes to the filter; Enter applies it
      await page.getByTestId('log-lines').focus();
      await page.keyboard.press('/');
      await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('log-contains');
      await page.keyboard.type('events.prune');
      await page.keyboard.press('Enter');
      await expect
        .poll(async () => {
          const texts = await page.getByTestId('log-line').allTextContents();
          return texts.length > 0 && texts.every((x) => x.includes('events.prune'));
        })
        .toBe(true);

      const download = page.waitForEvent('download');
      await page.getByTestId('log-download').click();
      expect((await download).suggestedFilename()).toMatch(/^lintel-jobs-\d{4}-\d\d-\d\d\.log$/);

      await page.getByTestId('log-clear').click();
      await page.getByRole('dialog').getByRole('button', { name: 'Clear a log' }).click();
      await page.getByTestId('log-lines').getByText('No lines.').waitFor({ timeout: WAIT });
      expect((await getCommand('log.get').run({ api }, { name: 'jobs' })).data).toEqual([]);
    });
  }, 240_000);
});
