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
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
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
    const dir = path.join(repo, '.test-results/e2e');
    fs.mkdirSync(dir, { recursive: true });
    await page.screenshot({ path: path.join(dir, `${name}.png`) }).catch(() => undefined);
    throw err;
  } finally {
    await context.close();
  }
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
