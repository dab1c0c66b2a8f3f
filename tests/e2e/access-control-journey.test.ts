/**
 * Issue 21's first Done-when line, in Chromium with a simulated panel (on the embedded broker): an
 * administrator makes, in the console, a weekday 09:00–18:00 schedule, a holiday, a card and an access rule
 * over them on the panel (shareable), and grants a guest a QR pass with a pass limit of 2 on that rule. The
 * panel decides at the door from what it was sent, on its own clock (its control API, `POST /control/clock`):
 * the card passes on Wednesday 2 December 2026 at 10:00 (the project's zone, UTC+2), is refused at 19:00
 * ("outside schedule") and on the holiday, Wednesday 9 December ("holiday"); the guest QR opens twice and is
 * refused the third time ("pass limit reached"); the card revoked on /identifiers leaves the panel, and its
 * next presentation is refused ("revoked"). The server's clock stands at that Wednesday 10:00 too (a
 * ManualClock): the pass's validity and state, and the passes it counts from the panel's events, are read at
 * the same instant the panel decides at. The ACS log, open in a second tab from before the first
 * presentation, shows each decision as it comes, with its reason in words, without a reload.
 * Every wait polls a state; nothing sleeps.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { getCommand } from '@lintel/commands';
import { RealtimeTopics, type ApiClient } from '@lintel/core';
import { ManualClock } from '@lintel/server';
import { SimulatedDevice } from '@lintel/device-sim';
import { type TestServer } from '../support/server';
import { admin, everyFeatureOn, licence, rootGroup, uid } from '../support/fixtures';
import { keyboardSignIn, pickWithKeyboard } from '../support/console';
import { typeTime } from '../support/keyboard-form';
import { WAIT, consoleWorld, expectText, onPage, repo, waitForPath } from '../support/web';
import { until } from '../devices/mqtt-clients';

/** Wednesday 2 December 2026, 10:00 in the project's zone (Etc/GMT-2, UTC+2, the default). */
const WEDNESDAY_10 = '2026-12-02T08:00:00Z';
const WEDNESDAY_19 = '2026-12-02T17:00:00Z';
const HOLIDAY = '2026-12-09';
const HOLIDAY_10 = '2026-12-09T08:00:00Z';
const THURSDAY_10 = '2026-12-10T08:00:00Z';

const clock = new ManualClock(new Date(WEDNESDAY_10));
let server: TestServer;
let browser: Browser;
consoleWorld({ config: { clock } }, (w) => ({ server, browser } = w));

const tag = uid();
const CARD = '12345678';
const names = {
  door: `Main door ${tag}`,
  schedule: `Office hours ${tag}`,
  holiday: `Founders' day ${tag}`,
  card: `Card of Ann ${tag}`,
  rule: `Office ${tag}`,
};

