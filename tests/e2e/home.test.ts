/**
 * The home dashboard (issue 13, "a home that earns its place"): recent sign-ins, recent activity and the
 * licence's state and days left, each reached from the keyboard and linking into the audit log's table on
 * the filter it shows; each card only for those whose permissions allow its command; texts in both languages.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin, rootGroup, uid, userWith } from '../support/fixtures';
import { keyboardSignIn } from '../support/console';
import {
  ensureBuilt,
  expectText,
  launchChromium,
  moveTo,
  onPage,
  WAIT,
  waitForPath,
  webDist,
} from '../support/web';

let server: TestServer;
let browser: Browser;
let api: ApiClient;

beforeAll(async () => {
  ensureBuilt();
  // a fresh installation: the evaluation licence, 30 days
  server = await startTestServer({
    webDir: webDist,
    config: { licences: { publicKeys: [], cloudTimeoutMs: 1000, evaluationDays: 30 } },
  });
  browser = await launchChromium();
  api = await admin(server);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** Tab until the element with this test id has the focus (the page is walked from the keyboard alone). */
async function tabTo(page: Page, testId: string, max = 40): Promise<void> {
  for (let i = 0; i < max; i++) {
    const at = await page.evaluate(() => document.activeElement?.getAttribute('data-testid'));
    if (at === testId) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`${testId} was not reached with Tab`);
}

const auditTotal = async (filters: { field: string; rule: 'equals' | 'not_equals'; value: string }[]) =>
  (await getCommand('audit_event.list').run({ api }, { limit: 1, filters })).meta.total;

