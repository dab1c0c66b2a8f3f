/**
 * The users table's Export in the browser, against a real server: filter the table (chips, the search),
 * export from the palette or the button, take the download, and check that the file holds exactly the users
 * `user.list` gives for the same query, in the columns `lintel users import` reads; the CSV is byte for byte
 * what `lintel users export --where …` writes, and imports back with `lintel users import --dry-run` with no
 * problem once the users are gone.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Download, Page } from 'playwright-core';
import { parse } from 'csv-parse/sync';
import {
  csvCells,
  exportNamers,
  exportRow,
  getCommand,
  userImportCommit,
  UserExportColumns,
  type User,
} from '@lintel/commands';
import type { ApiClient, ListQuery } from '@lintel/core';
import { admin, group, uid } from '../support/fixtures';
import { startTestServer, type TestServer } from '../support/server';
import { keyboardSignIn, runFromPalette } from '../support/console';
import { ensureBuilt, expectText, launchChromium, onPage, WAIT, webDist } from '../support/web';
import { buildCli, freshConfigDir, lintel, removeConfigDirs } from '../cli/support';

let server: TestServer;
let browser: Browser;
let api: ApiClient;
let dir: string;
let configDir: string;
const w = {} as { A: number; B: number; role: number; marker: number };

beforeAll(async () => {
  ensureBuilt();
  const built = buildCli();
  expect(built.status, built.stderr).toBe(0);
  server = await startTestServer({ webDir: webDist });
  api = await admin(server);
  browser = await launchChromium();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-export-e2e-'));
  configDir = freshConfigDir();
  const login = await lintel(
    ['login', '--server', server.url, '--login', server.adminLogin, '--password-stdin'],
    { configDir, input: `${server.adminPassword}\n` },
  );
  expect(login.code, login.stderr).toBe(0);

  const root = (await getCommand('group.full').run({ api }, {})).data.find((g) => g.parent_id === null)!.id;
  const tag = uid();
  w.A = await group(api, `Export A ${tag}`, root, { logic_address: `7.${tag}` });
  w.B = await group(api, `Export B ${tag}`, root);
  w.role = (
    await getCommand('role.create').run(
      { api },
      { name: `Export tenant ${tag}`, permissions: ['users.view'] },
    )
  ).data.id;
  w.marker = (
    await getCommand('marker.create').run({ api }, { name: `Export VIP ${tag}`, color: '#336699' })
  ).data.id;
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  removeConfigDirs();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/**
 * Users whose logins begin with `prefix`: every third one a group administrator, names with commas and
 * quotes, descriptions over two lines, lists of groups and markers — what CSV quoting and `;` must carry.
 */
async function makeUsers(prefix: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++)
    await getCommand('user.create').run(
      { api },
      {
        login: `${prefix}${String(i).padStart(2, '0')}`,
        name: i % 4 === 0 ? `Smith, "Ann" ${i}` : `Person ${i}`,
        description: i % 5 === 0 ? 'line one\nline "two"; three' : '',
        email: i % 2 ? `${prefix}${i}@example.test` : null,
        role: w.role,
        domains: i % 2 ? [w.A, w.B] : [w.B],
        markers: i % 3 ? [] : [w.marker],
        is_group_admin: i % 3 === 0,
        profile: { phone: i % 2 ? '+4912345678' : '', address: i % 2 ? 'Main St 1, Berlin' : '' },
        send_registration_link: false,
      },
    );
}

/** Every user of a list query, in id order (what an export holds). */
async function listAll(query: ListQuery): Promise<User[]> {
  return (await getCommand('user.list').run({ api }, { ...query, sort: 'id', limit: 1000 })).data;
}

/** The grid's total (aria-rowcount counts the header row too). */
const gridTotal = async (page: Page) =>
  Number(await page.getByRole('grid').getAttribute('aria-rowcount')) - 1;

async function openUsers(page: Page): Promise<void> {
  await keyboardSignIn(page, server, server.adminLogin, server.adminPassword, `/users`);
  await page.locator('[role="row"][aria-rowindex="2"][aria-selected]').waitFor();
}

/** Presses Export in the dialog and takes the file the browser downloads. */
async function download(page: Page, start: () => Promise<void>): Promise<{ name: string; text: string }> {
  const [file] = await Promise.all([page.waitForEvent('download', { timeout: WAIT }), start()]);
  return { name: file.suggestedFilename(), text: await readDownload(file) };
}

async function readDownload(file: Download): Promise<string> {
  const to = path.join(dir, `${uid()}-${file.suggestedFilename()}`);
  await file.saveAs(to);
  return fs.readFileSync(to, 'utf8');
}

const exportDialog = (page: Page) => page.getByTestId('export-dialog');

