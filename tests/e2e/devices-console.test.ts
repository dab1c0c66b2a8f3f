/**
 * Issue 25 in Chromium, on the device side: the devices list follows its rows' live state from the
 * websocket (item 3), enum values and statuses read as words and badges (item 6), the device pages are the
 * generic table and form (item 7), "Delete all matching" asks with the exact count and is cancellable
 * (item 5). One server (with a manual clock, so a device goes offline when the test says) and one browser.
 */
import { describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { getCommand, type Device } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { ManualClock } from '@lintel/server';
import { sql } from 'kysely';
import { type TestServer } from '../support/server';
import { admin, rootGroup, uid } from '../support/fixtures';
import { keyboardSignIn } from '../support/console';
import { consoleWorld, expectText, moveTo, onPage, repo, WAIT, waitForPath } from '../support/web';

const clock = new ManualClock();
let server: TestServer;
let browser: Browser;
consoleWorld({ config: { clock } }, (w) => ({ server, browser } = w));

const SIZE = { width: 1440, height: 900 };
/** A screenshot of the page as a person sees it, kept under .test-results/e2e/shots for a look. */
const shot = (page: Page, name: string) =>
  page.screenshot({ path: `${repo}/.test-results/e2e/shots/${name}.png` }).then(() => undefined);

async function makeDevice(api: ApiClient, name: string): Promise<Device> {
  const serial = `LIVE-${uid()}`;
  return (
    await getCommand('device.create').run(
      { api },
      {
        name: `${name} ${serial}`,
        type: 'accesscontroller',
        serial_number: serial,
        domain_id: await rootGroup(api),
      },
    )
  ).data;
}

/** The device says it is alive over HTTP, as a device does (Basic auth with the credentials Lintel issued). */
async function heartbeat(api: ApiClient, id: number): Promise<void> {
  const c = await getCommand('device.credentials').run({ api }, { id });
  const res = await fetch(`${c.http_url}/heartbeat`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Basic ${Buffer.from(`${c.login}:${c.password}`).toString('base64')}`,
    },
    body: JSON.stringify({ firmware_version: '1.0.0' }),
  });
  expect(res.ok).toBe(true);
}

/** The grid's row showing `text`, and its cell of the column titled `column`. */
async function cellOf(page: Page, text: string, column: string) {
  // the grid's header comes with its first page: wait for it, not read it before it is there
  const columns = page.locator('[role="columnheader"]');
  await expect
    .poll(async () => (await columns.allTextContents()).some((h) => h.trim().startsWith(column)), {
      timeout: WAIT,
    })
    .toBe(true);
  const headers = await columns.allTextContents();
  const index = headers.findIndex((h) => h.trim().startsWith(column));
  expect(index, `no column ${column} in ${headers.join(' | ')}`).toBeGreaterThan(0);
  return page.locator('[role="row"]', { hasText: text }).locator('[role="gridcell"]').nth(index);
}

describe('devices in the console (issue 25)', () => {
  it('item 3: /devices follows a device going offline and online again without a reload', async () => {
    const api = await admin(server);
    const device = await makeDevice(api, 'Live gate');
    await heartbeat(api, device.id);
    await onPage(
      browser,
      'devices-live',
      async (page) => {
        await keyboardSignIn(
          page,
          server,
          server.adminLogin,
          server.adminPassword,
          `/devices?q=${device.serial_number}`,
        );
        const status = await cellOf(page, device.serial_number, 'Status');
        await expectText(status, /^online$/i);
        // three heartbeats missed by the server's clock, then the sweep: offline, on the open page
        clock.advance(31_000);
        expect(await server.server.context.devices.sweep()).toBeGreaterThanOrEqual(1);
        await expectText(status, /^offline$/i);
        await heartbeat(api, device.id);
        await expectText(status, /^online$/i);
        await shot(page, 'devices-live');
      },
      SIZE,
    );
  }, 120_000);

  it('item 6: codes read as words in both languages, the status as a badge; the login banner names labels', async () => {
    const api = await admin(server);
    const device = await makeDevice(api, 'Words');
    await heartbeat(api, device.id);
    // what remote control and the import record (their codes were shown as they are)
    await sql`insert into audit_events (project_id, user_id, action, entity, entity_id)
      select project_id, null, a, e, ${String(device.id)}
      from devices, (values ('remote_lock_opened', 'device'), ('import', 'users')) v(a, e)
      where id = ${device.id}`.execute(server.server.context.db);
    await onPage(
      browser,
      'devices-words',
      async (page) => {
        // an empty sign-in names the fields as the form labels them, not their keys
        await page.goto(`${server.url}/login`);
        await page.getByRole('button', { name: 'Sign in', exact: true }).click();
        await expectText(page.getByTestId('form-error'), 'Check fields data: Login or e-mail, Password');
        await keyboardSignIn(
          page,
          server,
          server.adminLogin,
          server.adminPassword,
          `/devices?q=${device.serial_number}`,
        );
        await expectText(await cellOf(page, device.serial_number, 'Type'), 'Access controller');
        const status = await cellOf(page, device.serial_number, 'Status');
        await expectText(status, 'Online');
        expect(await status.locator('[data-tone="good"]').count()).toBe(1);
        await shot(page, 'devices-words');
        await moveTo(page, `${server.url}/audit-events`);
        await waitForPath(page, '/audit-events');
        const rows = page.locator('[role="row"]');
        await expectText(rows.filter({ hasText: 'Lock opened remotely' }).first(), /Device/);
        await rows.filter({ hasText: 'Users imported' }).first().waitFor();
        expect(await page.locator('[role="grid"]').textContent()).not.toMatch(
          /remote_lock_opened|\bimport\b/,
        );
        // the same in Russian
        await page.getByTestId('lang-ru').click();
        await moveTo(page, `${server.url}/devices?q=${device.serial_number}`);
        await expectText(await cellOf(page, device.serial_number, 'Тип'), 'Контроллер доступа');
        await expectText(await cellOf(page, device.serial_number, 'Статус'), 'В сети');
        await moveTo(page, `${server.url}/audit-events`);
        await rows.filter({ hasText: 'Замок открыт удалённо' }).first().waitFor();
        await page.getByTestId('lang-en').click();
      },
      SIZE,
    );
  }, 120_000);

  it('item 7: tasks and search are the generic table and form, one menu item lit, the device card whole and live', async () => {
    const api = await admin(server);
    const device = await makeDevice(api, 'Pages');
    await getCommand('device.restart').run({ api }, { id: device.id });
    await heartbeat(api, device.id);
    await onPage(
      browser,
      'devices-pages',
      async (page) => {
        await keyboardSignIn(page, server, server.adminLogin, server.adminPassword, `/devices/tasks`);
        // the generic table: its search, its filters, its cursor (j/k)
        const table = page.getByTestId('resource-table');
        await table.waitFor();
        await expectText(page.locator('[role="row"]', { hasText: device.name }), /Restart/);
        await page.getByTestId('resource-grid').focus();
        await page.keyboard.press('j');
        await expect
          .poll(() => page.getByTestId('resource-grid').getAttribute('aria-activedescendant'))
          .toBeTruthy();
        await page.keyboard.press('/');
        expect(await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe(
          'table-search',
        );
        await page.keyboard.type(device.serial_number);
        await expectText(page.getByTestId('table-count'), /1$/);
        // one item of the menu is the page's
        const lit = page.getByTestId('side-menu').locator('[aria-current="page"]');
        expect(await lit.count()).toBe(1);
        await expectText(lit, 'Device tasks');
        await shot(page, 'device-tasks');

        // the network search is the generic form: its fields, labels and Approve look
        await moveTo(page, `${server.url}/devices/search`);
        const form = page.getByTestId('device-search-form');
        await form.getByTestId('field-start_ip').waitFor();
        expect(await form.getByTestId('field-end_ip').count()).toBe(1);
        expect(
          await page
            .locator('input:not([data-testid]):not([type="checkbox"]):not([role="combobox"])')
            .count(),
        ).toBe(0);
        expect(await lit.count()).toBe(1);
        await expectText(lit, 'Network search');
        await shot(page, 'device-search');

        // the device's General tab says whether it is online, live; the card's times are whole
        await moveTo(page, `${server.url}/devices/${device.id}/edit`);
        const badge = page.getByTestId('device-status-badge');
        await expectText(badge, 'Online');
        clock.advance(31_000);
        expect(await server.server.context.devices.sweep()).toBeGreaterThanOrEqual(1);
        await expectText(badge, 'Offline');
        const cut = await page
          .getByTestId('device-heartbeat')
          .locator('dd')
          .evaluateAll((dds) => dds.filter((d) => d.scrollWidth > d.clientWidth).length);
        expect(cut).toBe(0);
        await expectText(lit, 'Devices');
        await shot(page, 'device-general');
      },
      SIZE,
    );
  }, 120_000);

  it('item 5: "Delete all matching" collects cancellably (Esc), opens nothing after a cancel, asks the exact count', async () => {
    const tag = `bulk-${uid()}`;
    await sql`insert into markers (project_id, name, color)
      select (select id from projects order by id limit 1), ${tag} || '-' || g, '#336699'
      from generate_series(1, 130) g`.execute(server.server.context.db);
    await onPage(
      browser,
      'delete-matching',
      async (page) => {
        await keyboardSignIn(
          page,
          server,
          server.adminLogin,
          server.adminPassword,
          `/general-settings/markers?q=${tag}`,
        );
        await expectText(page.getByTestId('table-count'), /of 130$/);
        await page.getByRole('checkbox', { name: 'Select the loaded rows' }).click();
        await page.getByTestId('select-matching').click();
        await expectText(page.getByTestId('selected-count'), 'All 130 matching rows are selected');
        // the collection of the matching rows is held at the server's door until Esc was pressed
        let release!: () => void;
        const held = new Promise<void>((r) => (release = r));
        let asked = 0;
        await page.route(
          (url) => url.pathname === '/api/v0/markers' && url.searchParams.get('limit') === '1000',
          async (route) => {
            asked++;
            await held;
            await route.continue().catch(() => undefined);
          },
        );
        await page.getByTestId('bulk-delete').click();
        await page.getByTestId('bulk-collecting').waitFor();
        await expect.poll(() => asked).toBe(1);
        // the request held ends aborted by the cancel (or answered): either way nothing follows from it
        const settled = new Promise((r) => {
          page.once('requestfailed', r);
          page.once('requestfinished', r);
        });
        await page.keyboard.press('Escape');
        await page.getByTestId('bulk-collecting').waitFor({ state: 'detached' });
        release();
        await settled;
        await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r(null))));
        expect(await page.getByTestId('confirm-approve').count()).toBe(0);
        await expectText(page.getByTestId('selected-count'), 'All 130 matching rows are selected');
        await page.unrouteAll({ behavior: 'ignoreErrors' });
        // asked again: the question counts the rows exactly
        await page.getByTestId('bulk-delete').click();
        await page.getByTestId('confirm-cancel').waitFor();
        await expectText(page.locator('p', { hasText: '(items: ' }), /\(items: 130\)/);
        await shot(page, 'delete-matching');
        await page.keyboard.press('Escape');
        await page.getByTestId('confirm-cancel').waitFor({ state: 'detached' });
        await expectText(page.getByTestId('table-count'), /of 130$/);
      },
      SIZE,
    );
  }, 120_000);

  it('item 11: the home draws the last day per hour — events, decisions, devices online, failed tasks — by keyboard too', async () => {
    const api = await admin(server);
    const device = await makeDevice(api, 'Charts');
    await heartbeat(api, device.id);
    const c = await getCommand('device.credentials').run({ api }, { id: device.id });
    const n = uid();
    const pushed = await fetch(`${c.http_url}/logs`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Basic ${Buffer.from(`${c.login}:${c.password}`).toString('base64')}`,
      },
      body: JSON.stringify({
        events: [
          { event_id: `${n}-1`, kind: 'identifier_used', identifier_number: '1', lock: 1, result: 'granted' },
          { event_id: `${n}-2`, kind: 'identifier_used', identifier_number: '2', lock: 1, result: 'granted' },
          { event_id: `${n}-3`, kind: 'identifier_refused', identifier_number: '3', result: 'denied' },
        ],
      }),
    });
    expect(pushed.status).toBe(200);
    const now = (await getCommand('device.activity').run({ api }, {})).hours.at(-1)!;
    expect(now.granted).toBeGreaterThanOrEqual(2);
    await onPage(
      browser,
      'home-charts',
      async (page) => {
        await keyboardSignIn(page, server, server.adminLogin, server.adminPassword);
        const decisions = page.getByTestId('chart-decisions-plot');
        await decisions.waitFor();
        // reached by the keyboard: Tab stops on the chart; End is the current hour, ← the one before
        await decisions.focus();
        await page.keyboard.press('End');
        await expectText(
          page.getByTestId('chart-decisions-value'),
          new RegExp(`Granted: ${now.granted}, Refused: ${now.denied}$`),
        );
        await page.keyboard.press('ArrowLeft');
        await expectText(page.getByTestId('chart-decisions-value'), /Granted: \d+, Refused: \d+$/);
        await expectText(page.getByTestId('chart-online-value'), new RegExp(`Online: ${now.online}$`));
        await page.getByTestId('chart-events-plot').waitFor();
        await page.getByTestId('chart-failed-plot').waitFor();
        await shot(page, 'home-charts');
        await page.getByTestId('lang-ru').click();
        await expectText(
          page.getByTestId('chart-online').locator('figcaption span').first(),
          'Устройства в сети',
        );
        await shot(page, 'home-charts-ru');
        await page.getByTestId('lang-en').click();
      },
      SIZE,
    );
  }, 120_000);
});
