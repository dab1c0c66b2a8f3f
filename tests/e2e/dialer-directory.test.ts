/**
 * Issue 23 item 4 in Chromium: the dialer's doors, contacts and recents, from the keyboard, against a real
 * Kamailio and Lintel. A concierge (call permissions, the numbers and the history to read; no device
 * permission) registers; from the palette he shows the doors, finds a simulated panel (online on mqtt, the
 * embedded broker) by name, opens it with Enter (the panel's lock opens) and calls its SIP number with
 * Shift+Enter; a barrier without a number is listed, a monitor is not. Contacts: their count, grouped by
 * first letter with "?" for a name without one (his own number left out), searched, refreshed, and a call
 * with Enter. Recents: his
 * calls only, by day in the page's locale, with direction, result and duration, 50 a page.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { sql } from 'kysely';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import type { SipConfig } from '@lintel/server';
import { SimulatedDevice } from '@lintel/device-sim';
import { startTestServer, type TestServer } from '../support/server';
import { admin, everyFeatureOn, licence, rootGroup, uid } from '../support/fixtures';
import { keyboardSignIn } from '../support/console';
import { alertWatch, ensureBuilt, expectText, repo, WAIT, webDist } from '../support/web';
import { sipTestConfig } from '../sip/sip-support';
import { conciergeUser, endCalls, launchDialerChromium, sipNumber } from '../support/dialer';
import { until } from '../devices/mqtt-clients';

let server: TestServer;
let browser: Browser;
let sip: SipConfig;
let api: ApiClient;
let root: number;
let context: BrowserContext;
let page: Page;
let own: string;
let next = 3000 + Math.floor(Math.random() * 5000);
const sims: SimulatedDevice[] = [];
const numbers: Record<string, string> = {};
const shots = path.join(repo, '.test-results/e2e');

const num = () => String(next++);
const password = () => `Pw${uid()}x9`;

/** A device of the root group, its simulator online on mqtt, and a SIP number of its own when asked. */
async function device(name: string, type: 'panel' | 'barrier' | 'monitor', withNumber: boolean) {
  const serial = `DD-${uid()}`;
  const { data } = await getCommand('device.create').run(
    { api },
    { name, type, serial_number: serial, domain_id: root, protocol: 'mqtt' },
  );
  const c = await getCommand('device.credentials').run({ api }, { id: data.id });
  const sim = new SimulatedDevice({
    serial,
    management: { protocol: 'mqtt', url: c.mqtt.url, login: c.login, password: c.password },
    heartbeatMs: 0,
  });
  sims.push(sim);
  await sim.start();
  await until(async () => (await getCommand('device.get').run({ api }, { id: data.id })).status === 'online');
  let number: string | null = null;
  if (withNumber) {
    number = num();
    await getCommand('sip_number.create').run(
      { api },
      { number, name, domain_id: root, device_id: data.id, password: password() },
    );
  }
  return { id: data.id, sim, number };
}

beforeAll(async () => {
  ensureBuilt();
  sip = await sipTestConfig();
  server = await startTestServer({ webDir: webDist, config: { sip } });
  await licence(server, everyFeatureOn());
  api = await admin(server);
  root = await rootGroup(api);
  browser = await launchDialerChromium(['--allow-loopback-in-peer-connection']);
}, 180_000);

afterAll(async () => {
  await Promise.all(sims.map((s) => s.stop().catch(() => undefined)));
  await context?.close().catch(() => undefined);
  await browser?.close();
  await server?.close();
});

const card = (number: string) => page.locator(`[data-testid="call-card"][data-number="${number}"]`);

/** Runs a dialer action of the palette by its words. */
async function palette(words: string, action: string): Promise<void> {
  await page.keyboard.press('Control+k');
  await page.getByTestId('palette-input').waitFor();
  await page.keyboard.type(words);
  await page.locator(`[cmdk-item][data-key="action:dialer.${action}"]`).first().waitFor();
  await page.keyboard.press('Enter');
}