describe('export of the users table', () => {
  it('CSV of the chips: exactly the filtered users, the CLI’s own file, and it imports back', async () => {
    const prefix = `xc${uid()}-`;
    await makeUsers(prefix, 12);
    const query: ListQuery = {
      filters: [
        { field: 'login', rule: 'begins_with', value: prefix },
        { field: 'is_group_admin', rule: 'equals', value: true },
      ],
      match: 'all',
    };
    const expected = await listAll(query);
    expect(expected.map((u) => u.login)).toEqual([0, 3, 6, 9].map((i) => `${prefix}0${i}`));

    let csv = '';
    await onPage(browser, 'export-csv', async (page) => {
      await openUsers(page);
      // the chips, typed as the CLI's --where (Shift+F)
      await page.keyboard.press('Shift+F');
      const text = page.getByTestId('where-editor').getByRole('textbox');
      await text.waitFor();
      await text.fill(`login begins_with ${prefix} and is_group_admin equals true`);
      await page.keyboard.press('Enter');
      await expect.poll(() => gridTotal(page), { timeout: WAIT }).toBe(expected.length);

      // from the palette: the page's own action, keyboard only
      await runFromPalette(page, 'export this list', 'Export this list…');
      await exportDialog(page).waitFor();
      await expectText(
        page.getByTestId('export-scope').locator('dd'),
        `login begins_with ${prefix} and is_group_admin equals true`,
      );
      // CSV and "by id" are chosen; the focus is on the first choice, Enter exports
      expect(await page.getByTestId('export-format-csv').isChecked()).toBe(true);
      expect(await page.getByTestId('export-refs-id').isChecked()).toBe(true);
      // the alert leaves after 3 s: wait for it from before the export starts
      const done = page
        .getByTestId('alert-success')
        .filter({ hasText: /Exported: 4, file users-\d{4}-\d{2}-\d{2}\.csv/ })
        .waitFor();
      const file = await download(page, () => page.keyboard.press('Enter'));
      expect(file.name).toMatch(/^users-\d{4}-\d{2}-\d{2}\.csv$/);
      await done;
      await exportDialog(page).waitFor({ state: 'detached' });
      csv = file.text;
    });

    // exactly the filtered users, in the import's columns, groups and roles by id
    const [header, ...rows] = parse(csv) as string[][];
    expect(header).toEqual([...UserExportColumns]);
    expect(rows).toEqual(expected.map((u) => csvCells(exportRow(u, exportNamers('id'))).map(String)));
    expect(csv.charCodeAt(0)).not.toBe(0xfeff);

    // the very file the CLI writes for the same filter
    const cli = await lintel(
      ['users', 'export', '--where', `login begins_with ${prefix} and is_group_admin equals true`],
      { configDir },
    );
    expect(cli.code, cli.stderr).toBe(0);
    expect(csv).toBe(cli.stdout);

    // once those users are gone, `lintel users import --dry-run` finds nothing wrong with the file
    await getCommand('user.delete_all').run({ api }, { items: expected.map((u) => u.id) });
    const out = path.join(dir, `${prefix}export.csv`);
    fs.writeFileSync(out, csv);
    const dry = await lintel(['users', 'import', out, '--dry-run', '--json'], { configDir });
    expect(dry.code, dry.stdout + dry.stderr).toBe(0);
    expect(userImportCommit.result.parse(JSON.parse(dry.stdout))).toMatchObject({
      dry_run: true,
      rows: expected.length,
      valid: expected.length,
      invalid: 0,
      errors_total: 0,
      would_insert: expected.length,
    });
  }, 120_000);

  it('JSON of the search, groups and roles by name, from the Export button', async () => {
    const prefix = `xj${uid()}-`;
    await makeUsers(prefix, 7);
    const expected = await listAll({ search: prefix });
    expect(expected).toHaveLength(7);
    const groups = (await getCommand('group.full').run({ api }, {})).data;

    await onPage(browser, 'export-json', async (page) => {
      await openUsers(page);
      await page.keyboard.press('/');
      await page.keyboard.type(prefix);
      await expect.poll(() => gridTotal(page), { timeout: WAIT }).toBe(expected.length);
      await page.getByTestId('table-export').click();
      await exportDialog(page).waitFor();
      await expectText(page.getByTestId('export-scope').locator('dd'), prefix);
      await page.getByTestId('export-format-json').check();
      await page.getByTestId('export-refs-name').check();
      const file = await download(page, () => page.getByTestId('export-start').click());
      expect(file.name).toMatch(/^users-\d{4}-\d{2}-\d{2}\.json$/);
      const rows = JSON.parse(file.text) as unknown[];
      expect(rows).toEqual(expected.map((u) => exportRow(u, exportNamers('name', groups))));
      // by name: the role and the groups as the import resolves them
      expect(rows[1]).toMatchObject({
        role: expected[1]!.role.name,
        domains: expected[1]!.domains.map((d) => d.name),
      });
    });
  }, 90_000);

  it('Esc closes the dialog without a download, and the focus goes back to Export', async () => {
    await onPage(browser, 'export-esc', async (page) => {
      await openUsers(page);
      let downloads = 0;
      page.on('download', () => downloads++);
      await page.getByTestId('table-export').focus();
      await page.keyboard.press('Enter');
      await exportDialog(page).waitFor();
      expect(await page.evaluate(() => document.activeElement?.getAttribute('data-testid') ?? '')).toBe(
        'export-format-csv',
      );
      await page.keyboard.press('Escape');
      await exportDialog(page).waitFor({ state: 'detached' });
      expect(await page.evaluate(() => document.activeElement?.getAttribute('data-testid') ?? '')).toBe(
        'table-export',
      );
      expect(downloads).toBe(0);
    });
  }, 90_000);
});
