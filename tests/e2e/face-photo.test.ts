/**
 * A face identifier's photo in the console (issue 21 item 1): on the identifier's page the "Face photo"
 * dialog says there is none yet, takes an image chosen from a file, shows the photo the server made (an
 * image the browser decoded) and the server holds it (`identifier.photo`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { Jimp } from 'jimp';
import { downloadFile, getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin } from '../support/fixtures';
import { keyboardSignIn } from '../support/console';
import { ensureBuilt, expectText, launchChromium, onPage, webDist } from '../support/web';

let server: TestServer;
let browser: Browser;
let api: ApiClient;

beforeAll(async () => {
  ensureBuilt();
  server = await startTestServer({ webDir: webDist });
  browser = await launchChromium();
  api = await admin(server);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe("a face identifier's photo in the console", () => {
  it('is uploaded from a file on the identifier page and shown', async () => {
    const ident = (
      await getCommand('identifier.create').run({ api }, { type: 'face', name: 'Face' } as never)
    ).data;
    const png = Buffer.from(
      await new Jimp({ width: 120, height: 90, color: 0x336699ff }).getBuffer('image/png'),
    );
    await onPage(browser, 'identifier-face-photo', async (page) => {
      await keyboardSignIn(
        page,
        server,
        server.adminLogin,
        server.adminPassword,
        `/identifiers/${ident.id}/edit`,
      );
      await page.getByTestId('face-photo-open').click();
      const dialog = page.getByTestId('face-photo');
      await expectText(dialog.locator('p').first(), 'No photo yet: the devices cannot recognise this face.');
      await page
        .getByTestId('face-photo-file')
        .setInputFiles({ name: 'face.png', mimeType: 'image/png', buffer: png });
      const img = dialog.getByRole('img', { name: 'Face photo of the identifier' });
      await expect.poll(() => img.evaluate((i: HTMLImageElement) => i.complete && i.naturalWidth)).toBe(90);
    });
    const stored = await downloadFile({ api }, getCommand('identifier.photo'), { id: ident.id });
    const made = await Jimp.read(Buffer.from(stored.bytes));
    expect([made.width, made.height]).toEqual([90, 90]);
  }, 120_000);
});
