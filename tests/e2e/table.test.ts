/**
 * Browser test of the dense table (apps/web/src/resources/resource-table.tsx) over real users of a real
 * server, by keyboard: moving the focused row, opening it, selecting, searching and filtering on the server
 * (the totals must be the API's for the same query), sorting, clearing with Esc, the remembered columns,
 * a bulk action, and no serious or critical axe violations. It drives the table harness of
 * bench/table-scroll (the console's own table code on a page of its own) in Debian's Chromium.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { axeOn, launchChromium } from '../support/web';
import { getCommand } from '@lintel/commands';
import { ApiClient, MemorySessionStore, type ListQuery, type StoredSession } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const USERS = 1500;
const WAIT = 15_000;

let server: TestServer;
let browser: Browser;
let session: StoredSession;
let api: ApiClient;
let webDir: string;

/** The API's total for a list query: what the table must show for the same query. */
async function apiTotal(query: ListQuery = {}): Promise<number> {
  return (await getCommand('user.list').run({ api }, { limit: 1, ...query })).meta.total;
}

beforeAll(async () => {
  webDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-table-e2e-'));
  // the harness is built by the benchmark's own script, with a production React
  execFileSync(process.execPath, [path.join(repo, 'bench/table-scroll/build-harness.mjs'), webDir], {
    cwd: repo,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, NODE_ENV: 'production' },
  });
  // the table is sized by an exact total here; a total past the exact count is an estimate, which
  // tests/e2e/list-estimate.test.ts covers
  server = await startTestServer({ webDir, config: { listExactCount: 10_000 } });
  const reply = await getCommand('session.login').run(
    { api: server.client() },
    { login: server.adminLogin, password: server.adminPassword },
  );
  const s = reply.sessions[0]!;
  session = { token: s.token, refresh: s.refresh, project: s.project, login: server.adminLogin };
  api = new ApiClient({ baseUrl: server.url, store: new MemorySessionStore({ ...session }) });
  await getCommand('seed.scale').run({ api }, { users: USERS });
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  if (webDir) fs.rmSync(webDir, { recursive: true, force: true });
});