/** The panel's own HTTP control API: its clock, and an identifier presented at its reader. */
async function control(sim: SimulatedDevice, uri: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`http://${sim.httpHost}:${sim.httpPort}${uri}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

async function present(
  sim: SimulatedDevice,
  at: string,
  number: string,
  type: 'card' | 'qr' = 'card',
): Promise<Record<string, unknown>> {
  expect(await control(sim, '/control/clock', { time: at })).toMatchObject({ time: expect.any(String) });
  return control(sim, '/control/present', { number, type, lock: 1 });
}

/** The ACS log's rows that match: the identifier, the decision and the reason, in one row's text. */
const logRows = (log: Page, number: string, decision: string, reason = '') =>
  log
    .locator('[role="grid"] [role="row"]', { hasText: number })
    .filter({ hasText: new RegExp(`${decision}.*${reason.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`) });

/** A page of the side menu, opened as a person does (no reload of the console). */
async function openMenu(page: Page, link: string, pathname: string): Promise<void> {
  await page.getByTestId('side-menu').getByRole('link', { name: link, exact: true }).click();
  await waitForPath(page, pathname);
}

/** A family's add form, from its list's Add button. */
async function openAdd(page: Page, link: string, pathname: string, noun: string): Promise<void> {
  await openMenu(page, link, pathname);
  await page.getByTestId(`add-${noun}`).click();
  await waitForPath(page, `${pathname}/add`);
}

async function expectRows(log: Page, number: string, decision: string, reason: string, n: number) {
  await expect.poll(() => logRows(log, number, decision, reason).count(), { timeout: WAIT }).toBe(n);
}

describe("issue 21's Done-when: access control end to end", () => {
  it('a schedule, a holiday, a guest pass limit and a revoke decided at the panel, each live in the ACS log', async () => {
    const api: ApiClient = await admin(server);
    await licence(server, everyFeatureOn());
    // the panel, online on the embedded broker (adding devices is issue 16's journey)
    const serial = `ACSJ-${tag}`;
    const door = (
      await getCommand('device.create').run(
        { api },
        {
          name: names.door,
          type: 'panel',
          serial_number: serial,
          domain_id: await rootGroup(api),
          protocol: 'mqtt',
        },
      )
    ).data;
    const c = await getCommand('device.credentials').run({ api }, { id: door.id });
    const sim = new SimulatedDevice({
      serial,
      management: { protocol: 'mqtt', url: c.mqtt.url, login: c.login, password: c.password },
      heartbeatMs: 0,
      // the platform's acknowledgement of each presentation is asserted: under a loaded machine it may take
      // longer than a panel's usual 5 s, which would leave the event for the next push (not a failure)
      pushTimeoutMs: 60_000,
    });
    await sim.start();
    try {
      await until(
        async () => (await getCommand('device.get').run({ api }, { id: door.id })).status === 'online',
      );
      await onPage(
        browser,
        'access-control-journey',
        async (page) => {
          await journey(page, api, sim);
        },
        { timezoneId: 'UTC' },
      );
    } finally {
      await sim.stop().catch(() => undefined);
    }
  }, 180_000);
});

async function journey(page: Page, api: ApiClient, sim: SimulatedDevice): Promise<void> {
  await keyboardSignIn(page, server, server.adminLogin, server.adminPassword);

  // ---- the schedule: Monday to Friday, the default window 09:00–18:00 ----
  await openAdd(page, 'Schedules', '/schedules', 'schedule');
  await page.getByRole('textbox', { name: 'Name' }).waitFor();
  await page.keyboard.type(names.schedule);
  await page.getByLabel(/^From/).fill('2026-11-01');
  for (const day of ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday']) {
    await page.getByRole('checkbox', { name: day }).focus();
    await page.keyboard.press('Space');
  }
  expect(await page.getByRole('checkbox', { name: 'Saturday' }).isChecked()).toBe(false);
  // the window is a time of day: the default reads 09:00–18:00, and the closing time is typed as one
  expect(await page.getByLabel(/^Opens/).inputValue()).toBe('09:00');
  expect(await page.getByLabel(/^Closes/).inputValue()).toBe('18:00');
  await page.getByLabel(/^Closes/).focus();
  await typeTime(page, '18:30');
  expect(await page.getByLabel(/^Closes/).inputValue()).toBe('18:30');
  await page.keyboard.press('Control+Enter');
  await waitForPath(page, '/schedules');
  // the table shows the window as times of day; the schedule holds seconds after midnight
  const scheduleRow = page.locator('[role="row"]', { hasText: names.schedule });
  await scheduleRow.locator('[role="gridcell"]', { hasText: /^18:30$/ }).waitFor({ timeout: WAIT });
  await scheduleRow.locator('[role="gridcell"]', { hasText: /^09:00$/ }).waitFor({ timeout: WAIT });
  const stored = (await getCommand('schedule.list').run({ api }, {})).data.find(
    (s) => s.name === names.schedule,
  );
  expect(stored).toMatchObject({ time_from: 32_400, time_to: 66_600 });

  // ---- the holiday, the whole project's ----
  await openAdd(page, 'Holidays', '/holidays', 'holiday');
  await page.getByRole('textbox', { name: 'Name' }).waitFor();
  await page.keyboard.type(names.holiday);
  await page.getByLabel(/^Date/).fill(HOLIDAY);
  await page.keyboard.press('Control+Enter');
  await waitForPath(page, '/holidays');

  // ---- the card: active as it is made ----
  await openAdd(page, 'Identifiers', '/identifiers', 'identifier');
  await page.getByRole('textbox', { name: 'Name' }).waitFor();
  await page.keyboard.type(names.card);
  expect(await page.getByRole('combobox', { name: 'Type', exact: true }).inputValue()).toBe('card');
  await page.getByRole('textbox', { name: 'Value', exact: true }).fill(CARD);
  expect(await page.getByRole('checkbox', { name: 'Active', exact: true }).isChecked()).toBe(true);
  await page.keyboard.press('Control+Enter');
  await waitForPath(page, '/identifiers');
  const card = (await getCommand('identifier.list').run({ api }, { search: CARD } as never)).data.find(
    (i) => i.value === CARD,
  )!;
  expect(card).toMatchObject({ type: 'card', is_active: true, name: names.card });

  // ---- the rule: the door, the schedule, the card; shareable with guests ----
  await openAdd(page, 'Access rules', '/access-rules', 'access_rule');
  await page.getByRole('textbox', { name: 'Name' }).waitFor();
  await page.keyboard.type(names.rule);
  for (const [field, name] of [
    ['devices', names.door],
    ['time_rules', names.schedule],
    ['identifiers', names.card],
  ] as const) {
    await page.getByTestId(`field-${field}`).focus();
    await pickWithKeyboard(page, name, name);
    await expectText(page.getByTestId(`chip-${field}`).first(), new RegExp(name.replace(/'/g, '.')));
  }
  await page.getByRole('checkbox', { name: 'Shareable' }).focus();
  await page.keyboard.press('Space');
  await page.keyboard.press('Control+Enter');
  await waitForPath(page, '/access-rules');

  // ---- the guest's QR: on the rule, valid today, a pass limit of 2 ----
  await openMenu(page, 'Guest access', '/guest-access');
  await page.getByRole('checkbox', { name: new RegExp(names.rule) }).check();
  await page.getByLabel('Valid from').fill('2026-12-02T00:00');
  await page.getByLabel('Valid to').fill('2026-12-02T23:00');
  await page.getByRole('textbox', { name: 'Pass limit' }).fill('2');
  await page.getByRole('button', { name: 'Grant guest access' }).click();
  await page.getByTestId('guest-url').waitFor();
  const pass = (await getCommand('guest_access.list').run({ api }, {} as never)).data[0]!;
  // the server reads it at its own clock: valid now, none of its passes used
  expect(pass).toMatchObject({ pass_limit: 2, passes_count: 0, state: 'valid' });

  // ---- the sync: the panel holds the card and the QR, with the schedule's profile and its holiday ----
  const cardUid = `identifier-${card.id}`;
  await expect
    .poll(
      () =>
        sim.identifiers.has(cardUid) &&
        sim.identifiers.has(`identifier-${pass.id}`) &&
        sim.timeProfiles.size > 0,
      { timeout: WAIT },
    )
    .toBe(true);
  expect(JSON.stringify([...sim.timeProfiles.values()])).toContain(HOLIDAY);

  // ---- the ACS log in a second tab (a session of its own), open before anything happens at the door ----
  const log = await page.context().newPage();
  await keyboardSignIn(log, server, server.adminLogin, server.adminPassword);
  await log.getByTestId('side-menu').getByRole('link', { name: 'Access-control log' }).click();
  await waitForPath(log, '/access-control/events');
  // nothing decided at a door yet
  await log.getByTestId('table-empty').waitFor();
  const sockets = server.server.context.sockets!;
  await expect
    .poll(() => sockets.subscribers(RealtimeTopics.accessControl), { timeout: WAIT })
    .toBeGreaterThan(0);
  // a mark in the page: a reload would lose it
  await log.evaluate(() => ((window as unknown as { stayed: boolean }).stayed = true));

  // Wednesday 10:00: in the window
  expect(await present(sim, WEDNESDAY_10, CARD)).toMatchObject({ granted: true, acknowledged: true });
  await expectRows(log, CARD, 'Granted', '', 1);
  // the guest's QR at the reader: twice, then the pass limit
  for (const n of [1, 2]) {
    expect(await present(sim, WEDNESDAY_10, pass.value, 'qr')).toMatchObject({ granted: true });
    await expectRows(log, pass.value, 'Granted', '', n);
  }
  expect(await present(sim, WEDNESDAY_10, pass.value, 'qr')).toMatchObject({
    granted: false,
    reason: 'pass_limit_reached',
  });
  await expectRows(log, pass.value, 'Denied', 'Pass limit reached', 1);
  expect(sim.locks[1].opened).toBe(3);
  // the server counted the panel's two passes of the guest's pass
  expect((await getCommand('guest_access.list').run({ api }, {} as never)).data[0]).toMatchObject({
    passes_count: 2,
  });

  // 19:00, on both clocks (the server keeps a device's time, but never later than its own)
  clock.set(new Date(WEDNESDAY_19));
  expect(await present(sim, WEDNESDAY_19, CARD)).toMatchObject({
    granted: false,
    reason: 'outside_schedule',
  });
  await expectRows(log, CARD, 'Denied', 'Outside the schedule', 1);
  // the holiday, a week later, a Wednesday at 10:00
  clock.set(new Date(HOLIDAY_10));
  expect(await present(sim, HOLIDAY_10, CARD)).toMatchObject({ granted: false, reason: 'holiday' });
  await expectRows(log, CARD, 'Denied', 'Closed for a holiday', 1);

  // ---- the next day the card is revoked on /identifiers: it leaves the panel, and is refused there ----
  clock.set(new Date(THURSDAY_10));
  await openMenu(page, 'Identifiers', '/identifiers');
  const row = page.locator('[role="row"]', { hasText: CARD });
  await row.getByRole('checkbox').check();
  await page.getByTestId('bulk-revoke').click();
  const dialog = page.getByRole('dialog');
  await expectText(dialog.locator('h2').first(), 'Revoke identifiers');
  await dialog.getByRole('button', { name: 'Revoke' }).click();
  await expect
    .poll(async () => (await getCommand('identifier.get').run({ api }, { id: card.id })).is_active, {
      timeout: WAIT,
    })
    .toBe(false);
  await expect.poll(() => sim.identifiers.has(cardUid), { timeout: WAIT }).toBe(false);
  // the panel knows only that it does not hold the card; the server names why
  expect(await present(sim, THURSDAY_10, CARD)).toMatchObject({ granted: false, reason: 'unknown' });
  await expectRows(log, CARD, 'Denied', 'The identifier is revoked', 1);

  // every decision in the log, none lost nor doubled, and the tab never reloaded
  await expectRows(log, CARD, 'Granted', '', 1);
  await expect.poll(() => log.locator('[role="grid"] [role="row"]', { hasText: CARD }).count()).toBe(4);
  await expect.poll(() => log.locator('[role="grid"] [role="row"]', { hasText: pass.value }).count()).toBe(3);
  expect(await log.evaluate(() => (window as unknown as { stayed?: boolean }).stayed)).toBe(true);
  const dir = path.join(repo, '.test-results/e2e');
  fs.mkdirSync(dir, { recursive: true });
  await log.screenshot({ path: path.join(dir, 'access-control-journey-log.png'), fullPage: true });
}