describe('the dialer: doors, contacts, recents', { timeout: 180_000 }, () => {
  let entrance: Awaited<ReturnType<typeof device>>;
  let gate: Awaited<ReturnType<typeof device>>;
  let monitor: Awaited<ReturnType<typeof device>>;

  it('registers a concierge with call permissions and no device permission', async () => {
    own = num();
    const numberId = await sipNumber(api, root, own, password());
    [entrance, gate, monitor] = [
      await device(`Main entrance ${uid()}`, 'panel', true),
      await device(`Garage gate ${uid()}`, 'barrier', false),
      await device(`Hall monitor ${uid()}`, 'monitor', true),
    ];
    // contacts: names in two scripts and one without a letter
    for (const name of ['Zoe Night', 'Борис Лифт', '42 flat']) {
      numbers[name] = num();
      await getCommand('sip_number.create').run(
        { api },
        { number: numbers[name]!, name, domain_id: root, password: password() },
      );
    }
    const { login, password: userPassword } = await conciergeUser(api, root, numberId, 'Desk Doors', [
      'calls.concierge_receive',
      'calls.history',
      'sip_numbers.view',
    ]);
    context = await browser.newContext({
      locale: 'en-US',
      timezoneId: 'UTC',
      viewport: { width: 1440, height: 900 },
      permissions: ['microphone', 'camera'],
    });
    page = await context.newPage();
    page.setDefaultTimeout(WAIT);
    await keyboardSignIn(page, server, login, userPassword);
    await page.getByTestId('dialer-button').and(page.locator('[data-state="registered"]')).waitFor();
  });

  it('finds a door, opens it with Enter and calls it with Shift+Enter', async () => {
    await palette('dialer: doors', 'tab_doors');
    const search = page.getByTestId('doors-search');
    await expect.poll(() => search.evaluate((e) => e === document.activeElement)).toBe(true);
    // the panel and the barrier; not the monitor, which opens nothing
    const rows = page.getByTestId('door-row');
    await expect.poll(() => rows.count()).toBe(2);
    expect(await page.locator(`[data-testid="door-row"][data-id="${monitor.id}"]`).count()).toBe(0);
    await expectText(page.locator(`[data-testid="door-row"][data-id="${gate.id}"]`), /no SIP number/);

    await page.keyboard.type('main entr');
    await expect.poll(() => rows.count()).toBe(1);
    await page.locator(`[data-testid="door-row"][data-id="${entrance.id}"][aria-current="true"]`).waitFor();
    const opened = alertWatch(page, 'success', /Door opened: Main entrance/);
    await page.keyboard.press('Enter');
    await opened();
    expect(entrance.sim.locks[1].opened).toBe(1);
    expect(gate.sim.locks[1].opened).toBe(0);

    fs.mkdirSync(shots, { recursive: true });
    await page.screenshot({ path: path.join(shots, 'dialer-doors.png') });
    await page.keyboard.press('Shift+Enter');
    await card(entrance.number!).waitFor();
    await endCalls(page);
    // a call ended at once, before its INVITE went out, is no media failure
    expect(await page.getByTestId('alert-error').count()).toBe(0);

    // the chosen door's actions are in the palette too
    await palette('open the chosen door', 'door_open_chosen');
    await expect.poll(() => entrance.sim.locks[1].opened).toBe(2);

    // "Call a number" goes back to the keypad, the focus in the number
    await palette('call a number', 'dial');
    await expect
      .poll(() => page.getByTestId('dialer-entry').evaluate((e) => e === document.activeElement))
      .toBe(true);
  });

  it('lists the contacts by first letter with their count, searches, refreshes and calls with Enter', async () => {
    await palette('dialer: contacts', 'tab_contacts');
    const count = page.getByTestId('contacts-count');
    // every active number of his group but his own: the three contacts, the panel's and the monitor's
    await expectText(count, 'Contacts: 5');
    const letters = () =>
      page.getByTestId('contact-group').evaluateAll((g) => g.map((e) => e.getAttribute('data-letter')));
    await expect.poll(letters).toEqual(['H', 'M', 'Z', 'Б', '?']);
    expect(await page.locator(`[data-testid="contact-row"][data-number="${own}"]`).count()).toBe(0);

    // a number added elsewhere shows after a refresh
    numbers['Anna Porter'] = num();
    await getCommand('sip_number.create').run(
      { api },
      { number: numbers['Anna Porter'], name: 'Anna Porter', domain_id: root, password: password() },
    );
    await page.getByTestId('contacts-refresh').click();
    await expectText(count, 'Contacts: 6');
    await expect.poll(letters).toEqual(['A', 'H', 'M', 'Z', 'Б', '?']);

    await page.screenshot({ path: path.join(shots, 'dialer-contacts.png') });
    await page.getByTestId('contacts-search').focus();
    await page.keyboard.type('бор');
    await expect.poll(() => page.getByTestId('contact-row').count()).toBe(1);
    await page.keyboard.press('Enter');
    await card(numbers['Борис Лифт']!).waitFor();
    await endCalls(page);
  });

  it('shows his recent calls by day with direction, result and duration, 50 a page', async () => {
    const db = server.server.context.db;
    const project = (
      await sql<{ project_id: number }>`select project_id from domains where id = ${root}`.execute(db)
    ).rows[0]!.project_id;
    const insert = (from: string, to: string, status: string, duration: number, at: string) =>
      sql`insert into call_history (project_id, from_number, to_number, status, duration, created_at, call_id)
        values (${project}, ${from}, ${to}, ${status}, ${duration}, ${at}, ${`dd-${uid()}`})`.execute(db);
    // the calls of the tests before were ended at once; on a loaded machine their INVITE may have gone out all
    // the same and left a line (cancelled, today) in his history: once none of them is live, those lines go,
    // so his recents are the lines below
    await expect
      .poll(
        async () =>
          (await getCommand('call.list').run({ api }, {})).data.filter(
            (c) => c.caller === own || c.callee === own,
          ).length,
        { timeout: WAIT },
      )
      .toBe(0);
    await sql`delete from call_history where project_id = ${project}
      and (from_number = ${own} or to_number = ${own})`.execute(db);
    // 53 of his on 3 March (UTC), 2 on 2 March, and one between others
    for (let i = 0; i < 53; i++)
      await insert(
        own,
        numbers['Zoe Night']!,
        'answered',
        i,
        `2026-03-03T10:${String(i).padStart(2, '0')}:00Z`,
      );
    await insert(numbers['42 flat']!, own, 'noanswer', 0, '2026-03-02T09:00:00Z');
    await insert(numbers['Anna Porter']!, own, 'answered', 125, '2026-03-02T08:00:00Z');
    await insert(numbers['Anna Porter']!, numbers['Zoe Night']!, 'answered', 5, '2026-03-02T07:00:00Z');

    await palette('dialer: recent', 'tab_recents');
    const rows = page.getByTestId('recent-row');
    await expect.poll(() => rows.count()).toBe(50);
    const days = () => page.getByTestId('recent-day-title').allTextContents();
    expect(await days()).toEqual(['March 3, 2026']);
    await page.getByTestId('recents-more').click();
    await expect.poll(() => rows.count()).toBe(55);
    expect(await days()).toEqual(['March 3, 2026', 'March 2, 2026']);
    expect(await page.getByTestId('recents-more').count()).toBe(0);

    await page.screenshot({ path: path.join(shots, 'dialer-recents.png') });
    const missed = page.locator(`[data-testid="recent-row"][data-number="${numbers['42 flat']}"]`);
    expect(await missed.getAttribute('data-way')).toBe('incoming');
    expect(await missed.getAttribute('data-status')).toBe('noanswer');
    expect(await missed.locator('[role="img"]').getAttribute('aria-label')).toBe('Incoming, No answer');
    const anna = page.locator(`[data-testid="recent-row"][data-number="${numbers['Anna Porter']}"]`);
    await expectText(anna.getByTestId('recent-duration'), '2:05');
    await expectText(anna.getByTestId('recent-time'), '8:00 AM');
    const first = rows.first();
    expect(await first.getAttribute('data-way')).toBe('outgoing');
    expect(await first.locator('[role="img"]').getAttribute('aria-label')).toBe('Outgoing, Answered');

    // in Russian: the days as Russian writes them, the labels in Russian
    await page.getByTestId('lang-ru').click();
    const ru = new Intl.DateTimeFormat('ru', { dateStyle: 'long', timeZone: 'UTC' });
    await expect
      .poll(days)
      .toEqual([ru.format(new Date('2026-03-03T12:00:00Z')), ru.format(new Date('2026-03-02T12:00:00Z'))]);
    expect(await missed.locator('[role="img"]').getAttribute('aria-label')).toBe('Входящий, Без ответа');
    await expectText(page.getByTestId('dialer-tab-doors'), 'Двери');
    await page.getByTestId('dialer-tab-contacts').click();
    await expectText(page.getByTestId('contacts-count'), 'Контакты: 6');
  });
});
