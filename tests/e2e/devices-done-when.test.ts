/**
 * Issue 16's Done-when, in Chromium, through the machine's Mosquitto: two simulated panels fresh from the
 * box, on 127.0.0.60 and .61, are found by network search in the console (keyboard) and added; one is set to
 * mqtt and each is given the credentials Lintel issued, as an installer types them into its management
 * settings; both go online. A settings change makes a task per panel that completes on the panel's
 * acknowledgement (/devices/tasks, and what the panel applied). Identifiers are synced to each panel through
 * its identifiers API; a card presented at each (the simulator's control API) is an event that appears in
 * /devices/events and in the bell (a user whose notification settings say acs) without a reload. The lock
 * opened from /devices/remote-control (key 1) opens the simulated lock. The http panel stopped goes offline
 * after three missed heartbeats (the server's clock moved, then the sweep) and the `device_status_notify`
 * user of its group is told, in the bell and on /notifications. Every wait polls a state; no time is asserted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { getCommand, type Device } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { ManualClock, backoffS } from '@lintel/server';
import { SimulatedDevice } from '@lintel/device-sim';
import { type TestServer } from '../support/server';
import { admin, group, rootGroup, uid } from '../support/fixtures';
import { keyboardSignIn, pickWithKeyboard } from '../support/console';
import { consoleWorld, expectText, moveTo, onPage, WAIT } from '../support/web';

const clock = new ManualClock();
let server: TestServer;
let browser: Browser;
consoleWorld(
  {
    config: {
      clock,
      mqtt: {
        url: 'mqtt://127.0.0.1:1883',
        shared: true,
        port: 0,
        host: '127.0.0.1',
        requestTimeoutMs: 5_000,
        sweepMs: 0,
        searchProbeTimeoutMs: 2_000,
      },
    },
  },
  (w) => ({ server, browser } = w),
);

const tag = uid().toUpperCase();
const HOSTS = { mqtt: '127.0.0.60', http: '127.0.0.61' } as const;
type Kind = keyof typeof HOSTS;
const serialOf = (k: Kind) => `DONE-${tag}-${k.toUpperCase()}`;
const nameOf = (k: Kind) => `Door ${k} ${tag}`;
const CARDS = { mqtt: '600100', http: '610100' } as const;

/** The panels as they run now (a panel given its management settings is started again with them). */
const sims: Partial<Record<Kind, SimulatedDevice>> = {};
let port = 0;

beforeAll(async () => {
  // fresh from the box: each serves only its own HTTP API, on an address of its own, one port for both
  for (const k of ['mqtt', 'http'] as const) {
    const sim = new SimulatedDevice({
      serial: serialOf(k),
      type: 'panel',
      name: nameOf(k),
      httpHost: HOSTS[k],
      httpPort: port,
      heartbeatMs: 0,
    });
    await sim.start();
    port = sim.httpPort;
    sims[k] = sim;
  }
}, 60_000);

afterAll(async () => {
  await Promise.all(Object.values(sims).map((s) => s.stop().catch(() => undefined)));
});

const sim = (k: Kind): SimulatedDevice => sims[k]!;