async function openTable(context?: BrowserContext): Promise<{ context: BrowserContext; page: Page }> {
  const ctx =
    context ?? (await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 800 } }));
  if (!context)
    await ctx.addInitScript(
      (s) => window.sessionStorage.setItem('lintel.session', JSON.stringify(s)),
      session,
    );
  const page = await ctx.newPage();
  page.setDefaultTimeout(WAIT);
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${server.url}/users`);
  await rowsLoaded(page);
  expect(errors).toEqual([]);
  return { context: ctx, page };
}

const grid = (page: Page) => page.getByRole('grid');

/** The grid's total (aria-rowcount counts the header row too). */
async function gridTotal(page: Page): Promise<number> {
  return Number(await grid(page).getAttribute('aria-rowcount')) - 1;
}

async function rowsLoaded(page: Page) {
  await page.locator('[role="row"][aria-rowindex="2"][aria-selected]').waitFor();
}

async function expectTotal(page: Page, total: number) {
  await expect.poll(() => gridTotal(page), { timeout: WAIT }).toBe(total);
  await rowsLoaded(page);
}

/** The 0-based index of the focused row (aria-activedescendant → aria-rowindex). */
async function focusedIndex(page: Page): Promise<number> {
  return page.evaluate(() => {
    const g = document.querySelector('[role="grid"]')!;
    const id = g.getAttribute('aria-activedescendant');
    const row = id ? document.getElementById(id) : null;
    return row ? Number(row.getAttribute('aria-rowindex')) - 2 : -1;
  });
}

async function focusedCell(page: Page, column: number): Promise<string> {
  return page.evaluate((col) => {
    const g = document.querySelector('[role="grid"]')!;
    const row = document.getElementById(g.getAttribute('aria-activedescendant') ?? '');
    return row?.querySelectorAll('[role="gridcell"]')[col]?.textContent ?? '';
  }, column);
}

async function seriousViolations(page: Page) {
  const result = await axeOn(page).include('[data-testid="resource-table"]').analyze();
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
}

describe('the users table, by keyboard', () => {
  it('loads the first page and sizes the list by the server total', async () => {
    const { context, page } = await openTable();
    expect(await gridTotal(page)).toBe(await apiTotal());
    await expect.poll(() => page.getByTestId('table-count').textContent()).toMatch(/^1–\d+ of 1,501$/);
    expect(await seriousViolations(page)).toEqual([]);
    await context.close();
  });

  it('draws rows a block at a time while reading down, the rows on screen always drawn', async () => {
    const { context, page } = await openTable();
    const steps = await page.evaluate(async () => {
      const el = document.querySelector<HTMLElement>('[data-testid="resource-grid"]')!;
      const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      const drawn = () =>
        [...el.querySelectorAll<HTMLElement>('[role="row"][data-index]')]
          .map((r) => Number(r.dataset.index))
          .sort((a, b) => a - b);
      const out: { top: number; rows: number[] }[] = [];
      // a wheel notch (4 rows of 30 px) a frame, 50 frames
      for (let i = 0; i < 50; i++) {
        el.scrollTop += 120;
        await frame();
        out.push({ top: el.scrollTop, rows: drawn() });
      }
      return { out, height: el.clientHeight };
    });
    let changes = 0;
    steps.out.forEach((s, i) => {
      // every row fully or partly on screen is drawn (the header is 32 px over the first)
      const first = Math.floor(s.top / 30);
      const last = Math.floor((s.top + steps.height - 32) / 30);
      expect(s.rows[0]).toBeLessThanOrEqual(first);
      expect(s.rows.at(-1)).toBeGreaterThanOrEqual(last);
      if (i > 0 && s.rows.join() !== steps.out[i - 1]!.rows.join()) changes++;
    });
    // 200 rows read: the drawn rows changed once every 16 rows (12 times), not at every frame (49)
    expect(changes).toBeLessThanOrEqual(13);
    expect(changes).toBeGreaterThanOrEqual(11);
    await context.close();
  });

  it('moves with j/k and the arrows, opens with Enter, jumps with G and g g', async () => {
    const { context, page } = await openTable();
    expect(await focusedIndex(page)).toBe(0);
    await page.keyboard.press('j');
    await page.keyboard.press('j');
    await page.keyboard.press('ArrowDown');
    expect(await focusedIndex(page)).toBe(3);
    // the grid took the focus, so a screen reader follows the row
    expect(await page.evaluate(() => document.activeElement?.getAttribute('role'))).toBe('grid');
    await page.keyboard.press('k');
    expect(await focusedIndex(page)).toBe(2);
    const login = await focusedCell(page, 2);
    expect(login).toMatch(/^scale-\d{7}$/);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId('opened').textContent()).toContain(login);
    const opened = await page.evaluate(() => window.__harness.opened.map((u) => u.login));
    expect(opened).toEqual([login]);

    // to the last row and back: the last page is fetched on demand
    await page.keyboard.press('Shift+G');
    await expect.poll(() => focusedIndex(page)).toBe(USERS);
    await expect.poll(() => focusedCell(page, 2)).toBe(`scale-${String(USERS).padStart(7, '0')}`);
    await page.keyboard.press('g');
    await page.keyboard.press('g');
    await expect.poll(() => focusedIndex(page)).toBe(0);
    await expect.poll(() => focusedCell(page, 2)).toBe(server.adminLogin);
    await context.close();
  });

  it('selects with x and shift+x, acts on the selection, and Esc clears it', async () => {
    const { context, page } = await openTable();
    const before = await gridTotal(page);
    await page.keyboard.press('j');
    await page.keyboard.press('x');
    await expect.poll(() => page.getByTestId('selected-count').textContent()).toBe('Selected: 1');
    expect(await page.locator('[role="row"][aria-selected="true"]').count()).toBe(1);
    await page.keyboard.press('j');
    await page.keyboard.press('j');
    await page.keyboard.press('Shift+X');
    await expect.poll(() => page.getByTestId('selected-count').textContent()).toBe('Selected: 3');
    // x again on a selected row unselects it
    await page.keyboard.press('x');
    await expect.poll(() => page.getByTestId('selected-count').textContent()).toBe('Selected: 2');
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByTestId('bulk-bar').count()).toBe(0);

    // a bulk action gets the selected ids; the table reloads after it
    await page.keyboard.press('x');
    await page.keyboard.press('j');
    await page.keyboard.press('x');
    await page.getByTestId('bulk-delete').click();
    await expectTotal(page, before - 2);
    expect(await apiTotal()).toBe(before - 2);
    expect(await page.getByTestId('bulk-bar').count()).toBe(0);
    await context.close();
  });

  it('searches on the server from /, and Esc clears the search', async () => {
    const { context, page } = await openTable();
    const all = await gridTotal(page);
    await page.keyboard.press('/');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('type'))).toBe('search');
    await page.keyboard.type('Anna');
    const expected = await apiTotal({ search: 'Anna' });
    expect(expected).toBeGreaterThan(0);
    expect(expected).toBeLessThan(all);
    await expectTotal(page, expected);
    // every row shown matches
    const names = await page
      .locator('[role="row"][aria-selected] [role="gridcell"]:nth-child(4)')
      .allTextContents();
    expect(names.length).toBeGreaterThan(0);
    for (const n of names) expect(n).toMatch(/anna/i);
    // Enter takes the focus to the rows
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('role'))).toBe('grid');
    await page.keyboard.press('Escape');
    await expectTotal(page, all);
    expect(await page.getByTestId('table-search').inputValue()).toBe('');
    await context.close();
  });

  it('Enter, then Enter at once, opens the row a search finds, once its rows come', async () => {
    const { context, page } = await openTable();
    // the search's replies are held until both Enters are in: the second lands while the rows are on their way
    const held: (() => void)[] = [];
    const searching = (u: URL) => u.searchParams.has('search');
    await page.route(searching, (route) => void held.push(() => void route.continue()));
    const login = `scale-${String(42).padStart(7, '0')}`;
    await page.keyboard.press('/');
    await page.keyboard.type(login);
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('role'))).toBe('grid');
    await page.keyboard.press('Enter');
    await expect.poll(() => held.length).toBeGreaterThan(0);
    expect(await page.evaluate(() => window.__harness.opened.length)).toBe(0);
    for (const release of held.splice(0)) release();
    await page.unroute(searching);
    await expect
      .poll(() => page.evaluate(() => window.__harness.opened.map((u) => u.login)))
      .toEqual([login]);
    await context.close();
  });

  it('filters by a chip that reads like the CLI, with the API total, and sorts by header', async () => {
    const { context, page } = await openTable();
    await page.keyboard.press('f');
    const editor = page.getByTestId('filter-editor');
    await editor.waitFor();
    // field, rule, value: type-ahead in the selects, then the value and Enter
    await page.keyboard.type('Name');
    await page.keyboard.press('Tab');
    await page.keyboard.type('contains');
    await page.keyboard.press('Tab');
    await page.keyboard.type('ann');
    await page.keyboard.press('Enter');
    const expected = await apiTotal({ filters: [{ field: 'name', rule: 'contains', value: 'ann' }] });
    expect(expected).toBeGreaterThan(0);
    await expectTotal(page, expected);
    await expect.poll(() => page.getByTestId('filter-chip').textContent()).toBe('Namecontainsann');
    expect(await page.getByTestId('table-where').textContent()).toBe('--where "name contains ann"');
    expect(await page.getByTestId('filter-chips').getAttribute('title')).toBe('--where "name contains ann"');
    // after the filter, the rows have the keys
    expect(await page.evaluate(() => document.activeElement?.getAttribute('role'))).toBe('grid');
    expect(await seriousViolations(page)).toEqual([]);

    // sort: Tab from the grid through the header (select-all, ID, Login) to Name; Enter cycles asc, desc, none
    const active = () => page.evaluate(() => document.activeElement?.getAttribute('data-testid'));
    for (let i = 0; i < 6 && (await active()) !== 'sort-name'; i++) await page.keyboard.press('Tab');
    expect(await active()).toBe('sort-name');
    const nameHeader = page.locator('[role="columnheader"][data-column="name"]');
    const firstName = async (sort?: string) =>
      (
        await getCommand('user.list').run(
          { api },
          { limit: 1, sort, filters: [{ field: 'name', rule: 'contains', value: 'ann' }] },
        )
      ).data[0]!.name;
    const firstRowName = () =>
      page.locator('[role="row"][aria-rowindex="2"] [role="gridcell"]').nth(3).textContent();
    await page.keyboard.press('Enter');
    await expect.poll(() => nameHeader.getAttribute('aria-sort')).toBe('ascending');
    await expect.poll(firstRowName).toBe(await firstName('name'));
    await page.keyboard.press('Enter');
    await expect.poll(() => nameHeader.getAttribute('aria-sort')).toBe('descending');
    await expect.poll(firstRowName).toBe(await firstName('-name'));
    await page.keyboard.press('Enter');
    await expect.poll(() => nameHeader.getAttribute('aria-sort')).toBe(null);
    await expect.poll(firstRowName).toBe(await firstName());
    expect(await gridTotal(page)).toBe(expected);

    // the chips as text: edit to match any of two
    await page.keyboard.press('Shift+F');
    const text = page.getByTestId('where-editor').getByRole('textbox');
    await text.waitFor();
    expect(await text.inputValue()).toBe('name contains ann');
    await text.fill('name contains ann or login equals scale-0000007');
    await page.keyboard.press('Enter');
    await expectTotal(
      page,
      await apiTotal({
        match: 'any',
        filters: [
          { field: 'name', rule: 'contains', value: 'ann' },
          { field: 'login', rule: 'equals', value: 'scale-0000007' },
        ],
      }),
    );
    expect(await page.getByTestId('filter-chip').count()).toBe(2);
    await context.close();
  });

  it('remembers the chosen columns', async () => {
    const { context, page } = await openTable();
    await page.getByTestId('columns-button').click();
    await page.getByTestId('columns-panel').getByRole('checkbox', { name: 'Phone' }).check();
    await page.keyboard.press('Escape');
    await expect.poll(() => page.locator('[role="columnheader"][data-column="phone"]').count()).toBe(1);
    await page.close();
    // a new page of the same browser: the choice is back
    const again = await openTable(context);
    expect(await again.page.locator('[role="columnheader"][data-column="phone"]').count()).toBe(1);
    const stored = await again.page.evaluate(() =>
      JSON.parse(window.localStorage.getItem('lintel.table.harness-users') ?? 'null'),
    );
    expect(stored.columns).toContain('phone');
    await context.close();
  });

  it('shows a failure in the catalogue words, with a retry that works', async () => {
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 800 } });
    await context.addInitScript(
      (s) => window.sessionStorage.setItem('lintel.session', JSON.stringify(s)),
      session,
    );
    const page = await context.newPage();
    page.setDefaultTimeout(WAIT);
    // the server refuses the list once
    let refused = 0;
    await page.route(/\/api\/v0\/users\?/, async (route) => {
      if (refused++ > 0) return route.fallback();
      await route.fulfill({
        status: 403,
        contentType: 'application/json',
        body: JSON.stringify({ message: 'method_prohibited', error_code: 'method_prohibited', data: null }),
      });
    });
    await page.goto(`${server.url}/users`);
    const failure = page.getByTestId('table-error');
    await failure.waitFor();
    expect(await failure.getByRole('alert').textContent()).toContain('Method or action is prohibited');
    expect(await seriousViolations(page)).toEqual([]);
    await failure.getByRole('button', { name: 'Try again' }).click();
    await rowsLoaded(page);
    expect(await gridTotal(page)).toBe(await apiTotal());
    expect(await failure.count()).toBe(0);
    await context.close();
  });

  it('says when nothing matches, and clears the search and filters from there', async () => {
    const { context, page } = await openTable();
    await page.keyboard.press('/');
    await page.keyboard.type('no such person anywhere');
    const empty = page.getByTestId('table-empty');
    await empty.waitFor();
    expect(await empty.textContent()).toContain('Nothing matches the search and filters');
    expect(await page.getByTestId('table-count').textContent()).toBe('No rows');
    expect(await seriousViolations(page)).toEqual([]);
    await empty.getByRole('button', { name: 'Clear search and filters' }).click();
    await expectTotal(page, await apiTotal());
    await context.close();
  });
});
