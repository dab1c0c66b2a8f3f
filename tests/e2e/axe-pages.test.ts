/**
 * axe-core on every page of the console (issue 25): the pages come from the console's own page list
 * (apps/web/src/nav/pages.ts: the families' list, add and edit pages and the screens of their own), so a page
 * added later is checked without being named here. An edit page opens a row of its family (the first listed,
 * else one made from the declaration's example). Every violation, of any impact, fails. One browser, one
 * page signed in once; the sign-in page is checked before.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { resources, getCommand, type CommandId } from '@lintel/commands';
import { Pages } from '../../apps/web/src/nav/pages';
import { type TestServer } from '../support/server';
import { admin, everyFeatureOn, licence, rootGroup } from '../support/fixtures';
import { exampleMaker } from '../support/family-examples';
import { keyboardSignIn } from '../support/console';
import { axeOn, consoleWorld, freshPage, moveTo, requestsDone, trackRequests } from '../support/web';

let server: TestServer;
let browser: Browser;
consoleWorld({}, (w) => ({ server, browser } = w));

/**
 * The page settled: what it asked for on opening has come (two frames drawn first, so its effects have
 * sent their requests), and no skeleton, no spinner of a loading table or card is left.
 */
async function settled(page: Page): Promise<void> {
  await requestsDone(page);
  await page
    .waitForFunction(
      () => !document.querySelector('[data-testid="table-skeleton"], [aria-busy="true"]'),
      null,
      {
        timeout: 15_000,
      },
    )
    .catch(() => undefined);
}

async function violations(page: Page): Promise<string[]> {
  // with the experimental rule that found the EN/RU buttons named otherwise than they read
  const result = await axeOn(page)
    .options({ resultTypes: ['violations'], rules: { 'label-content-name-mismatch': { enabled: true } } })
    .analyze();
  return result.violations.map(
    (v) =>
      `${v.id} (${v.impact}): ${v.nodes
        .slice(0, 3)
        .map((n) => n.target.join(' '))
        .join(', ')}`,
  );
}

/** The pages visited: every page of the list, an edit page with a row of its family (other parameters skipped). */
const visits = Pages.filter((def) => {
  const rest = def.path.replace(':id', '');
  return !rest.includes(':') && (!def.path.includes(':id') || Boolean(def.family));
});

describe('axe on every page', () => {
  let api: Awaited<ReturnType<typeof admin>>;
  let root: number;
  let page: Page;
  let close: () => Promise<void>;

  /** a row of each family whose edit page is visited */
  const rowOf = async (family: string): Promise<number> => {
    const listed = (await getCommand(`${family}.list` as CommandId).run({ api }, {
      limit: 1,
    } as never)) as {
      data: { id: number }[];
    };
    if (listed.data[0]) return listed.data[0].id;
    const r = resources.find((f) => f.noun === family)!;
    const args = await exampleMaker(r, { api: () => api }, resources).createArgs(root);
    const made = (await r.commands.create.run({ api }, args as never)) as { data: { id: number } };
    return made.data.id;
  };

  beforeAll(async () => {
    // every feature licensed: the pages of licensed families open as their users see them
    await licence(server, everyFeatureOn());
    api = await admin(server);
    root = await rootGroup(api);
    const fresh = await freshPage(browser, { width: 1440, height: 900 });
    page = fresh.page;
    trackRequests(page);
    close = () => fresh.context.close();
  });
  afterAll(async () => {
    await close?.();
  });

  it('visits more than the families: the page list is read, not a handful', () => {
    expect(visits.length).toBeGreaterThan(15);
  });

  it('finds no violation on the sign-in page', async () => {
    await page.goto(`${server.url}/login`);
    await page.getByRole('textbox', { name: 'Login or e-mail', exact: true }).waitFor();
    expect(await violations(page)).toEqual([]);
    await keyboardSignIn(page, server, server.adminLogin, server.adminPassword);
  });

  // one test a page (each its own time), in the order of the list, in the one signed-in page; each reached
  // as the console's links reach it (a full load of each would cost Chromium 1.3–1.7 s of CPU more a page)
  for (const def of visits)
    it(`finds no violation on ${def.path}`, async () => {
      const path = def.path.includes(':id')
        ? def.path.replace(':id', String(await rowOf(def.family!)))
        : def.path;
      await moveTo(page, `${server.url}${path}`);
      await page.getByTestId('side-menu').waitFor();
      await settled(page);
      expect(await violations(page)).toEqual([]);
    }, 60_000);
});