describe('the home dashboard', () => {
  it('shows who signed in, what changed and the licence, each a link into the filtered table', async () => {
    const marker = `Watch ${uid()}`;
    const markerId = (await getCommand('marker.create').run({ api }, { name: marker, color: '#aa3300' })).data
      .id;
    const me = await getCommand('profile.get').run({ api }, {});
    const licences = await getCommand('licence.list').run({ api }, {});
    expect(licences.in_force).not.toBeNull();

    await onPage(browser, 'home-dashboard', async (page) => {
      await keyboardSignIn(page, server, server.adminLogin, server.adminPassword);
      // the sign-in just made is the newest, by name
      const signIns = page.getByTestId('home-sign-ins');
      await expectText(signIns.locator('li').first().locator('.font-medium'), me.name);
      // the marker just made is the newest change: what, which, by whom
      const activity = page.getByTestId('home-activity').locator('li').first();
      await expect.poll(() => activity.textContent(), { timeout: WAIT }).toContain(marker);
      expect(await activity.textContent()).toContain('Created · Marker');
      expect(await activity.textContent()).toContain(me.name);
      // the licence: its state and the days left that the server counts
      await expectText(page.getByTestId('home-licence-state'), 'Active');
      await expectText(page.getByTestId('home-licence-days'), String(licences.in_force!.days_left));
      expect(await page.getByTestId('home-licence').textContent()).toContain('Evaluation licence');
      // and it opens the licences page
      expect(await page.getByTestId('home-licence-all').getAttribute('href')).toBe('/licenses');

      // from the keyboard alone: Tab to "All sign-ins", Enter opens the log on that filter
      await page.locator('main').focus();
      await tabTo(page, 'home-sign-ins-all');
      await page.keyboard.press('Enter');
      await waitForPath(page, '/audit-events');
      expect(new URL(page.url()).searchParams.get('where')).toBe('action equals login');
      const logins = await auditTotal([{ field: 'action', rule: 'equals', value: 'login' }]);
      await expectText(page.getByTestId('table-count'), new RegExp(` of ${logins}$`));
      expect(await page.getByTestId('filter-chip').count()).toBe(1);

      // back home; the newest change's line opens that row's history
      await page.goBack();
      await waitForPath(page, '/home');
      await expect.poll(() => activity.textContent(), { timeout: WAIT }).toContain(marker);
      await activity.locator('a').focus();
      await page.keyboard.press('Enter');
      await waitForPath(page, '/audit-events');
      expect(new URL(page.url()).searchParams.get('where')).toBe(
        `entity equals marker and entity_id equals ${markerId}`,
      );
      await expectText(page.getByTestId('table-count'), '1–1 of 1');

      // the activity card's own link: the log without sign-ins and sign-outs
      await page.goBack();
      await waitForPath(page, '/home');
      await page.getByTestId('home-activity-all').focus();
      await page.keyboard.press('Enter');
      await waitForPath(page, '/audit-events');
      const changes = await auditTotal([
        { field: 'action', rule: 'not_equals', value: 'login' },
        { field: 'action', rule: 'not_equals', value: 'logout' },
      ]);
      await expectText(page.getByTestId('table-count'), new RegExp(` of ${changes}$`));

      // in Russian
      await moveTo(page, `${server.url}/home`);
      await page.getByTestId('lang-ru').click();
      await expectText(page.getByTestId('home-sign-ins').locator('h2'), 'Последние входы');
      await expectText(page.getByTestId('home-activity').locator('h2'), 'Последние действия');
      await expectText(page.getByTestId('home-licence-state'), 'Действует');
      await expectText(page.getByTestId('home-sign-ins-all'), 'Все входы');
    });
  }, 120_000);

  it('shows each card only to those whose permissions allow it', async () => {
    const root = await rootGroup(api);
    const cards = (page: Page) =>
      page.evaluate(() =>
        ['home-sign-ins', 'home-activity', 'home-licence'].filter((id) =>
          document.querySelector(`[data-testid="${id}"]`),
        ),
      );
    const cases: { permissions: string[]; expected: string[] }[] = [
      { permissions: ['users.view'], expected: [] },
      { permissions: ['audit.view'], expected: ['home-sign-ins', 'home-activity'] },
      { permissions: ['licenses.view'], expected: ['home-licence'] },
    ];
    for (const c of cases) {
      const person = await userWith(server, api, { permissions: c.permissions, domains: [root] });
      await onPage(browser, `home-${c.permissions.join('-')}`, async (page) => {
        await keyboardSignIn(page, server, person.login, person.password);
        await page.getByTestId('home-greeting').waitFor();
        if (c.expected.length) await page.getByTestId(c.expected[0]!).waitFor();
        expect(await cards(page), c.permissions.join()).toEqual(c.expected);
        // what a card shows has loaded and is allowed: no refusal in it
        expect(await page.locator('[data-testid^="home-"] [role="alert"]').count()).toBe(0);
      });
    }
  }, 120_000);

  it('counts devices online and offline and failed tasks, each a link into the table that shows them', async () => {
    const root = await rootGroup(api);
    // two panels; one says it is alive over HTTP, as a device does (Basic auth with what the console shows)
    const made = [];
    for (const name of ['Gate', 'Lobby']) {
      const serial = `HOME-${name}-${uid()}`;
      made.push(
        (
          await getCommand('device.create').run(
            { api },
            { name: `${name} panel`, type: 'panel', serial_number: serial, domain_id: root },
          )
        ).data,
      );
    }
    const c = await getCommand('device.credentials').run({ api }, { id: made[0]!.id });
    const beat = await fetch(`${c.http_url}/heartbeat`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Basic ${Buffer.from(`${c.login}:${c.password}`).toString('base64')}`,
      },
      body: JSON.stringify({ firmware_version: '1.0.0' }),
    });
    expect(beat.ok).toBe(true);
    const total = async (status: string) =>
      (
        await getCommand('device.list').run(
          { api },
          { limit: 1, filters: [{ field: 'status', rule: 'equals', value: status }] },
        )
      ).meta.total;
    const online = await total('online');
    const offline = await total('offline');
    expect(online).toBeGreaterThanOrEqual(1);
    expect(offline).toBeGreaterThanOrEqual(1);
    const failed = (await getCommand('device.tasks').run({ api }, { limit: 1, state: 'error' })).meta.total;

    await onPage(browser, 'home-devices', async (page) => {
      await keyboardSignIn(page, server, server.adminLogin, server.adminPassword);
      await expectText(page.getByTestId('home-devices-online-value'), String(online));
      await expectText(page.getByTestId('home-devices-offline-value'), String(offline));
      await expectText(page.getByTestId('home-tasks-failed-value'), String(failed));
      // online opens the devices table on that filter, from the keyboard
      await tabTo(page, 'home-devices-online', 150);
      await page.keyboard.press('Enter');
      await waitForPath(page, '/devices');
      await expectText(page.getByTestId('table-count'), new RegExp(`[^0-9]${online}$`));
      expect(new URL(page.url()).searchParams.get('where')).toBe('status equals online');
      // failed tasks open the task list showing the failed ones
      await page.goBack();
      await page.getByTestId('home-tasks-failed').focus();
      await page.keyboard.press('Enter');
      await waitForPath(page, '/devices/tasks');
      expect(new URL(page.url()).searchParams.get('where')).toBe('state equals error');
    });
  }, 120_000);
});
