/**
 * What the browser tests share: the built console (rebuilt when its sources changed), Debian's Chromium,
 * and waits that playwright-core lacks (it has no web-first assertions).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { AxeBuilder } from '@axe-core/playwright';
import { startTestServer, type TestServer } from './server';
import { chromiumPath, chromiumStarted } from './chromium';

export const repo = path.resolve(import.meta.dirname, '../..');
export const webDir = path.join(repo, 'apps/web');
export const webDist = path.join(webDir, 'dist');
const distIndex = path.join(webDist, 'index.html');
/** How long a page may take to show what a step waits for: generous, as CI runs the whole suite on 2 cores. */
export const WAIT = 30_000;

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist') continue;
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(full) : fs.statSync(full).mtimeMs);
  }
  return newest;
}

/** Builds the console when apps/web/dist is missing or older than its sources. */
export function ensureBuilt(): void {
  const sources = [
    'apps/web/src',
    'apps/web/index.html',
    'apps/web/vite.config.ts',
    'locales',
    'packages/core/src',
    'packages/commands/src',
  ];
  const built = fs.existsSync(distIndex) ? fs.statSync(distIndex).mtimeMs : 0;
  const changed = Math.max(
    ...sources.map((s) => {
      const full = path.join(repo, s);
      if (!fs.existsSync(full)) return 0;
      return fs.statSync(full).isDirectory() ? newestMtime(full) : fs.statSync(full).mtimeMs;
    }),
  );
  if (built >= changed) return;
  execFileSync(
    process.execPath,
    [path.join(repo, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn'],
    {
      cwd: webDir,
      stdio: 'inherit',
      // vitest sets NODE_ENV=test, which would give a development build of React
      env: { ...process.env, NODE_ENV: 'production' },
    },
  );
}

export function launchChromium(): Promise<Browser> {
  chromiumStarted();
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export async function freshPage(
  browser: Browser,
  opts: { locale?: string; width?: number; height?: number; timezoneId?: string } = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({
    locale: opts.locale ?? 'en-US',
    ...(opts.timezoneId ? { timezoneId: opts.timezoneId } : {}),
    viewport: { width: opts.width ?? 1280, height: opts.height ?? 800 },
  });
  const page = await context.newPage();
  page.setDefaultTimeout(WAIT);
  return { context, page };
}

/** Waits until the locator's text equals `expected`. */
export async function expectText(locator: Locator, expected: string | RegExp): Promise<void> {
  await expect
    .poll(
      async () => ((await locator.count()) ? ((await locator.first().textContent()) ?? '').trim() : null),
      {
        timeout: WAIT,
        interval: 100,
      },
    )
    .toMatch(
      typeof expected === 'string'
        ? new RegExp(`^${expected.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`)
        : expected,
    );
}

export async function waitForPath(page: Page, pathname: string): Promise<void> {
  await page.waitForURL((u) => u.pathname === pathname, { timeout: WAIT });
}

/**
 * Moves the console to `url` the way its own links do — a new history entry the router hears of — without
 * loading the page again: a full load costs Chromium 1.3–1.7 s of CPU, a move within the console about 0.2 s
 * (docs/decisions.md, "The suite's own time"). For a test whose subject is a page, not how it loads.
 */
export async function moveTo(page: Page, url: string): Promise<void> {
  const to = new URL(url, page.url());
  await page.evaluate((where) => {
    // an entry as React Router writes its own (its index, so a form's "leave without saving?" still hears
    // of a later Back), then the event its history listens to
    const idx = ((history.state as { idx?: number } | null)?.idx ?? 0) + 1;
    history.pushState({ usr: null, key: Math.random().toString(36).slice(2, 10), idx }, '', where);
    dispatchEvent(new PopStateEvent('popstate'));
  }, to.pathname + to.search);
  await page.waitForURL((u) => u.pathname === to.pathname && u.search === to.search, { timeout: WAIT });
}

/**
 * An alert goes by itself after 3 s (`ALERT_TIMEOUT_MS`): on a loaded machine a test's look after the action
 * can come when it has gone (integrations-page waited 30 s for one in a CI). This starts watching in the page
 * now, before the action that raises the alert; the function it returns, awaited after the action, resolves
 * once the alert was seen or throws what the wait threw.
 */
export function alertWatch(
  page: Page,
  kind: 'success' | 'error' | 'warning' | 'info',
  text: RegExp,
): () => Promise<void> {
  const seen = page
    .getByTestId(`alert-${kind}`)
    .filter({ hasText: text })
    .first()
    .waitFor({ timeout: WAIT })
    .then(
      () => null,
      (err: unknown) => err,
    );
  return async () => {
    const err = await seen;
    if (err) throw err;
  };
}

/** The requests in flight of each page that `trackRequests` was given (its API calls and code chunks). */
const inFlight = new WeakMap<Page, Set<unknown>>();

/** Counts the page's requests in flight from now on, for `requestsDone`. */
export function trackRequests(page: Page): void {
  const open = new Set<unknown>();
  inFlight.set(page, open);
  page.on('request', (r) => open.add(r));
  page.on('requestfinished', (r) => open.delete(r));
  page.on('requestfailed', (r) => open.delete(r));
}

/**
 * What the page asked for has come: two frames drawn first (its effects have sent their requests), then none
 * in flight. Where a move within the console leaves no load state to wait for (`moveTo`), and without waiting
 * a fixed time for quiet as Playwright's `networkidle` does.
 */
export async function requestsDone(page: Page): Promise<void> {
  const open = inFlight.get(page);
  if (!open) throw new Error('requestsDone: the page was not given to trackRequests');
  await page.evaluate(
    () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))),
  );
  await expect.poll(() => open.size, { timeout: WAIT }).toBe(0);
}

