/**
 * The bell in Chromium (spec part 1 §2.3, §4 "Notifications"): notifications stored for the signed-in user
 * appear in the bell without a reload (the websocket event, then the unread list read again), the bell
 * lists the latest 5 with a link to all above 5, and what it showed is marked read 1 s after it opened, so
 * the count goes down. Time here is the browser's own: every check polls what the page shows.
 */
import { describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { getCommand } from '@lintel/commands';
import { notify } from '@lintel/server';
import { type TestServer } from '../support/server';
import { admin, rootGroup, userWith } from '../support/fixtures';
import { keyboardSignIn } from '../support/console';
import { consoleWorld, expectText, freshPage, moveTo } from '../support/web';

let server: TestServer;
let browser: Browser;
consoleWorld({}, (w) => ({ server, browser } = w));

describe('the bell', () => {
  it('counts a notification made while the page was still subscribing to its topic', async () => {
    const api = await admin(server);
    const user = await userWith(server, api, { permissions: [], domains: [await rootGroup(api)] });
    const projectId = (await getCommand('profile.get').run({ api }, {})).project.id;
    const ctx = server.server.context;
    const { context, page } = await freshPage(browser);
    try {
      // the page's subscription to its own topic is held back until the notification is made: the window
      // between the page's first read of the unread list and the topic being live, made wide on purpose
      const topic = `private-users.${user.id}`;
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      let held!: () => void;
      const holding = new Promise<void>((r) => (held = r));
      await page.routeWebSocket(/\/api\/v0\/ws/, (ws) => {
        const upstream = ws.connectToServer();
        ws.onMessage((message) => {
          if (typeof message === 'string' && message.includes('"subscribe"') && message.includes(topic)) {
            held();
            void released.then(() => upstream.send(message));
          } else upstream.send(message);
        });
      });
      const firstRead = page.waitForResponse((r) => r.url().includes('/api/v0/notifications/unread'));
      await keyboardSignIn(page, server, user.login, user.password);
      await firstRead;
      await holding;
      await ctx.outbox.unit(() =>
        ctx.db.transaction().execute((trx) =>
          notify(ctx, trx, {
            projectId,
            recipients: [user.id],
            type: 'device_offline',
            data: { name: 'Gate', device: { id: 1, name: 'Gate', serial_number: 'G1' } },
          }),
        ),
      );
      release();
      await expect.poll(() => ctx.sockets!.subscribers(topic)).toBe(1);
      await expectText(page.getByTestId('notification-count'), '1');
    } finally {
      await context.close();
    }
  });

  it('shows new notifications without a reload, and the count goes down once it has been opened', async () => {
    const api = await admin(server);
    const user = await userWith(server, api, { permissions: [], domains: [await rootGroup(api)] });
    const projectId = (await getCommand('profile.get').run({ api }, {})).project.id;
    const ctx = server.server.context;
    const send = (n: number) =>
      ctx.outbox.unit(() =>
        ctx.db.transaction().execute(async (trx) => {
          for (let i = 1; i <= n; i++)
            await notify(ctx, trx, {
              projectId,
              recipients: [user.id],
              type: 'device_offline',
              data: { name: `Panel ${i}`, device: { id: i, name: `Panel ${i}`, serial_number: `S${i}` } },
            });
        }),
      );

    const { context, page } = await freshPage(browser);
    try {
      await keyboardSignIn(page, server, user.login, user.password);
      await page.getByTestId('notification-bell').waitFor();
      expect(await page.getByTestId('notification-count').count()).toBe(0);
      // the console listens on the user's own topic before anything is sent
      await expect.poll(() => ctx.sockets!.subscribers(`private-users.${user.id}`)).toBe(1);
      await page.evaluate(() => ((window as unknown as { lintelMark: number }).lintelMark = 7));

      await send(6);
      await expectText(page.getByTestId('notification-count'), '6');

      // opened from the keyboard: the latest 5 and the link to all six
      await page.getByTestId('notification-bell').focus();
      await page.keyboard.press('Enter');
      await page.getByTestId('notification-menu').waitFor();
      await expect.poll(() => page.getByTestId('notification-item').count()).toBe(5);
      await expectText(page.getByTestId('notification-item').first(), /Panel 6 is offline/);
      await expectText(page.getByTestId('notification-more'), /6/);
      // focus is in the menu; arrows move through it
      expect(await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe(
        'notification-item',
      );

      // 1 s after opening the five shown are read: one left
      await expectText(page.getByTestId('notification-count'), '1');
      const unread = await getCommand('notification.unread').run({ api: await user.client() }, {});
      expect(unread.meta.total).toBe(1);
      expect(unread.data[0]!.data.name).toBe('Panel 1');
      await page.keyboard.press('Escape');
      await expect.poll(() => page.getByTestId('notification-menu').count()).toBe(0);

      // the page itself never reloaded
      expect(await page.evaluate(() => (window as unknown as { lintelMark?: number }).lintelMark)).toBe(7);

      // /notifications lists all six, the unread one marked read from there
      await moveTo(page, `${server.url}/notifications?type=important`);
      await expect.poll(() => page.getByTestId('notifications-row').count()).toBe(6);
      await page.getByTestId('notifications-read-all').click();
      await expect.poll(() => page.getByTestId('notification-count').count()).toBe(0);
    } finally {
      await context.close();
    }
  }, 90_000);

  it('pops up the important ones: three shown, see all and hide all, the alarm sounding until read', async () => {
    const api = await admin(server);
    const user = await userWith(server, api, { permissions: [], domains: [await rootGroup(api)] });
    const projectId = (await getCommand('profile.get').run({ api }, {})).project.id;
    const ctx = server.server.context;
    const send = (type: 'device_offline' | 'alarm_enabled' | 'alarm_processed', name: string) =>
      ctx.outbox.unit(() =>
        ctx.db
          .transaction()
          .execute((trx) => notify(ctx, trx, { projectId, recipients: [user.id], type, data: { name } })),
      );

    const { context, page } = await freshPage(browser);
    try {
      await keyboardSignIn(page, server, user.login, user.password);
      await expect.poll(() => ctx.sockets!.subscribers(`private-users.${user.id}`)).toBe(1);
      const popups = page.getByTestId('important-popup');
      const region = page.getByTestId('important-popups');

      // an ordinary one does not pop up; an important one does, in its own width range
      await send('alarm_processed', 'Smoke 0');
      await send('device_offline', 'Panel 1');
      await expectText(popups.first(), /Device Panel 1 is offline/);
      expect(await popups.count()).toBe(1);
      const width = (await popups.first().boundingBox())!.width;
      expect(width).toBeGreaterThanOrEqual(300);
      expect(width).toBeLessThanOrEqual(450);
      // one shown: neither "see all" nor "hide all"
      expect(await page.getByTestId('popups-hide-all').count()).toBe(0);
      expect(await page.getByTestId('popups-see-all').count()).toBe(0);
      expect(await region.getAttribute('data-sounding')).toBeNull();

      // an SOS alarm: it sounds; four important unread: three shown, the newest first, and "see all (4)"
      await send('device_offline', 'Panel 2');
      await send('alarm_enabled', 'Smoke 3');
      await send('device_offline', 'Panel 4');
      await expect.poll(() => popups.count()).toBe(3);
      await expectText(popups.first(), /Device Panel 4 is offline/);
      await expectText(popups.nth(1), /Alarm: Smoke 3/);
      await expectText(page.getByTestId('popups-see-all'), 'See all (4)');
      expect(await region.getAttribute('data-sounding')).toBe('true');

      // Alt+I takes the focus to the newest popup; the alarm's close button marks it read: the sound stops
      await page.keyboard.press('Alt+i');
      expect(await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe(
        'popup-open',
      );
      await popups.nth(1).getByTestId('popup-dismiss').focus();
      await page.keyboard.press('Enter');
      await expect.poll(() => region.getAttribute('data-sounding')).toBeNull();
      const client = await user.client();
      await expect
        .poll(async () => (await getCommand('notification.unread').run({ api: client }, {})).meta.important)
        .toBe(3);
      // three left, all shown: no "see all"
      await expect.poll(() => page.getByTestId('popups-see-all').count()).toBe(0);
      expect(await popups.count()).toBe(3);

      // following one opens where it leads and reads it
      await popups.first().getByTestId('popup-open').click();
      await page.waitForURL(/\/notifications$/);
      await expect.poll(() => popups.count()).toBe(2);

      // hide all: gone from this tab, even after a reload, but still unread in the bell
      await page.getByTestId('popups-hide-all').click();
      await expect.poll(() => popups.count()).toBe(0);
      await page.reload();
      await expectText(page.getByTestId('notification-count'), /\d/);
      expect(await popups.count()).toBe(0);
      expect((await getCommand('notification.unread').run({ api: client }, {})).meta.important).toBe(2);
      // a new one shows again
      await send('device_offline', 'Panel 5');
      await expectText(popups.first(), /Device Panel 5 is offline/);
      expect(await popups.count()).toBe(1);
    } finally {
      await context.close();
    }
  }, 90_000);
});
