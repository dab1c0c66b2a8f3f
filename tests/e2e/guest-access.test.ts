/**
 * Guest access in Chromium (issue 21 item 7): an administrator grants a guest a pass on /guest-access (the
 * shareable rule of a simulated panel online on mqtt, a validity, a pass limit of 2) and gets the page's
 * address; the guest, signed out, opens it: the pass, its QR code drawn, and its door; pressing "Open" opens
 * the simulated panel's lock twice, and then the page says "Pass limit reached" (the catalogue's words) with
 * no door left. The console's QR preview of a QR identifier (item 1) shows its code and saves it as a PNG that
 * reads back to the identifier's value.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { SimulatedDevice } from '@lintel/device-sim';
import { startTestServer, type TestServer } from '../support/server';
import { admin, everyFeatureOn, licence, rootGroup, uid } from '../support/fixtures';
import { keyboardSignIn } from '../support/console';
import { ensureBuilt, expectText, launchChromium, onPage, webDist } from '../support/web';
import { until } from '../devices/mqtt-clients';
import { readQr } from '../support/qr';
import fs from 'node:fs';

let server: TestServer;
let browser: Browser;
let api: ApiClient;
let sim: SimulatedDevice;
let doorName: string;
let ruleName: string;

beforeAll(async () => {
  ensureBuilt();
  server = await startTestServer({ webDir: webDist });
  browser = await launchChromium();
  api = await admin(server);
  await licence(server, everyFeatureOn());
  const serial = `GAW-${uid()}`;
  doorName = `Door ${serial}`;
  const { data } = await getCommand('device.create').run(
    { api },
    {
      name: doorName,
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
  await until(async () => (await getCommand('device.get').run({ api }, { id: data.id })).status === 'online');
  ruleName = `Guests ${uid()}`;
  await getCommand('access_rule.create').run({ api }, {
    name: ruleName,
    devices: [data.id],
    is_shareable: true,
  } as never);
}, 180_000);

afterAll(async () => {
  await sim?.stop().catch(() => undefined);
  await browser?.close();
  await server?.close();
});

const local = (ms: number) => new Date(ms).toISOString().slice(0, 16);

describe('guest access', () => {
  it('grants a pass in the console; the guest opens the door twice from its page, then is refused', async () => {
    let url = '';
    await onPage(
      browser,
      'guest-access-grant',
      async (page) => {
        await keyboardSignIn(page, server, server.adminLogin, server.adminPassword, `/guest-access`);
        await page.getByRole('checkbox', { name: new RegExp(ruleName) }).check();
        await page.getByLabel('Valid from').fill(local(Date.now() - 3_600_000));
        await page.getByLabel('Valid to').fill(local(Date.now() + 86_400_000));
        await page.getByRole('textbox', { name: 'Pass limit' }).fill('2');
        await page.getByRole('button', { name: 'Grant guest access' }).click();
        url = ((await page.getByTestId('guest-url').locator('.font-mono').textContent()) ?? '').trim();
        expect(url).toMatch(/\/guest-access\/[A-Za-z0-9_-]{43}$/);
        await expectText(page.getByTestId('guest-passes').locator('tbody td').first(), 'Guest identifier');
      },
      { timezoneId: 'UTC' },
    );
    await onPage(
      browser,
      'guest-access-open',
      async (page) => {
        await page.goto(`${server.url}${new URL(url).pathname}`);
        await expectText(page.getByTestId('guest-pass').locator('p.font-medium'), 'Guest identifier');
        // the pass's QR code drawn for the reader: an image the browser decoded, named for a screen reader
        const qr = page.getByRole('img', { name: 'QR code of the pass' });
        await expect
          .poll(() => qr.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth))
          .toBeGreaterThan(0);
        // no wallet settings in this project: no Apple Wallet button
        expect(await page.getByTestId('guest-wallet').count()).toBe(0);
        const open = page.getByRole('button', { name: `Open: ${doorName}` });
        for (const n of [1, 2]) {
          await open.click();
          await expectText(page.getByRole('status'), `Opened: ${doorName}`);
          await expect.poll(() => sim.locks[1].opened).toBe(n);
        }
        // used up: the page says so with the catalogue's words, and offers no door any more
        await expectText(page.getByRole('alert').first(), 'Pass limit reached');
        expect(await open.count()).toBe(0);
        expect(sim.locks[1].opened).toBe(2);
      },
      { timezoneId: 'UTC' },
    );
  }, 120_000);

  it("shows a QR identifier's code in the console's QR preview and saves it as PNG", async () => {
    const ident = (
      await getCommand('identifier.create').run({ api }, { type: 'qr', name: 'Preview QR' } as never)
    ).data;
    await onPage(browser, 'identifier-qr-preview', async (page) => {
      await keyboardSignIn(
        page,
        server,
        server.adminLogin,
        server.adminPassword,
        `/identifiers/${ident.id}/edit`,
      );
      await page.getByTestId('qr-preview-open').click();
      const dialog = page.getByTestId('qr-preview');
      const img = dialog.getByRole('img', { name: "QR code of the identifier's value" });
      await expect
        .poll(() => img.evaluate((i: HTMLImageElement) => i.complete && i.naturalWidth))
        .toBeGreaterThan(0);
      const [file] = await Promise.all([
        page.waitForEvent('download'),
        dialog.getByRole('button', { name: 'Save PNG' }).click(),
      ]);
      expect(file.suggestedFilename()).toBe(`identifier-${ident.id}.png`);
      const saved = await file.path();
      expect(await readQr(fs.readFileSync(saved))).toBe(ident.value);
    });
  }, 120_000);
});
