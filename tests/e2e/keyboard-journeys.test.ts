/**
 * Keyboard journeys over every family that has console pages (issue 13), generated from the registry
 * (`resources` with `ui`): a new family is covered without a new test. For each, from the keyboard alone,
 * from the page: `n` opens the add page with the cursor in its first field; leaving it with something typed
 * asks first (Cancel has the focus); every required field of the create schema is filled (typed, picked or
 * ticked, values its schema accepts: tests/support/keyboard-form.ts) and the stored record holds them; `/`,
 * the name and Enter find the row and open it with the cursor in a field; the name is changed and saved;
 * `f`, the field, the rule and the value filter the table to that row, and the filter is in the address;
 * Enter opens it and its Delete asks, then waits with Undo.
 * From the palette: "Create …" with every required field, "Edit …" picking the row by name, and "Delete …"
 * asking with Cancel focused and the row named, then waiting with Undo before it is sent (Playwright's clock
 * moves the wait, nothing sleeps).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { ZodType } from 'zod';
import { getCommand, resources, type AnyResource, type CommandId } from '@lintel/commands';
import { formatWhere, type ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin, everyFeatureOn, licence, uid } from '../support/fixtures';
import {
  approveFixing,
  checkRecord,
  fillRequired,
  requiredFields,
  tabToField,
  textFor,
} from '../support/keyboard-form';
import { focused, keyboardSignIn, pickWithKeyboard, runFromPalette } from '../support/console';
import {
  ensureBuilt,
  expectText,
  keptPage,
  launchChromium,
  moveTo,
  repo,
  WAIT,
  waitForPath,
  webDist,
} from '../support/web';

let server: TestServer;
let browser: Browser;
let api: ApiClient;

beforeAll(async () => {
  ensureBuilt();
  server = await startTestServer({ webDir: webDist });
  browser = await launchChromium();
  api = await admin(server);
  // every feature licensed: the pages of a family behind a licence (virtual numbers: SIP) open
  await licence(server, everyFeatureOn());
}, 180_000);

/**
 * The journeys' page, signed in once and kept from one journey to the next (each moves to its family's list
 * first); made again after a journey that failed. Playwright's clock is installed before the console loads.
 */
const journeys = keptPage(
  () => browser,
  async (page) => {
    await page.clock.install();
    await keyboardSignIn(page, server, server.adminLogin, server.adminPassword, '/users');
  },
);

afterAll(async () => {
  await journeys.close();
  await browser?.close();
  await server?.close();
});

/** How long a delete waits for Undo (apps/web/src/commands/undo.ts). */
const UNDO_MS = 5000;

const commandsEn = JSON.parse(fs.readFileSync(path.join(repo, 'locales/en/commands.json'), 'utf8')) as Record<
  string,
  unknown
>;
const label = (id: string): string => {
  const flat = commandsEn[id] as { label?: string } | undefined;
  if (flat?.label) return flat.label;
  const [noun, verb] = id.split('.') as [string, string];
  const nested = (commandsEn[noun] as Record<string, { label?: string }> | undefined)?.[verb];
  if (!nested?.label) throw new Error(`no label for ${id}`);
  return nested.label;
};

const exists = async (r: AnyResource, id: number) =>
  getCommand(`${r.noun}.get` as CommandId)
    .run({ api }, { id } as never)
    .then(
      () => true,
      () => false,
    );

/** The one row whose searched fields hold `tag` (each journey's rows carry their own). */
async function rowTagged(r: AnyResource, tag: string): Promise<Record<string, unknown> & { id: number }> {
  const reply = (await getCommand(`${r.noun}.list` as CommandId).run({ api }, {
    search: tag,
    limit: 5,
  } as never)) as { data: (Record<string, unknown> & { id: number })[] };
  expect(reply.data.length, `${r.noun} rows holding ${tag}`).toBe(1);
  return reply.data[0]!;
}

/** The field people find a row by: the first the family searches in (its name). */
const nameField = (r: AnyResource) => r.search[0] ?? 'name';