/** The simulator's own HTTP API (its control API and the device API the platform syncs through). */
async function simHttp(k: Kind, method: string, uri: string, body?: unknown) {
  const res = await fetch(`http://${HOSTS[k]}:${port}${uri}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function deviceOf(api: ApiClient, k: Kind): Promise<Device> {
  const list = await getCommand('device.list').run({ api }, { search: serialOf(k) });
  expect(list.data).toHaveLength(1);
  return list.data[0]!;
}

const statusOf = async (api: ApiClient, id: number) =>
  (await getCommand('device.get').run({ api }, { id })).status;

/** Unread notifications of the bell, by what the open bell lists. */
async function bellItems(page: Page): Promise<string[]> {
  if (!(await page.getByTestId('notification-menu').count())) {
    await page.getByTestId('notification-bell').focus();
    await page.keyboard.press('Enter');
    await page.getByTestId('notification-menu').waitFor();
  }
  return (await page.getByTestId('notification-item').allTextContents()).map((t) => t.trim());
}

describe("issue 16's Done-when", () => {
  it('two panels found, online, set up by tasks, their cards live, a lock opened remotely, one offline told', async () => {
    const api = await admin(server);
    const building = `Building ${tag}`;
    const buildingId = await group(api, building, await rootGroup(api));
    const myId = (await getCommand('profile.get').run({ api }, {})).id;
    // the administrator is told of identifiers used (acs) and of the building's devices going offline
    await getCommand('notification.settings_update').run({ api }, { acs: true });
    await getCommand('group.update').run(
      { api },
      {
        id: buildingId,
        device_status_notify: [
          { user_id: myId, notify_about_offline_device: true, notify_about_device_task_failed: true },
        ],
      },
    );

    await onPage(browser, 'devices-done-when', async (page) => {
      await keyboardSignIn(page, server, server.adminLogin, server.adminPassword);

      // ---- found by network search, from the keyboard, and added into the building ----
      await page.getByTestId('side-menu').getByRole('link', { name: 'Network search' }).click();
      await page.waitForURL((u) => u.pathname === '/devices/search');
      await page.getByRole('textbox', { name: 'Start address' }).waitFor();
      await page.keyboard.type(HOSTS.mqtt);
      await page.keyboard.press('Tab');
      await page.keyboard.type(HOSTS.http);
      await page.keyboard.press('Tab');
      await page.keyboard.press('Control+a');
      await page.keyboard.type(String(port));
      await page.keyboard.press('Enter');
      await expectText(page.getByTestId('search-state'), 'Done');
      await expectText(page.getByTestId('search-progress'), 'Probed 2 of 2 (100%), found 2');
      for (const k of ['mqtt', 'http'] as const) {
        await page.getByRole('checkbox', { name: `Add device ${serialOf(k)}` }).focus();
        await page.keyboard.press('Space');
      }
      await page.getByTestId('field-domain_id').focus();
      await pickWithKeyboard(page, building, building);
      await page.keyboard.press('Tab');
      await expectText(page.locator(':focus'), 'Add selected (2)');
      await page.keyboard.press('Enter');
      await expectText(page.getByTestId('search-added'), 'Devices added: 2');

      // ---- the installer's part: one panel on mqtt, each given the credentials Lintel issued ----
      const ids = {} as Record<Kind, number>;
      for (const k of ['mqtt', 'http'] as const) {
        const d = await deviceOf(api, k);
        expect(d).toMatchObject({ ip_address: HOSTS[k], port, protocol: 'http', domain_id: buildingId });
        ids[k] = d.id;
      }
      await getCommand('device.update').run({ api }, { id: ids.mqtt, protocol: 'mqtt' });
      for (const k of ['mqtt', 'http'] as const) {
        const c = await getCommand('device.credentials').run({ api }, { id: ids[k] });
        if (k === 'mqtt') expect(c.mqtt.url).toBe('mqtt://127.0.0.1:1883');
        await sim(k).stop();
        const configured = new SimulatedDevice({
          ...sim(k).opts,
          httpPort: port,
          management:
            k === 'mqtt'
              ? { protocol: 'mqtt', url: c.mqtt.url, login: c.login, password: c.password }
              : { protocol: 'http', url: c.http_url, login: c.login, password: c.password },
        });
        sims[k] = configured;
        await configured.start();
        await configured.heartbeat();
      }
      // ---- online ----
      for (const k of ['mqtt', 'http'] as const)
        await expect.poll(() => statusOf(api, ids[k]), { timeout: WAIT }).toBe('online');

      // ---- settings through tasks, completed only on each panel's acknowledgement ----
      // the mqtt panel applies the change but its answer is lost: not completed until it answers
      sim('mqtt').fault = 'mute';
      for (const k of ['mqtt', 'http'] as const)
        await getCommand('device.update').run(
          { api },
          { id: ids[k], device_settings: { sip: { talk_timeout: 90 } } },
        );
      await moveTo(page, `${server.url}/devices/tasks`);
      // the generic table's rows; a device may have other tasks (its access sync): the settings' row
      const taskRow = (k: Kind) =>
        page.locator('[role="row"]', { hasText: nameOf(k) }).filter({ hasText: 'Apply settings' });
      await expectText(taskRow('http'), /Apply settings.*Completed/);
      expect(sim('http').applied.settings).toBe(1);
      await expect.poll(() => sim('mqtt').applied.settings, { timeout: WAIT }).toBe(1);
      // no answer in time: queued again (with the back-off of the job queue), not completed
      await expectText(taskRow('mqtt'), /Apply settings.*Queued/);
      expect((await getCommand('device.tasks').run({ api }, { device_id: ids.mqtt })).data).toMatchObject([
        { kind: 'settings', state: 'queued', attempts: 1, error: expect.any(String) },
      ]);
      // its answers get through again; the back-off passes by the server's clock: sent again with the same
      // request id, answered with the first reply and not applied twice
      sim('mqtt').fault = 'none';
      clock.advance(backoffS(server.server.context.jobs.settings, 1) * 1000);
      await expectText(taskRow('mqtt'), /Apply settings.*Completed/);
      for (const k of ['mqtt', 'http'] as const) {
        expect(sim(k).applied.settings).toBe(1);
        expect(sim(k).settings).toMatchObject({ sip: { talk_timeout: 90 } });
        expect((await getCommand('device.tasks').run({ api }, { device_id: ids[k] })).data).toMatchObject([
          { kind: 'settings', state: 'completed' },
        ]);
      }

      // ---- identifiers synced to each panel, a card presented at each: /devices/events and the bell ----
      for (const k of ['mqtt', 'http'] as const)
        expect(
          await simHttp(k, 'POST', '/api/v1/access/identifier/item', {
            identifier_type: 'card',
            identifier_number: CARDS[k],
            lock: 'first',
          }),
        ).toMatchObject({ status: 200, body: { uid: expect.any(String) } });
      await page.getByTestId('side-menu').getByRole('link', { name: 'Device events' }).click();
      await page.waitForURL(/\/devices\/events/);
      await page.locator('[role="grid"]').waitFor();
      await page.getByTestId('notification-bell').waitFor();
      expect(await page.getByTestId('notification-count').count()).toBe(0);
      // the console listens on the user's own topic and on the devices' before anything happens
      const sockets = server.server.context.sockets!;
      await expect.poll(() => sockets.subscribers(`private-users.${myId}`), { timeout: WAIT }).toBe(1);
      await expect.poll(() => sockets.subscribers('private-devices'), { timeout: WAIT }).toBeGreaterThan(0);
      // a mark in the page: a reload would lose it
      await page.evaluate(() => ((window as unknown as { stayed: boolean }).stayed = true));
      for (const k of ['mqtt', 'http'] as const)
        expect(await simHttp(k, 'POST', '/control/present', { number: CARDS[k], lock: 1 })).toMatchObject({
          status: 200,
          body: { granted: true, acknowledged: true },
        });
      const grid = page.locator('[role="grid"]');
      for (const k of ['mqtt', 'http'] as const)
        await expectText(
          grid.locator('[role="row"]', { hasText: CARDS[k] }),
          new RegExp(`${nameOf(k)}.*Identifier used.*${CARDS[k]}.*Granted`),
        );
      await expectText(page.getByTestId('notification-count'), '2');
      await expect
        .poll(async () => (await bellItems(page)).filter((t) => /Identifier \d+ used/.test(t)).length, {
          timeout: WAIT,
        })
        .toBe(2);
      const shown = (await bellItems(page)).join('\n');
      for (const k of ['mqtt', 'http'] as const) expect(shown).toContain(`Identifier ${CARDS[k]} used`);
      // the bell marks what it showed read 1 s after it opened
      await expect.poll(() => page.getByTestId('notification-count').count(), { timeout: WAIT }).toBe(0);
      await page.keyboard.press('Escape');
      expect(await page.evaluate(() => (window as unknown as { stayed?: boolean }).stayed)).toBe(true);

      // ---- the lock opened from /devices/remote-control opens the simulated lock ----
      await moveTo(page, `${server.url}/devices/${ids.mqtt}/edit`);
      const [tab] = await Promise.all([
        page.context().waitForEvent('page'),
        page.getByTestId('device-remote').click(),
      ]);
      await tab.waitForURL(/\/devices\/remote-control#session=/);
      await expectText(tab.getByTestId('remote-title'), `Remote control: ${nameOf('mqtt')}`);
      const before = sim('mqtt').locks[1].opened;
      await expectText(tab.getByTestId('remote-lock-1'), /Closed|Open/);
      await tab.keyboard.press('1');
      await expectText(tab.getByTestId('remote-message'), /Lock 1 opened/);
      await expect.poll(() => sim('mqtt').locks[1].opened, { timeout: WAIT }).toBe(before + 1);
      expect(sim('mqtt').locks[2].opened).toBe(0);
      await tab.close();

      // ---- the http panel stopped: offline after three missed heartbeats, its group's user told ----
      await moveTo(page, `${server.url}/devices/events`);
      await page.getByTestId('notification-bell').waitFor();
      await sim('http').stop();
      clock.advance(31_000);
      // the mqtt panel still beats (by the server's clock now): only the silent one is missed
      await sim('mqtt').heartbeat();
      await expect
        .poll(async () => (await getCommand('device.get').run({ api }, { id: ids.mqtt })).last_heartbeat_at, {
          timeout: WAIT,
        })
        .toBe(clock.now().toISOString());
      expect(await server.server.context.devices.sweep()).toBe(1);
      expect(await statusOf(api, ids.http)).toBe('offline');
      expect(await statusOf(api, ids.mqtt)).toBe('online');
      await expectText(page.getByTestId('notification-count'), '1');
      await expect
        .poll(async () => (await bellItems(page)).join('\n'), { timeout: WAIT })
        .toMatch(new RegExp(`Device ${nameOf('http')} is offline`));
      await page.keyboard.press('Escape');
      await moveTo(page, `${server.url}/notifications?type=important`);
      await expectText(
        page.getByTestId('notifications-row').first(),
        new RegExp(`Device ${nameOf('http')} is offline`),
      );
    });
  }, 240_000);
});
