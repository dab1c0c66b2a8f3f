/**
 * Remote control in Chromium (issue 16 item 9, and the device edit page of item 11): from /devices/:id/edit
 * of a simulated panel online on mqtt (the embedded broker), "Remote control" opens /devices/remote-control
 * in a new tab, outside the main layout, whose address holds a session id and no password; pressing 1 opens
 * lock 1 of the simulated panel. A device on http gets the catalogue's refusal, in Russian too. The edit
 * page's tabs split the generated form and show the device's tasks and heartbeat.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { SimulatedDevice } from '@lintel/device-sim';
import { startTestServer, type TestServer } from '../support/server';
import { admin, rootGroup, uid } from '../support/fixtures';
import { keyboardSignIn } from '../support/console';
import { ensureBuilt, expectText, freshPage, launchChromium, webDist } from '../support/web';
import { until } from '../devices/mqtt-clients';

let server: TestServer;
let browser: Browser;
let api: ApiClient;
const sims: SimulatedDevice[] = [];

beforeAll(async () => {
  ensureBuilt();
  server = await startTestServer({ webDir: webDist });
  browser = await launchChromium();
  api = await admin(server);
}, 180_000);

afterAll(async () => {
  await Promise.all(sims.map((s) => s.stop().catch(() => undefined)));
  await browser?.close();
  await server?.close();
});

async function panel(protocol: 'mqtt' | 'http') {
  const serial = `RCW-${uid()}`;
  const { data } = await getCommand('device.create').run(
    { api },
    {
      name: `Door ${serial}`,
      type: 'panel',
      serial_number: serial,
      domain_id: await rootGroup(api),
      protocol,
      device_password: 'panel-secret',
    },
  );
  const c = await getCommand('device.credentials').run({ api }, { id: data.id });
  const sim = new SimulatedDevice({
    serial,
    management: {
      protocol,
      url: protocol === 'mqtt' ? c.mqtt.url : c.http_url,
      login: c.login,
      password: c.password,
    },
    heartbeatMs: 0,
  });
  sims.push(sim);
  await sim.start();
  if (protocol === 'mqtt')
    await until(
      async () => (await getCommand('device.get').run({ api }, { id: data.id })).status === 'online',
    );
  return { id: data.id, serial, sim, name: `Door ${serial}` };
}

describe('remote control', () => {
  it('opens from the device edit page in a new tab; the key 1 opens the simulated lock', async () => {
    const d = await panel('mqtt');
    await getCommand('device.restart').run({ api }, { id: d.id });
    const { context, page } = await freshPage(browser);
    try {
      await keyboardSignIn(page, server, server.adminLogin, server.adminPassword, `/devices/${d.id}/edit`);
      await page.getByTestId('device-tab-general').waitFor();
      // the tabs split the one generated form, and show the device's tasks and heartbeat
      await expect(page.getByRole('textbox', { name: 'Name' }).inputValue()).resolves.toBe(d.name);
      await page.getByTestId('device-tab-general').focus();
      await page.keyboard.press('ArrowRight');
      await expect(page.getByTestId('device-tab-network').getAttribute('aria-selected')).resolves.toBe(
        'true',
      );
      await page.getByRole('textbox', { name: 'IP address' }).waitFor();
      expect(await page.getByRole('textbox', { name: 'Name' }).count()).toBe(0);
      await page.getByTestId('device-tab-tasks').click();
      await expectText(page.getByTestId('device-tasks-tab'), /Restart/);
      await page.getByTestId('device-tab-heartbeat').click();
      await expectText(page.getByTestId('device-status'), /Online/);

      const [tab] = await Promise.all([
        context.waitForEvent('page'),
        page.getByTestId('device-remote').click(),
      ]);
      await tab.waitForURL(/\/devices\/remote-control#session=/);
      // the address holds a session id, not the device's login or password
      expect(tab.url()).not.toContain('panel-secret');
      expect(tab.url()).not.toContain(d.serial);
      await expectText(tab.getByTestId('remote-title'), new RegExp(`Remote control: ${d.name}`));
      // outside the main layout: no side menu
      expect(await tab.getByTestId('side-menu').count()).toBe(0);
      await expectText(tab.getByTestId('remote-lock-1'), /Closed/);

      await tab.keyboard.press('1');
      await expectText(tab.getByTestId('remote-message'), /Lock 1 opened/);
      await until(async () => d.sim.locks[1].opened === 1);
      expect(d.sim.locks[1].open).toBe(true);
      expect(d.sim.locks[2].opened).toBe(0);
      await expectText(tab.getByTestId('remote-lock-1'), /Open/);

      // the panel goes offline: the next key is refused with the catalogue's message, nothing is sent
      await d.sim.stop();
      await until(
        async () => (await getCommand('device.get').run({ api }, { id: d.id })).status === 'offline',
      );
      await tab.keyboard.press('2');
      await expectText(tab.getByTestId('remote-message'), 'The device is offline, cannot connect remotely');
      expect(d.sim.locks[2].opened).toBe(0);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('refuses a device on http with the catalogue message, in English and Russian', async () => {
    const d = await panel('http');
    const { context, page } = await freshPage(browser);
    try {
      await keyboardSignIn(page, server, server.adminLogin, server.adminPassword, `/devices/${d.id}/edit`);
      await page.getByTestId('device-remote').click();
      await expectText(
        page.getByTestId('alert-error').last(),
        /The device protocol is not mqtt, cannot connect/,
      );
      expect(context.pages()).toHaveLength(1);
      await page.getByTestId('lang-ru').click();
      await expectText(page.getByTestId('device-remote'), 'Удалённое управление');
      await page.getByTestId('device-remote').click();
      await expectText(
        page.getByTestId('alert-error').last(),
        /Протокол устройства не mqtt, подключение невозможно/,
      );
    } finally {
      await context.close();
    }
  }, 120_000);
});