/** What the console calls a row in lists, pickers and questions: its name, else the field it is found by. */
const shownName = (r: AnyResource, row: Record<string, unknown>) =>
  String(typeof row.name === 'string' ? row.name : row[nameField(r)]);

/** The cursor is in a field of the form (an input, a text area or a picker's box). */
const inField = (page: Page, form: string) =>
  page.waitForFunction(
    (f) => {
      const el = document.activeElement;
      return !!el?.closest(`[data-testid="${f}"]`) && /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName);
    },
    form,
    { timeout: WAIT },
  );

/** A field's title in English, as the filter editor lists it. */
const fieldLabel = (r: AnyResource, field: string): string => {
  const fields = commandsEn.fields as Record<string, Record<string, string>>;
  const found = fields[r.noun]?.[field];
  if (!found) throw new Error(`no label for ${r.noun}.${field}`);
  return found;
};

/** Changes the name field of the open form to `value` (Tab to it, select all, type), then saves with Ctrl+Enter. */
async function rename(page: Page, form: string, r: AnyResource, value: string): Promise<void> {
  await tabToField(page, form, nameField(r));
  await page.keyboard.press('Control+a');
  await page.keyboard.type(value);
  await page.keyboard.press('Control+Enter');
}

/** A new name for the row, accepted by the update schema's field. */
const renamed = (r: AnyResource, tag: string) => {
  const shape = (r.updateArgs as unknown as { shape: Record<string, ZodType> }).shape;
  return textFor(shape[nameField(r)]!, `${tag}e`);
};

/**
 * Families whose whole record the generic journey cannot make from the declaration alone, each with what it
 * needs: their pages and forms are the generic ones, checked by tests/e2e/axe-pages (every page) and their
 * API tests; the journey learns them when it learns their hints.
 */
const BY_HAND: Record<string, string> = {
  identifier:
    'no field is required (a QR gets its value from the server) and a value must fit its type: tests/api/access-families',
  webhook:
    'its form does not settle when the journey fills the secret (a key, or the placeholder): tests/api/webhooks makes, edits and deletes them',
  access_rule:
    'needs a device to pick (at least one), which the journey world has none of: tests/api/access-families, tests/devices/access-sync',
};
const FAMILIES = resources.filter((r) => r.ui && !BY_HAND[r.noun]);

