/**
 * An estimated total in the console (issue 14 item 1): with more matching rows than the server counts
 * exactly (configured low here: 50), the users table says "about 300" ("около 300"), sizes its scroll area
 * by the estimate, and still reaches the last row, where the count becomes exact.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { getCommand } from '@lintel/commands';
import { ApiClient, MemorySessionStore, type StoredSession } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { ensureBuilt, expectText, freshPage, launchChromium, WAIT, webDist } from '../support/web';

const SCALE = 300;
let server: TestServer;
let browser: Browser;
let session: StoredSession;
let api: ApiClient;

beforeAll(async () => {
  ensureBuilt();
  server = await startTestServer({ webDir: webDist, config: { listExactCount: 50 } });
  const reply = await getCommand('session.login').run(
    { api: server.client() },
    { login: server.adminLogin, password: server.adminPassword },
  );
  const s = reply.sessions[0]!;
  session = { token: s.token, refresh: s.refresh, project: s.project, login: server.adminLogin };
  api = new ApiClient({ baseUrl: server.url, store: new MemorySessionStore({ ...session }) });
  await getCommand('seed.scale').run({ api }, { users: SCALE });
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function openUsers(locale: 'en' | 'ru'): Promise<{ page: Page; close: () => Promise<void> }> {
  const { context, page } = await freshPage(browser, { locale: locale === 'ru' ? 'ru-RU' : 'en-US' });
  // signed in, in the language asked (the console keeps both in the browser's storage)
  await context.addInitScript(
    ([s, lang]) => {
      window.sessionStorage.setItem('lintel.session', JSON.stringify(s));
      window.localStorage.setItem('lintel.locale', lang);
    },
    [session, locale] as const,
  );
  await page.goto(`${server.url}/users`);
  await page.locator('[role="row"][aria-rowindex="2"]').waitFor();
  return { page, close: () => context.close() };
}

/** Three significant digits, as the console rounds an estimate. */
const rounded = (n: number) =>
  n < 1000
    ? n
    : Math.round(n / 10 ** (Math.floor(Math.log10(n)) - 2)) * 10 ** (Math.floor(Math.log10(n)) - 2);

describe('an estimated total', () => {
  it('the API and the console say "about", the scroll area follows it, the last row is reachable', async () => {
    const first = await getCommand('user.list').run({ api }, { limit: 100 });
    expect(first.meta.total_is_estimate).toBe(true);
    const estimate = first.meta.total;
    const { page, close } = await openUsers('en');
    try {
      const count = page.getByTestId('table-count');
      await expectText(count, new RegExp(`^1–\\d+ of about ${rounded(estimate).toLocaleString('en-US')}$`));
      await expectText(
        page.getByRole('status').filter({ hasText: 'Rows:' }),
        `Rows: about ${rounded(estimate).toLocaleString('en-US')}`,
      );
      // the scroll area is sized by the estimate (aria-rowcount counts the header row)
      expect(Number(await page.getByRole('grid').getAttribute('aria-rowcount'))).toBe(estimate + 1);
      // scrolled to the end, again and again while later pages correct the total: the last user shows and
      // the count turns exact
      await expect
        .poll(
          async () => {
            await page.getByRole('grid').evaluate((g) => g.scrollTo(0, g.scrollHeight));
            return ((await count.textContent()) ?? '').trim();
          },
          { timeout: WAIT, interval: 300 },
        )
        .toMatch(new RegExp(`^[\\d,]+–${SCALE + 1} of ${SCALE + 1}$`));
      expect(Number(await page.getByRole('grid').getAttribute('aria-rowcount'))).toBe(SCALE + 2);
    } finally {
      await close();
    }
  }, 90_000);

  it('in Russian: "около"', async () => {
    const first = await getCommand('user.list').run({ api }, { limit: 100 });
    expect(first.meta.total_is_estimate).toBe(true);
    // the console takes the language of the profile once signed in
    await getCommand('profile.update').run({ api }, { locale: 'ru' });
    const { page, close } = await openUsers('ru');
    try {
      await expectText(
        page.getByTestId('table-count'),
        new RegExp(`^1–\\d+ из около ${rounded(first.meta.total).toLocaleString('ru-RU')}$`),
      );
    } finally {
      await close();
      await getCommand('profile.update').run({ api }, { locale: 'en' });
    }
  }, 90_000);
});
