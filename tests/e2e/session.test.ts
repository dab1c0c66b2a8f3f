/**
 * Browser test of sessions (spec part 1 §2.1, §2.2, §4 "Session"): guards and redirect, sign-in, the
 * language switch saved to the profile, sign-out, and a catalogue error on a wrong password. Drives
 * Debian's Chromium through playwright-core against a real server serving the built console.
 */
import { describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { type TestServer } from '../support/server';
import {
  expectText,
  freshPage as openPage,
  signInWithForm as signIn,
  waitForPath,
  consoleWorld,
} from '../support/web';

let server: TestServer;
let browser: Browser;
consoleWorld({}, (w) => ({ server, browser } = w));

const freshPage = () => openPage(browser);

describe('sessions in the browser', () => {
  it('after an empty submit, what is typed into Login stays in Login', async () => {
    // issue 25 item 4: the first key went to Login and the rest to Password ("a" / "dmin")
    const { context, page } = await freshPage();
    try {
      await page.goto(`${server.url}/login`);
      const login = page.getByRole('textbox', { name: 'Login or e-mail', exact: true });
      await login.waitFor();
      await page.keyboard.press('Enter');
      await expect.poll(() => login.getAttribute('aria-invalid')).toBe('true');
      await expect
        .poll(() => page.evaluate(() => document.activeElement?.getAttribute('name')))
        .toBe('login');
      await page.keyboard.type('admin');
      expect(await login.inputValue()).toBe('admin');
      expect(await page.locator('input[name="password"]').inputValue()).toBe('');
    } finally {
      await context.close();
    }
  }, 60_000);

  it('Ctrl+K pressed while the console still loads opens the palette once it is there', async () => {
    // issue 25 item 4: the key was lost while the profile loaded
    const { context, page } = await freshPage();
    try {
      await page.goto(`${server.url}/login`);
      await signIn(page, server.adminLogin, server.adminPassword);
      await waitForPath(page, '/home');
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let asked = false;
      await page.route('**/api/v0/profile', async (route) => {
        asked = true;
        await held;
        await route.continue();
      });
      await page.reload();
      await expect.poll(() => asked).toBe(true);
      expect(await page.getByTestId('side-menu').count()).toBe(0);
      await page.keyboard.press('Control+k');
      release();
      await page.getByTestId('palette-input').waitFor();
      await expect
        .poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-testid')))
        .toBe('palette-input');
    } finally {
      await context.close();
    }
  }, 60_000);

  it('guards /home, signs in, switches language, signs out', async () => {
    const { context, page } = await freshPage();
    try {
      // signed out: /home needs a session, so login with a redirect back
      await page.goto(`${server.url}/home`);
      await waitForPath(page, '/login');
      expect(new URL(page.url()).search).toBe('?redirect=%2Fhome');

      await signIn(page, server.adminLogin, server.adminPassword);
      await waitForPath(page, '/home');
      await expectText(page.getByTestId('page-title'), 'Home');
      await expectText(page.getByTestId('home-login'), server.adminLogin);
      const name = ((await page.getByTestId('home-name').textContent()) ?? '').trim();
      expect(name.length).toBeGreaterThan(0);
      await expectText(page.getByTestId('user-menu-name'), name);
      expect(((await page.getByTestId('home-project').textContent()) ?? '').trim().length).toBeGreaterThan(0);

      // signed in: the root and signed-out-only pages lead home
      await page.goto(`${server.url}/login`);
      await waitForPath(page, '/home');
      await page.goto(`${server.url}/`);
      await waitForPath(page, '/home');

      // Russian, saved in the profile
      await page.getByTestId('lang-ru').click();
      await expectText(page.getByTestId('page-title'), 'Главная');
      expect(await page.locator('html').getAttribute('lang')).toBe('ru');
      await page.getByTestId('user-menu').click();
      await expectText(page.getByTestId('logout'), 'Выйти');
      await page.keyboard.press('Escape');
      await page.getByTestId('logout').waitFor({ state: 'detached' });

      // the profile keeps the choice: forget the browser setting and reload
      await page.evaluate(() => localStorage.removeItem('lintel.locale'));
      await page.reload();
      await expectText(page.getByTestId('page-title'), 'Главная');

      // back to English
      await page.getByTestId('lang-en').click();
      await expectText(page.getByTestId('page-title'), 'Home');
      await page.getByTestId('user-menu').click();
      await expectText(page.getByTestId('logout'), 'Sign out');

      // sign out: login page, and /home is guarded again
      await page.getByTestId('logout').click();
      await waitForPath(page, '/login');
      expect(new URL(page.url()).search).toBe('');
      await page.getByRole('textbox', { name: 'Login or e-mail', exact: true }).waitFor();
      expect(
        await page.evaluate(
          () => sessionStorage.getItem('lintel.session') ?? localStorage.getItem('lintel.session'),
        ),
      ).toBeNull();
      await page.goto(`${server.url}/home`);
      await waitForPath(page, '/login');
    } finally {
      await context.close();
    }
  }, 90_000);

  it('shows the catalogue message for a wrong password', async () => {
    const { context, page } = await freshPage();
    try {
      await page.goto(`${server.url}/login`);
      await signIn(page, server.adminLogin, `${server.adminPassword}-wrong`);
      await expectText(page.getByTestId('form-error'), 'Incorrect login/password');
      await waitForPath(page, '/login');
    } finally {
      await context.close();
    }
  }, 60_000);

  it('keeps a remembered session for a new tab and a plain one only in its tab', async () => {
    const { context, page } = await freshPage();
    try {
      await page.goto(`${server.url}/login`);
      await signIn(page, server.adminLogin, server.adminPassword, true);
      await waitForPath(page, '/home');
      expect(await page.evaluate(() => localStorage.getItem('lintel.session'))).not.toBeNull();
      const tab = await context.newPage();
      await tab.goto(`${server.url}/home`);
      await expectText(tab.getByTestId('home-login'), server.adminLogin);
      await tab.close();
    } finally {
      await context.close();
    }

    const second = await freshPage();
    try {
      await second.page.goto(`${server.url}/login`);
      await signIn(second.page, server.adminLogin, server.adminPassword, false);
      await waitForPath(second.page, '/home');
      expect(await second.page.evaluate(() => localStorage.getItem('lintel.session'))).toBeNull();
      const tab = await second.context.newPage();
      await tab.goto(`${server.url}/home`);
      await waitForPath(tab, '/login');
    } finally {
      await second.context.close();
    }
  }, 90_000);

  it('shows the not-found page for an unknown path', async () => {
    const { context, page } = await freshPage();
    try {
      await page.goto(`${server.url}/no/such/page`);
      await expectText(page.getByRole('heading', { level: 1 }), 'Page not found');
    } finally {
      await context.close();
    }
  }, 60_000);
});
