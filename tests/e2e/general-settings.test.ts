/**
 * Markers and domain types have console pages that came from their declarations alone (issue 11, item 1):
 * the administrator opens each from the side menu, then creates, edits and deletes a row with the keyboard
 * only (`n` adds, `/` searches, Enter opens, Ctrl+Enter approves, Tab to Delete, Enter, Tab and Enter confirm).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin, uid } from '../support/fixtures';
import { focused, keyboardSignIn } from '../support/console';
import { ensureBuilt, expectText, launchChromium, onPage, WAIT, waitForPath, webDist } from '../support/web';

let server: TestServer;
let browser: Browser;
let api: ApiClient;

beforeAll(async () => {
  ensureBuilt();
  server = await startTestServer({ webDir: webDist });
  browser = await launchChromium();
  api = await admin(server);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

interface Family {
  menu: string;
  path: string;
  title: string;
  noun: 'marker' | 'domain_type';
  /** types the create form's fields, the first one having the focus */
  fill(page: Page, name: string): Promise<void>;
  /** the row's name as listed */
  find(name: string): Promise<{ id: number; name: string } | undefined>;
}

const rows = async (command: 'marker.list' | 'domain_type.list', name: string) =>
  (await getCommand(command).run({ api }, { search: name, limit: 10 })).data.find((r) => r.name === name);

const FAMILIES: Family[] = [
  {
    menu: 'menu-markers',
    path: '/general-settings/markers',
    title: 'Markers',
    noun: 'marker',
    async fill(page, name) {
      await page.keyboard.type(name);
      await page.keyboard.press('Tab');
      await page.keyboard.type('#AA3300');
    },
    find: (name) => rows('marker.list', name),
  },
  {
    menu: 'menu-domain-types',
    path: '/general-settings/domain-types',
    title: 'Group types',
    noun: 'domain_type',
    async fill(page, name) {
      await page.keyboard.type(`t_${name.toLowerCase().replace(/\W/g, '_')}`);
      await page.keyboard.press('Tab');
      await page.keyboard.type(name);
    },
    find: (name) => rows('domain_type.list', name),
  },
];

/** A form page's first field took the focus (the form is drawn once its schema is read). */
const fieldFocused = (page: Page) =>
  page.waitForFunction(() => document.activeElement?.tagName === 'INPUT', undefined, { timeout: WAIT });

/** From the list: `/`, the name, Enter to the rows, Enter on the one row found: its edit page. */
async function openRow(page: Page, f: Family, name: string, id: number) {
  // the list is on screen (its keys are bound with it); then `/` until the search has the focus: under load
  // a key pressed while the page was still mounting went nowhere
  await page.getByTestId('table-count').waitFor({ timeout: WAIT });
  await expect
    .poll(
      async () => {
        await page.keyboard.press('/');
        return page.evaluate(() => document.activeElement?.getAttribute('type'));
      },
      { timeout: WAIT },
    )
    .toBe('search');
  const searched = page.waitForResponse(
    (r) => r.url().includes(`/api/v0/${f.path.split('/').pop()}?`) && r.url().includes('search='),
  );
  // a `/` pressed once the search had the focus is in it: the name replaces whatever is there
  await page.keyboard.press('Control+a');
  await page.keyboard.type(name);
  await searched;
  await expectText(page.getByTestId('table-count'), /^1–1 of 1$/);
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.activeElement?.getAttribute('role') === 'grid', undefined, {
    timeout: WAIT,
  });
  await page.keyboard.press('Enter');
  await waitForPath(page, `${f.path}/${id}/edit`);
  await fieldFocused(page);
}

describe.each(FAMILIES.map((f) => [f.title, f] as const))(
  '%s, from the menu and the keyboard',
  (_title, f) => {
    it('opens from the menu, then creates, edits and deletes one', async () => {
      const name = `Kb ${uid()}`;
      const renamed = `${name} 2`;
      await onPage(browser, `general-settings-${f.noun}`, async (page) => {
        await page.clock.install();
        await keyboardSignIn(page, server, server.adminLogin, server.adminPassword);
        await page.getByTestId(f.menu).click();
        await waitForPath(page, f.path);
        await expectText(page.getByTestId('page-title'), f.title);

        // create: `n` opens the add page, whose first field has the focus
        await page.keyboard.press('n');
        await waitForPath(page, `${f.path}/add`);
        await fieldFocused(page);
        await f.fill(page, name);
        await page.keyboard.press('Control+Enter');
        await waitForPath(page, f.path);
        const made = await f.find(name);
        expect(made).toBeDefined();

        // edit: found by name, opened with Enter; the first field has the focus
        await openRow(page, f, name, made!.id);
        if (f.noun === 'domain_type') await page.keyboard.press('Tab'); // code, then name
        await page.keyboard.press('Control+a');
        await page.keyboard.type(renamed);
        await page.keyboard.press('Control+Enter');
        await waitForPath(page, f.path);
        await expect.poll(async () => (await f.find(renamed))?.id).toBe(made!.id);

        // delete: Tab to Delete on the edit page, Enter; the question has Cancel focused, Tab and Enter delete
        // once the Undo time is over
        await page.keyboard.press('Escape'); // the list's search is cleared
        await openRow(page, f, renamed, made!.id);
        for (let i = 0; i < 12 && (await focused(page)) !== `delete-${f.noun}`; i++)
          await page.keyboard.press('Tab');
        expect(await focused(page)).toBe(`delete-${f.noun}`);
        await page.keyboard.press('Enter');
        await page.getByTestId('confirm-dialog').waitFor();
        await page.keyboard.press('Tab');
        await page.keyboard.press('Enter');
        await waitForPath(page, f.path);
        await page.getByTestId('undo-delete').waitFor();
        await page.clock.fastForward(5000);
        await expect.poll(async () => f.find(renamed), { timeout: WAIT }).toBeUndefined();
      });
    }, 120_000);
  },
);