describe('families with pages, from the keyboard', () => {
  it('covers every family the registry gives pages', () => {
    expect(FAMILIES.map((r) => r.noun)).toEqual(expect.arrayContaining(['user', 'role', 'group', 'marker']));
    // each has required fields for the journeys to fill, and a field to find and filter it by
    for (const r of FAMILIES) {
      expect(requiredFields(r).length, r.noun).toBeGreaterThan(0);
      expect(Object.keys(r.filterable), r.noun).toContain(nameField(r));
    }
  });

  const listPathOf = (r: AnyResource) => `${r.ui!.path}${r.noun === 'group' ? '?view=table' : ''}`;
  const listUrl = (r: AnyResource) => `${server.url}${listPathOf(r)}`;

  it.each(FAMILIES.map((r) => [r.noun, r] as const))(
    '%s, from the page: add a whole record, leave, find, edit, filter, delete',
    async (_noun, r) => {
      const listPath = r.ui!.path;
      const tag = uid();
      await journeys.run(`journey-page-${r.noun}`, async (page) => {
        await moveTo(page, listUrl(r));
        await page.getByTestId('table-count').waitFor();

        // add: `n` opens the add page with the cursor in its first field (item 1)
        await page.locator('main').focus();
        await page.keyboard.press('n');
        await waitForPath(page, `${listPath}/add`);
        await inField(page, 'form-page');

        // something typed, then back: the console asks, with Cancel focused; Enter stays (item 4)
        await page.keyboard.type('x');
        await page.goBack();
        await page.getByTestId('confirm-dialog').waitFor();
        expect(await focused(page)).toBe('confirm-cancel');
        await page.keyboard.press('Enter');
        await page.getByTestId('confirm-dialog').waitFor({ state: 'detached' });
        await waitForPath(page, `${listPath}/add`);
        // asked again, Tab to "Leave without saving" and Enter leaves; `n` opens a fresh form
        await page.goBack();
        await page.getByTestId('confirm-dialog').waitFor();
        await page.keyboard.press('Tab');
        await page.keyboard.press('Enter');
        await waitForPath(page, listPath);
        await page.getByTestId('table-count').waitFor();
        await page.locator('main').focus();
        await page.keyboard.press('n');
        await waitForPath(page, `${listPath}/add`);
        await inField(page, 'form-page');

        // every required field of the create schema, from the keyboard; Ctrl+Enter creates it
        const entered = await fillRequired(page, 'form-page', r, tag);
        entered.push(
          ...(await approveFixing(
            page,
            'form-page',
            r,
            tag,
            async () => new URL(page.url()).pathname === listPath,
          )),
        );
        const row = await rowTagged(r, tag);
        await checkRecord(api, row, entered);
        const name = String(row[nameField(r)]);

        // find: from the list, `/`, the name, Enter to the rows, Enter opens the row
        await moveTo(page, listUrl(r));
        await page.getByTestId('table-count').waitFor();
        await page.locator('main').focus();
        await page.keyboard.press('/');
        await page.keyboard.type(name);
        await expectText(page.getByTestId('table-count'), /^1–1 of 1$/);
        await page.keyboard.press('Enter');
        await page.waitForFunction(() => document.activeElement?.getAttribute('role') === 'grid', undefined, {
          timeout: WAIT,
        });
        await page.keyboard.press('Enter');
        await waitForPath(page, `${listPath}/${row.id}/edit`);
        // the edit page has the cursor in its first field (item 1); the name changed, Ctrl+Enter saves
        await inField(page, 'form-page');
        const newName = renamed(r, tag);
        await rename(page, 'form-page', r, newName);
        await waitForPath(page, listPath);
        await expect
          .poll(async () => (await rowTagged(r, tag))[nameField(r)], { timeout: WAIT })
          .toBe(newName);

        // filter: `f`, the field, the rule and the value typed, Enter: the one row, and the filter in the address
        await moveTo(page, listUrl(r));
        await page.getByTestId('table-count').waitFor();
        await page.locator('main').focus();
        await page.keyboard.press('f');
        await page.getByTestId('filter-editor').waitFor();
        await page.keyboard.type(fieldLabel(r, nameField(r)));
        await page.keyboard.press('Tab');
        await page.keyboard.type('equals');
        await page.keyboard.press('Tab');
        await page.keyboard.type(newName);
        await page.keyboard.press('Enter');
        await expectText(page.getByTestId('table-count'), /^1–1 of 1$/);
        expect(await page.getByTestId('filter-chip').count()).toBe(1);
        expect(new URL(page.url()).searchParams.get('where')).toBe(
          formatWhere([{ field: nameField(r), rule: 'equals', value: newName }]),
        );
        // the rows have the keys: Enter opens the one found
        await page.waitForFunction(() => document.activeElement?.getAttribute('role') === 'grid', undefined, {
          timeout: WAIT,
        });
        await page.keyboard.press('Enter');
        await waitForPath(page, `${listPath}/${row.id}/edit`);

        // delete from its page: Tab to Delete, Enter; the question names it, Tab and Enter confirm; the delete
        // waits with Undo, then goes
        await inField(page, 'form-page');
        for (let i = 0; i < 250 && (await focused(page)) !== `delete-${r.noun}`; i++)
          await page.keyboard.press('Tab');
        expect(await focused(page)).toBe(`delete-${r.noun}`);
        await page.keyboard.press('Enter');
        const confirm = page.getByTestId('confirm-dialog');
        await confirm.waitFor();
        expect(await confirm.textContent()).toContain(shownName(r, await rowTagged(r, tag)));
        expect(await focused(page)).toBe('confirm-cancel');
        await page.keyboard.press('Tab');
        await page.keyboard.press('Enter');
        await page.getByTestId('undo-delete').waitFor();
        await waitForPath(page, listPath);
        expect(await exists(r, row.id)).toBe(true);
        await page.clock.fastForward(UNDO_MS);
        await expect.poll(() => exists(r, row.id), { timeout: WAIT }).toBe(false);
      });
    },
    120_000,
  );

  it.each(FAMILIES.map((r) => [r.noun, r] as const))(
    '%s, from the palette: create a whole record, edit it, delete it with a question and Undo',
    async (_noun, r) => {
      const tag = uid();
      await journeys.run(`journey-palette-${r.noun}`, async (page) => {
        // the palette is everywhere: on the family's list rather than the home page's cards
        await moveTo(page, listUrl(r));
        await page.getByTestId('table-count').waitFor();

        // create: the command's form, every required field from the keyboard, Ctrl+Enter
        await runFromPalette(page, label(`${r.noun}.create`).toLowerCase(), label(`${r.noun}.create`));
        const dialog = page.getByTestId('command-dialog');
        await dialog.waitFor();
        await inField(page, 'command-dialog');
        const entered = await fillRequired(page, 'command-dialog', r, tag);
        entered.push(
          ...(await approveFixing(page, 'command-dialog', r, tag, async () => !(await dialog.count()))),
        );
        const row = await rowTagged(r, tag);
        await checkRecord(api, row, entered);
        const id = row.id;

        // edit: pick the row by name, its values load into the form, the name changed, Ctrl+Enter
        await runFromPalette(page, label(`${r.noun}.update`).toLowerCase(), label(`${r.noun}.update`));
        await dialog.waitFor();
        const name = String(row[nameField(r)]);
        await pickWithKeyboard(page, name, shownName(r, row));
        await expect
          .poll(() => dialog.getByTestId(`field-${nameField(r)}`).inputValue(), { timeout: WAIT })
          .toBe(name);
        const newName = renamed(r, tag);
        await rename(page, 'command-dialog', r, newName);
        await dialog.waitFor({ state: 'detached' });
        await expect
          .poll(async () => (await rowTagged(r, tag))[nameField(r)], { timeout: WAIT })
          .toBe(newName);

        // delete: the picker has the cursor; the question names the row, Cancel focused
        await runFromPalette(page, label(`${r.noun}.delete`).toLowerCase(), label(`${r.noun}.delete`));
        await dialog.waitFor();
        await pickWithKeyboard(page, newName, shownName(r, await rowTagged(r, tag)));
        await page.keyboard.press('Control+Enter');
        const confirm = page.getByTestId('confirm-dialog');
        await confirm.waitFor();
        expect(await confirm.textContent()).toContain(shownName(r, await rowTagged(r, tag)));
        expect(await focused(page)).toBe('confirm-cancel');
        // a reflex Enter keeps the row
        await page.keyboard.press('Enter');
        await confirm.waitFor({ state: 'detached' });
        expect(await exists(r, id)).toBe(true);

        // again, Tab to Delete: nothing is sent while Undo is offered; Undo keeps the row
        await runFromPalette(page, label(`${r.noun}.delete`).toLowerCase(), label(`${r.noun}.delete`));
        await pickWithKeyboard(page, newName, shownName(r, await rowTagged(r, tag)));
        await page.keyboard.press('Control+Enter');
        await confirm.waitFor();
        await page.keyboard.press('Tab');
        await page.keyboard.press('Enter');
        const undo = page.getByTestId('undo-delete');
        await undo.waitFor();
        await undo.click();
        await undo.waitFor({ state: 'detached' });
        await page.clock.fastForward(UNDO_MS * 2);
        expect(await exists(r, id)).toBe(true);

        // and once more, left to run out: the row is gone
        await runFromPalette(page, label(`${r.noun}.delete`).toLowerCase(), label(`${r.noun}.delete`));
        await pickWithKeyboard(page, newName, shownName(r, await rowTagged(r, tag)));
        await page.keyboard.press('Control+Enter');
        await confirm.waitFor();
        await page.keyboard.press('Tab');
        await page.keyboard.press('Enter');
        await undo.waitFor();
        expect(await exists(r, id)).toBe(true);
        await page.clock.fastForward(UNDO_MS);
        await page.getByTestId('alert-success').waitFor();
        await expect.poll(() => exists(r, id), { timeout: WAIT }).toBe(false);
      });
    },
    120_000,
  );
});