/** Signs in on /login with the form. */
export async function signInWithForm(
  page: Page,
  login: string,
  password: string,
  remember = false,
): Promise<void> {
  await page.getByRole('textbox', { name: 'Login or e-mail', exact: true }).fill(login);
  await page.getByRole('textbox', { name: 'Password', exact: true }).fill(password);
  if (remember) await page.getByRole('checkbox', { name: 'Keep me signed in' }).check();
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

/**
 * Runs a test's steps on a fresh page; when they fail, the page is kept as a screenshot in
 * .test-results/e2e/<name>.png before the context closes.
 */
export async function onPage(
  browser: Browser,
  name: string,
  steps: (page: Page) => Promise<void>,
  opts: Parameters<typeof freshPage>[1] = {},
): Promise<void> {
  const { context, page } = await freshPage(browser, opts);
  try {
    await steps(page);
  } catch (err) {
    await failedShot(page, name);
    throw err;
  } finally {
    await context.close();
  }
}

/** The page as a failed test left it, in .test-results/e2e/{name}.png. */
async function failedShot(page: Page, name: string): Promise<void> {
  const dir = path.join(repo, '.test-results/e2e');
  fs.mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, `${name}.png`) }).catch(() => undefined);
}

/**
 * One page kept across the tests of a file, each test moving where it needs from wherever the last one left
 * it: a full load of the console and a sign-in cost Chromium about 1.5–2 s of CPU, more than many a test's
 * own steps. `prepare` readies a new page (its clock, the sign-in). A test that fails takes the page with it
 * (it may have left a dialog open): the next one starts on a fresh page, so a failure never spreads.
 */
export function keptPage(
  browser: () => Browser,
  prepare: (page: Page) => Promise<void>,
  opts: Parameters<typeof freshPage>[1] = {},
): { run(name: string, steps: (page: Page) => Promise<void>): Promise<void>; close(): Promise<void> } {
  let held: Promise<{ context: BrowserContext; page: Page }> | null = null;
  return {
    async run(name, steps) {
      held ??= freshPage(browser(), opts).then(async (made) => {
        try {
          await prepare(made.page);
          return made;
        } catch (err) {
          await made.context.close();
          throw err;
        }
      });
      const made = await held.catch((err: unknown) => {
        held = null;
        throw err;
      });
      try {
        await steps(made.page);
      } catch (err) {
        held = null;
        await failedShot(made.page, name);
        await made.context.close();
        throw err;
      }
    },
    async close() {
      const h = held;
      held = null;
      await (await h?.catch(() => null))?.context.close();
    },
  };
}

/**
 * The world of a file of browser tests: a server serving the built console (with `opts` for its config) and
 * one Chromium, started before the file's tests and closed after them; `use` receives both once started.
 */
export function consoleWorld(
  opts: Omit<Parameters<typeof startTestServer>[0] & object, 'webDir'>,
  use: (world: { server: TestServer; browser: Browser }) => void,
): void {
  let world: { server: TestServer; browser: Browser } | null = null;
  let server: TestServer | undefined;
  beforeAll(async () => {
    ensureBuilt();
    server = await startTestServer({ webDir: webDist, ...opts });
    world = { server, browser: await launchChromium() };
    use(world);
  }, 180_000);
  afterAll(async () => {
    await world?.browser.close();
    await server?.close();
  });
}

/**
 * axe-core on the page as it is, run in the page itself (`axe.run`, the builder's legacy mode): the console
 * has no frames of another origin, and the builder's default (`runPartial` in each frame, then `finishRun` in
 * a blank page it opens) cost 1.0–2.7 s a page against 0.3–0.7 s.
 */
export function axeOn(page: Page): AxeBuilder {
  return new AxeBuilder({ page }).setLegacyMode(true);
}
