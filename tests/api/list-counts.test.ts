/**
 * Counts that do not scan (issue 14 item 1): a list reply says how many rows match, exactly while they are
 * few (a count bounded to `listExactCount`), else as the planner's estimate marked `total_is_estimate`. The
 * threshold is configured low here so that a few hundred rows are "many". Whatever the total, the pages
 * past it stay reachable: a full page says at least one more row exists, the last page says exactly.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand, type User } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin, raw } from '../support/fixtures';

const EXACT_UP_TO = 50;
const SCALE = 300;

let ts: TestServer;
let api: ApiClient;
/** every user, as the list reads them when it asks for all in one page */
let everyone: User[];

const list = (query: Record<string, unknown>) => raw(ts, api, 'GET', '/users', { query });
const contains = (value: string) => [{ field: 'name', rule: 'contains', value }];

beforeAll(async () => {
  ts = await startTestServer({ config: { listExactCount: EXACT_UP_TO } });
  api = await admin(ts);
  await getCommand('seed.scale').run({ api }, { users: SCALE });
  const all = await list({ limit: 1000 });
  everyone = all.body.data;
}, 120_000);
afterAll(async () => {
  await ts?.close();
});

describe('list totals', () => {
  it('a page that ends the list gives the exact total, with no count', async () => {
    expect(everyone.length).toBe(SCALE + 1);
    const r = await list({ limit: 1000 });
    expect(r.body.meta).toEqual({ total: SCALE + 1, total_is_estimate: false, page: 1, limit: 1000 });
  });

  it('more matching rows than the threshold: the total is an estimate, and says so', async () => {
    const r = await list({ limit: 20 });
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(20);
    expect(r.body.meta.total_is_estimate).toBe(true);
    // the planner's figure after the seed's ANALYZE: above the threshold, near the real count
    expect(r.body.meta.total).toBeGreaterThan(EXACT_UP_TO);
    expect(r.body.meta.total).toBeGreaterThan(SCALE / 2);
    expect(r.body.meta.total).toBeLessThan(SCALE * 2);
    // the command's result schema reads the mark too
    const parsed = await getCommand('user.list').run({ api }, { limit: 20 });
    expect(parsed.meta.total_is_estimate).toBe(true);
  });

  it('few matching rows: the total is exact although the page is full', async () => {
    // " 29": the scale users 29 and 290–299
    const few = everyone.filter((u) => u.name.toLowerCase().includes(' 29')).length;
    expect(few).toBeGreaterThan(5);
    expect(few).toBeLessThanOrEqual(EXACT_UP_TO);
    const r = await list({ limit: 5, filters: contains(' 29') });
    expect(r.body.data).toHaveLength(5);
    expect(r.body.meta).toEqual({ total: few, total_is_estimate: false, page: 1, limit: 5 });
  });

  it('a filter that matches more than the threshold is estimated, one under it counted', async () => {
    const many = everyone.filter((u) => /e/i.test(u.name)).length;
    expect(many).toBeGreaterThan(EXACT_UP_TO);
    const r = await list({ limit: 10, filters: contains('e') });
    expect(r.body.meta.total_is_estimate).toBe(true);
    expect(r.body.meta.total).toBeGreaterThan(EXACT_UP_TO);
    // the page is full and another row exists: never fewer than that
    expect(r.body.meta.total).toBeGreaterThanOrEqual(11);
  });

  it('the last page stays reachable whatever the estimate said', async () => {
    const limit = 40;
    const pages = Math.ceil((SCALE + 1) / limit);
    const seen: number[] = [];
    let last: { total: number; total_is_estimate: boolean } | null = null;
    for (let page = 1; page <= pages; page++) {
      const r = await list({ limit, page, sort: 'name' });
      expect(r.status).toBe(200);
      seen.push(...r.body.data.map((u: User) => u.id));
      last = r.body.meta;
      // a full page not at the end: the total leaves room for the next one
      if (page < pages) expect(r.body.meta.total).toBeGreaterThan(page * limit);
    }
    expect(new Set(seen).size).toBe(SCALE + 1);
    expect(last).toMatchObject({ total: SCALE + 1, total_is_estimate: false });
    // past the end: no rows, and a total no higher than the rows before the page
    const past = await list({ limit, page: pages + 5 });
    expect(past.body.data).toEqual([]);
    expect(past.body.meta.total).toBeLessThanOrEqual((pages + 4) * limit);
  });
});
