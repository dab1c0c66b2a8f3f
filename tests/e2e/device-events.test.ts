/**
 * /devices/events in Chromium: a card presented at a simulated panel (its control API) appears in the open
 * table without a reload — the device decides, pushes its log over MQTT, the platform stores it and sends
 * it on `private-devices` — and the home's devices card shows it among the latest events.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { getCommand } from '@lintel/commands';
import { SimulatedDevice } from '@lintel/device-sim';
import { startTestServer, type TestServer } from '../support/server';
import { admin, rootGroup, uid } from '../support/fixtures';
import { keyboardSignIn } from '../support/console';
import { ensureBuilt, expectText, freshPage, launchChromium, moveTo, webDist } from '../support/web';

let server: TestServer;
let browser: Browser;
let sim: SimulatedDevice | null = null;

beforeAll(async () => {
  ensureBuilt();
  server = await startTestServer({ webDir: webDist });
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await sim?.stop();
  await browser?.close();
  await server?.close();
});

describe('/devices/events', () => {
  it('shows a card presented at a simulated panel without a reload', async () => {
    const api = await admin(server);
    const serial = `WEB-${uid()}`;
    const { data } = await getCommand('device.create').run(
      { api },
      {
        name: `Entrance ${serial}`,
        type: 'panel',
        serial_number: serial,
        domain_id: await rootGroup(api),
        protocol: 'mqtt',
      },
    );
    const c = await getCommand('device.credentials').run({ api }, { id: data.id });
    sim = new SimulatedDevice({
      serial,
      management: { protocol: 'mqtt', url: c.mqtt.url, login: c.login, password: c.password },
      heartbeatMs: 0,
    });
    await sim.start();
    sim.addIdentifier({ identifier_type: 'card', identifier_number: '4242', lock: 'first' });

    const { context, page } = await freshPage(browser);
    try {
      await keyboardSignIn(page, server, server.adminLogin, server.adminPassword);
      // the menu has it under Device management
      await page.getByRole('navigation').getByRole('link', { name: 'Device events' }).click();
      await page.waitForURL(/\/devices\/events/);
      await page.locator('[role="grid"]').waitFor();
      // a mark in the page: a reload would lose it
      await page.evaluate(() => ((window as unknown as { stayed: boolean }).stayed = true));

      const res = await fetch(`http://127.0.0.1:${sim.httpPort}/control/present`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ number: '4242', lock: 1 }),
      });
      expect(await res.json()).toMatchObject({ granted: true, acknowledged: true });
      const first = page.locator('[role="row"][aria-rowindex="2"]');
      await expectText(first, /Entrance .*Identifier used.*4242.*Granted/);
      // an unknown card: refused, and shown above it
      await sim.presentCard('777', 1);
      await expectText(first, /Identifier refused.*777.*Denied/);
      expect(await page.evaluate(() => (window as unknown as { stayed?: boolean }).stayed)).toBe(true);

      // the home's devices card lists the latest events
      await moveTo(page, `${server.url}/home`);
      await expectText(page.getByTestId('home-device-events'), /Identifier refused · 777 · Denied/);
    } finally {
      await context.close();
    }
  }, 120_000);
});
