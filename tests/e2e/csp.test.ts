/**
 * Issue 12 point 12 in the browser: the console works under its content security policy — signing in and
 * opening the users page raise no violation in Chromium — and the policy is in force: an injected inline
 * script does not run.
 */
import { describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { type TestServer } from '../support/server';
import { onPage, signInWithForm, waitForPath, WAIT, consoleWorld } from '../support/web';

let server: TestServer;
let browser: Browser;
consoleWorld({}, (w) => ({ server, browser } = w));

declare global {
  interface Window {
    __violations?: string[];
    __inlineRan?: boolean;
  }
}

describe('the console under its content security policy', () => {
  it('signs in and opens the users page without a violation; an injected inline script is blocked', async () => {
    await onPage(browser, 'csp', async (page) => {
      const logged: string[] = [];
      page.on('console', (m) => {
        if (/Content Security Policy|Refused to/i.test(m.text())) logged.push(m.text());
      });
      page.on('pageerror', (e) => logged.push(`pageerror: ${e.message}`));
      await page.addInitScript(() => {
        window.__violations = [];
        document.addEventListener('securitypolicyviolation', (e) =>
          window.__violations!.push(`${e.violatedDirective} ${e.blockedURI}`),
        );
      });

      await page.goto(`${server.url}/login`);
      await signInWithForm(page, server.adminLogin, server.adminPassword);
      await waitForPath(page, '/home');
      await page.goto(`${server.url}/users`);
      await page.locator('[role="row"] >> nth=1').waitFor({ timeout: WAIT });
      // the page's own work raised nothing
      expect(await page.evaluate(() => window.__violations)).toEqual([]);
      expect(logged).toEqual([]);

      // what an injected script would be: it must not run, and the browser says why
      await page.evaluate(() => {
        const s = document.createElement('script');
        s.textContent = 'window.__inlineRan = true';
        document.body.appendChild(s);
      });
      await page.waitForFunction(() => (window.__violations ?? []).length > 0, null, { timeout: 10_000 });
      expect(await page.evaluate(() => window.__inlineRan ?? false)).toBe(false);
      expect((await page.evaluate(() => window.__violations))![0]).toMatch(/^script-src/);
    });
  });
});
