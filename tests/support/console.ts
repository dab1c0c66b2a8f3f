/** Helpers of the console's browser tests: keyboard sign-in, the palette, waits on dialogs. */
import type { Page } from 'playwright-core';
import type { TestServer } from './server';
import { WAIT, waitForPath } from './web';

/** Signs in from /login with the keyboard only (the login field has the focus when the page opens). */
export async function keyboardSignIn(
  page: Page,
  server: TestServer,
  login: string,
  password: string,
  /** the page signing in leads to (the login page's `redirect`), instead of the home page and its cards */
  to?: string,
): Promise<void> {
  await page.goto(`${server.url}/login${to ? `?redirect=${encodeURIComponent(to)}` : ''}`);
  await page.getByRole('textbox', { name: 'Login or e-mail', exact: true }).waitFor();
  await page.keyboard.type(login);
  await page.keyboard.press('Tab');
  await page.keyboard.type(password);
  await page.keyboard.press('Enter');
  await waitForPath(page, to ? new URL(to, server.url).pathname : '/home');
  await page.getByTestId('side-menu').waitFor();
}

/** Opens the palette with Ctrl+K, types, waits for the first result to be the expected title, runs it. */
export async function runFromPalette(page: Page, query: string, expectTitle: string): Promise<void> {
  await page.keyboard.press('Control+k');
  const input = page.getByTestId('palette-input');
  await input.waitFor();
  await page.keyboard.type(query);
  const selected = page.locator('[cmdk-item][data-selected="true"]');
  try {
    await page.waitForFunction(
      (title) => document.querySelector('[cmdk-item][data-selected="true"] span')?.textContent === title,
      expectTitle,
      { timeout: WAIT },
    );
  } catch (err) {
    // what the palette held instead, so a failure says why
    const seen = await page
      .evaluate(() => ({
        query: document.querySelector<HTMLInputElement>('[cmdk-input]')?.value,
        open: document.querySelector('dialog[open] [cmdk-input]') !== null,
        focused: document.activeElement?.outerHTML.slice(0, 120),
        selected: document.querySelector('[cmdk-item][data-selected="true"]')?.getAttribute('data-value'),
        first: [...document.querySelectorAll('[cmdk-item]')]
          .slice(0, 5)
          .map((e) => e.getAttribute('data-value')),
      }))
      .catch(() => null);
    throw new Error(`palette: "${expectTitle}" not chosen for "${query}"; saw ${JSON.stringify(seen)}`, {
      cause: err,
    });
  }
  await selected.waitFor();
  await page.keyboard.press('Enter');
  await input.waitFor({ state: 'hidden' });
}

/** Chooses in the focused picker: types, waits for an option named `name` to be active, presses Enter. */
export async function pickWithKeyboard(page: Page, search: string, name: string): Promise<void> {
  await page.keyboard.type(search);
  await page.waitForFunction(
    (n) => {
      const list = document.getElementById(document.activeElement?.getAttribute('aria-controls') ?? '');
      return list?.querySelector<HTMLElement>('[role="option"][data-active]')?.dataset.name === n;
    },
    name,
    { timeout: WAIT },
  );
  await page.keyboard.press('Enter');
}

/** The element that has the focus: its test id or name, for a readable failure. */
export function focused(page: Page): Promise<string> {
  return page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    return el?.getAttribute('data-testid') ?? el?.getAttribute('name') ?? el?.tagName ?? '';
  });
}
