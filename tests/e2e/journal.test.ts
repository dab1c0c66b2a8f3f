/**
 * The console's table over a journal (issue 14 item 2): "jump to day" on /audit-events loads the page at the
 * end of that day — its first row is that day's newest event — and no reply after the jump holds a row newer
 * than that day: the rows before it (in the table's newest-first order) are never loaded.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sql } from 'kysely';
import type { Browser } from 'playwright-core';
import { startTestServer, type TestServer } from '../support/server';
import { getCommand } from '@lintel/commands';
import { keyboardSignIn } from '../support/console';
import { admin } from '../support/fixtures';
import { ensureBuilt, launchChromium, onPage, waitForPath, webDist } from '../support/web';

let server: TestServer;
let browser: Browser;
let adminName = '';

beforeAll(async () => {
  ensureBuilt();
  server = await startTestServer({ webDir: webDist });
  browser = await launchChromium();
  adminName = (await getCommand('profile.get').run({ api: await admin(server) }, {})).name;
  // 200 events at midday (UTC) of each of three days, named by their day
  await sql`insert into audit_events (project_id, action, entity, created_at)
    select (select id from projects order by id limit 1), 'e2e.day' || d, 'journal',
      ('2026-02-' || d || 'T12:00:00Z')::timestamptz - g * interval '1 minute'
    from unnest(array['10', '11', '12']) d, generate_series(0, 199) g`.execute(server.server.context.db);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

it('jumps to a day without loading the rows after it', async () => {
  await onPage(browser, 'journal-jump', async (page) => {
    await keyboardSignIn(page, server, server.adminLogin, server.adminPassword, `/audit-events`);
    await waitForPath(page, '/audit-events');
    await page.locator('[role="row"][aria-rowindex="2"]').waitFor();
    // the newest first: today's sign-in is on top, not the seeded days
    expect(await page.locator('[role="row"][aria-rowindex="2"]').textContent()).not.toContain('e2e.day');
    // which names the person who signed in, not an account's id (issue 13 point 5)
    const cells = page.locator('[role="row"][aria-rowindex="2"] [role="gridcell"]');
    expect(await cells.allTextContents()).toEqual(
      expect.arrayContaining(['Signed in', 'Account', adminName]),
    );

    const newest: string[] = [];
    page.on('response', async (r) => {
      if (!r.url().includes('/api/v0/audit-events')) return;
      const body = (await r.json().catch(() => null)) as { data?: { created_at: string }[] } | null;
      for (const row of body?.data ?? []) newest.push(row.created_at);
    });
    const reply = page.waitForResponse(
      (r) => r.url().includes('/api/v0/audit-events') && r.url().includes('to='),
    );
    await page.getByLabel('Jump to day').fill('2026-02-11');
    const first = await (await reply).json();
    expect(first.data[0].action).toBe('e2e.day11');
    await expect
      .poll(() => page.locator('[role="row"][aria-rowindex="2"]').textContent(), { timeout: 15_000 })
      .toContain('e2e.day11');
    expect(newest.length).toBeGreaterThan(0);
    expect(newest.every((t) => t < '2026-02-12')).toBe(true);

    // Latest goes back to the newest rows
    await page.getByRole('button', { name: 'Latest' }).click();
    await expect
      .poll(() => page.locator('[role="row"][aria-rowindex="2"]').textContent(), { timeout: 15_000 })
      .not.toContain('e2e.day11');
  });
}, 120_000);
