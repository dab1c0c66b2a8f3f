/**
 * The licence reports (issue 15 item 7; spec part 2 §7 Reports, §9 report periods): each filter of both
 * reports, the report periods by the server's clock, the permission (403 with the catalogue code), a scoped
 * caller seeing only his groups, keyset pages, and the CSV and XLSX exports. PGlite, and PostgreSQL with
 * DATABASE_URL.
 */
import ExcelJS from 'exceljs';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { ManualClock } from '../../apps/server/src/clock';
import { startTestServer, type TestServer } from '../support/server';
import {
  admin,
  everyFeatureOn,
  failure,
  group,
  licence,
  rootGroup,
  tokenOf,
  uid,
  userWith,
} from '../support/fixtures';

const clock = new ManualClock(Date.parse('2025-03-15T12:00:00Z'));
let ts: TestServer;
let api: ApiClient;
let root: number;
const g: Record<string, number> = {};
let typeA: number;
let adminUser: number;

const used = (args: Record<string, unknown> = {}) =>
  getCommand('reports.licences_used').run({ api }, { limit: 1000, ...args });
const periods = (args: Record<string, unknown> = {}) =>
  getCommand('reports.licences_period').run({ api }, { limit: 1000, ...args });

const lic = (features: object, from: string | null, to: string | null, active = true) => ({
  is_active: active,
  features,
  restrict_period: from || to ? { is_active: true, from, to } : { is_active: false, from: null, to: null },
});
const settings = (notify: { period: string; notify_before: number }, ...licenses: object[]) => ({
  license_settings: { is_enabled: true, notifications: notify, licenses },
});
const never = { period: 'never', notify_before: 0 };

beforeAll(async () => {
  ts = await startTestServer({ config: { clock } });
  api = await admin(ts);
  await licence(ts, everyFeatureOn());
  root = await rootGroup(api);
  const tag = uid();
  typeA = (await getCommand('domain_type.create').run({ api }, { type: `a${tag}`, name: `House ${tag}` }))
    .data.id;
  // North (type A, max 3 users) with North-1 below it; South (settings on: a licence ending 2025-03-20,
  // a licence from April); West: a licence that ended in January, its settings on; East: settings off
  g.north = await group(api, `North ${tag}`, root, {
    domain_type_id: typeA,
    license_settings: {
      is_enabled: true,
      notifications: never,
      licenses: [lic({ sip: { is_enabled: true } }, null, null)],
    },
    license_limits: { users: 10 },
  });
  g.north1 = await group(api, `North-1 ${tag}`, g.north);
  g.south = await group(
    api,
    `South ${tag}`,
    root,
    settings(
      { period: 'everyday', notify_before: 7 },
      lic({ elevator: { is_enabled: true } }, '2025-01-01', '2025-03-20'),
      lic({ amenity: { is_enabled: true } }, '2025-04-01', '2025-12-31'),
    ),
  );
  g.west = await group(
    api,
    `West ${tag}`,
    root,
    settings(never, lic({ ukey2: { is_enabled: true } }, '2024-06-01', '2025-01-31')),
  );
  g.east = await group(api, `East ${tag}`, root, { license_limits: { mobile_apps: 5 } });
  // members: two in North-1, one in North (also in North-1: counted once), a group admin of South
  const m1 = await userWith(ts, api, { permissions: [], domains: [g.north1], name: `Member one ${tag}` });
  await userWith(ts, api, { permissions: [], domains: [g.north1], name: `Member two ${tag}` });
  await userWith(ts, api, { permissions: [], domains: [g.north, g.north1], name: `Member three ${tag}` });
  const boss = await userWith(ts, api, { permissions: [], domains: [g.south], name: `Boss ${tag}` });
  adminUser = boss.id;
  await ts.server.context.db
    .updateTable('users')
    .set({ is_group_admin: true })
    .where('id', '=', boss.id)
    .execute();
  void m1;
});
afterAll(async () => {
  await ts?.close();
});
// the tests that move the clock leave it where the others expect it
afterEach(() => clock.set(Date.parse('2025-03-15T12:00:00Z')));

const mine = <T extends { group_id: number }>(rows: T[]): T[] =>
  rows.filter((r) => Object.values(g).includes(r.group_id));

describe('licences used per group', () => {
  it('counts each subtree’s users once, with the maximums, the features in force and the group admins', async () => {
    const r = await used();
    const north = r.data.find((x) => x.group_id === g.north)!;
    expect(north.used.users).toBe(3);
    expect(north.limits.users).toBe(10);
    expect(north.features).toEqual(['sip']);
    expect(north.type).toMatch(/^House /);
    expect(r.data.find((x) => x.group_id === g.north1)!.used.users).toBe(3);
    const south = r.data.find((x) => x.group_id === g.south)!;
    expect(south.admins).toEqual([expect.stringMatching(/^Boss /)]);
    expect(south.features).toEqual(['elevator', 'amenity']);
    expect(r.data.find((x) => x.group_id === g.east)!.is_enabled).toBe(false);
    expect(r.period).toMatchObject({ name: 'all_time', from: null, to: null });
  });

  it('counts each subtree’s virtual numbers, by the counter their family declares with its limit', async () => {
    const n = await getCommand('sip_number.create').run(
      { api },
      { number: `55${Date.now() % 1e8}`, name: 'Reception', domain_id: g.north1! },
    );
    try {
      const r = await used();
      const of = (id: number | undefined) => r.data.find((x) => x.group_id === id)!.used.virtual_numbers;
      expect([of(g.north), of(g.north1), of(g.south)]).toEqual([1, 1, 0]);
    } finally {
      await getCommand('sip_number.delete').run({ api }, { id: n.data.id });
    }
  });

  it('filters by groups (with their subtrees), group types, group admins and data; matching any or all', async () => {
    expect(mine((await used({ domains: String(g.north) })).data).map((x) => x.group_id)).toEqual([
      g.north,
      g.north1,
    ]);
    expect(mine((await used({ domain_types: String(typeA) })).data).map((x) => x.group_id)).toEqual([
      g.north,
    ]);
    expect(mine((await used({ domain_admins: String(adminUser) })).data).map((x) => x.group_id)).toEqual([
      g.south,
    ]);
    // data: groups that cap or hold one of the counted things named
    expect(mine((await used({ data: 'mobile_apps' })).data).map((x) => x.group_id)).toEqual([g.east]);
    const onlyMobile = (await used({ data: 'mobile_apps' })).data[0]!;
    expect(Object.keys(onlyMobile.used)).toEqual(['mobile_apps']);
    // all: type A and administered by the boss — none; any: either
    expect(
      mine((await used({ domain_types: String(typeA), domain_admins: String(adminUser) })).data),
    ).toEqual([]);
    expect(
      mine(
        (await used({ domain_types: String(typeA), domain_admins: String(adminUser), matching: 'any' })).data,
      )
        .map((x) => x.group_id)
        .sort(),
    ).toEqual([g.north, g.south].sort());
  });

  it('reports the features of the licences in force during the period, computed by the server’s clock', async () => {
    // last month by the server's clock (15 March 2025) is February: South's April licence is not in it
    const feb = await used({ period: 'last_month', domains: String(g.south) });
    expect(feb.period).toMatchObject({ from: '2025-02-01', to: '2025-02-28' });
    expect(feb.data[0]!.features).toEqual(['elevator']);
    // manual: April to May — only the amenity licence
    const spring = await used({
      period: 'manual',
      date_from: '2025-04-01',
      date_to: '2025-05-31',
      domains: String(g.south),
    });
    expect(spring.data[0]!.features).toEqual(['amenity']);
    // West's licence ended in January: in force during last year's window, not today
    expect((await used({ period: 'today', domains: String(g.west) })).data[0]!.features).toEqual([]);
    expect((await used({ period: 'last_year', domains: String(g.west) })).data[0]!.features).toEqual([
      'ukey2',
    ]);
  });

  it('pages by keyset: every group once, in id order', async () => {
    const all = (await used()).data.map((x) => x.group_id);
    const seen: number[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await used({ limit: 2, cursor });
      seen.push(...page.data.map((x) => x.group_id));
      if (!page.meta.next) break;
      cursor = page.meta.next;
    }
    expect(seen).toEqual(all);
  });
});

describe('report periods against the server’s clock', () => {
  it('today, current month, last month, half year, last year, manual and all time', async () => {
    const at = async (iso: string, period: string, extra: Record<string, unknown> = {}) => {
      clock.set(Date.parse(iso));
      return (await periods({ period, ...extra })).period;
    };
    expect(await at('2025-03-15T12:00:00Z', 'today')).toMatchObject({ from: '2025-03-15', to: '2025-03-15' });
    expect(await at('2025-03-15T23:59:00Z', 'current_month')).toMatchObject({
      from: '2025-03-01',
      to: '2025-03-31',
    });
    expect(await at('2025-01-10T00:00:00Z', 'last_month')).toMatchObject({
      from: '2024-12-01',
      to: '2024-12-31',
    });
    expect(await at('2025-03-15T12:00:00Z', 'half_year')).toMatchObject({
      from: '2024-09-16',
      to: '2025-03-15',
    });
    expect(await at('2025-03-15T12:00:00Z', 'last_year')).toMatchObject({
      from: '2024-03-16',
      to: '2025-03-15',
    });
    expect(
      await at('2025-03-15T12:00:00Z', 'manual', { date_from: '2025-01-05', date_to: '2025-01-06' }),
    ).toMatchObject({
      from: '2025-01-05',
      to: '2025-01-06',
    });
    expect(await at('2025-03-15T12:00:00Z', 'all_time')).toMatchObject({ from: null, to: null });
    // the clock moved on a day: today follows it
    expect(await at('2025-03-16T00:00:00Z', 'today')).toMatchObject({ from: '2025-03-16', to: '2025-03-16' });
    clock.set(Date.parse('2025-03-15T12:00:00Z'));
  });

  it('refuses a manual period without days, or with its days reversed', async () => {
    expect((await failure(periods({ period: 'manual' }))).code).toBe('check_fields_data');
    expect(
      (await failure(periods({ period: 'manual', date_from: '2025-02-02', date_to: '2025-02-01' }))).code,
    ).toBe('check_fields_data');
  });
});

describe('licence validity periods', () => {
  it('gives each licence its status and days left by the server’s clock', async () => {
    const rows = mine((await periods()).data);
    const south = rows.filter((r) => r.group_id === g.south);
    // ends 2025-03-20 (5 days left, notify before 7): ending; the April one has not started
    expect(south.map((r) => [r.licence, r.status, r.days_left])).toEqual([
      [1, 'ending', 5],
      [2, 'future', 291],
    ]);
    expect(rows.find((r) => r.group_id === g.west)!.status).toBe('expired');
    expect(rows.find((r) => r.group_id === g.north)).toMatchObject({
      status: 'active',
      from: null,
      to: null,
      days_left: null,
    });
    expect(south[0]!.notifications).toEqual({ period: 'everyday', notify_before: 7 });
    // a week on, the first has expired and the second is still to come
    clock.set(Date.parse('2025-03-22T12:00:00Z'));
    const later = mine((await periods({ domains: String(g.south) })).data);
    expect(later.map((r) => r.status)).toEqual(['expired', 'future']);
    clock.set(Date.parse('2025-03-15T12:00:00Z'));
  });

  it('filters by status, by the dates of the licence (start, end, overlap) and by the last notice', async () => {
    expect(
      mine((await periods({ status: 'ending,expired' })).data).map((r) => [r.group_id, r.status]),
    ).toEqual([
      [g.south, 'ending'],
      [g.west, 'expired'],
    ]);
    const endsInMarch = await periods({ period: 'current_month', date_condition: 'ends' });
    expect(mine(endsInMarch.data).map((r) => [r.group_id, r.licence])).toEqual([[g.south, 1]]);
    const startsInApril = await periods({
      period: 'manual',
      date_from: '2025-04-01',
      date_to: '2025-04-30',
      date_condition: 'starts',
    });
    expect(mine(startsInApril.data).map((r) => [r.group_id, r.licence])).toEqual([[g.south, 2]]);
    const overlapsJanuary = await periods({
      period: 'manual',
      date_from: '2025-01-15',
      date_to: '2025-01-20',
    });
    expect(mine(overlapsJanuary.data).map((r) => [r.group_id, r.licence])).toEqual([
      [g.north, 1],
      [g.south, 1],
      [g.west, 1],
    ]);
    // nobody was told yet; once South is, its last notice is reported and found
    expect(mine((await periods({ date_condition: 'notified' })).data)).toEqual([]);
    await sql`insert into group_licence_notify (domain_id, last_notified_at, last_key)
      values (${g.south}, ${new Date('2025-03-14T08:00:00Z')}, 'k')`.execute(ts.server.context.db);
    const told = mine((await periods({ date_condition: 'notified', period: 'current_month' })).data);
    expect(told.map((r) => [r.group_id, r.last_notified_at])).toEqual([
      [g.south, '2025-03-14T08:00:00.000Z'],
      [g.south, '2025-03-14T08:00:00.000Z'],
    ]);
  });
});

describe('who may run the reports', () => {
  it('refuses a user without report-licences-used with 403 and the catalogue code', async () => {
    const plain = await userWith(ts, api, { permissions: ['licenses.view'], domains: [root] });
    const err = await failure(getCommand('reports.licences_used').run({ api: await plain.client() }, {}));
    expect(err.status).toBe(403);
    expect(err.code).toBe('method_prohibited');
    const res = await fetch(`${ts.url}/api/v0/reports/licenses/used/export?format=csv`, {
      headers: { authorization: `Bearer ${tokenOf(await plain.client())}` },
    });
    expect(res.status).toBe(403);
  });

  it('shows a scoped administrator only his groups and those below them', async () => {
    const scoped = await userWith(ts, api, { permissions: ['reports.licenses_used'], domains: [g.north!] });
    const client = await scoped.client();
    const rows = (await getCommand('reports.licences_used').run({ api: client }, { limit: 1000 })).data;
    expect(rows.map((r) => r.group_id).sort()).toEqual([g.north, g.north1].sort());
    const p = (await getCommand('reports.licences_period').run({ api: client }, { limit: 1000 })).data;
    expect([...new Set(p.map((r) => r.group_id))]).toEqual([g.north]);
    // asking for another group's subtree gives nothing outside his own
    const other = await getCommand('reports.licences_used').run(
      { api: client },
      { domains: String(g.south) },
    );
    expect(other.data).toEqual([]);
  });
});

describe('exports', () => {
  const download = async (path: string, query: string) => {
    const res = await fetch(`${ts.url}/api/v0/reports/licenses/${path}/export?${query}`, {
      headers: { authorization: `Bearer ${tokenOf(api)}` },
    });
    expect(res.status).toBe(200);
    return res;
  };

  it('writes the used report as CSV with the filters in force', async () => {
    const res = await download('used', `format=csv&domains=${g.north}`);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(res.headers.get('content-disposition')).toMatch(/licences-used-2025-03-15\.csv/);
    const lines = (await res.text())
      .replace(/^\uFEFF/, '')
      .trim()
      .split('\r\n');
    expect(lines[0]).toMatch(/^Group id,Group,/);
    expect(lines.slice(1).map((l) => Number(l.split(',')[0]))).toEqual([g.north, g.north1]);
    const n = (await used({ domains: String(g.north) })).data[0]!.used.users;
    expect(lines[1]).toContain(`,${n},10,`);
  });

  it('writes the validity report as XLSX that a spreadsheet reads back', async () => {
    const res = await download('period', `format=xlsx&domains=${g.south}`);
    const book = new ExcelJS.Workbook();
    await book.xlsx.load((await res.arrayBuffer()) as unknown as Parameters<typeof book.xlsx.load>[0]);
    const ws = book.worksheets[0]!;
    const rows: unknown[][] = [];
    ws.eachRow((row) => rows.push((row.values as unknown[]).slice(1)));
    expect(rows[0]![0]).toBe('Group id');
    expect(rows.slice(1).map((r) => [r[0], r[3], r[8]])).toEqual([
      [g.south, 1, 'Ending'],
      [g.south, 2, 'Not started'],
    ]);
  });

  it('writes the column names in the caller’s language', async () => {
    const res = await fetch(`${ts.url}/api/v0/reports/licenses/period/export?format=csv&domains=${g.south}`, {
      headers: { authorization: `Bearer ${tokenOf(api)}`, 'accept-language': 'ru' },
    });
    const text = await res.text();
    expect(text.split('\r\n')[0]).toContain('Id группы');
    expect(text).toContain('Заканчивается');
  });
});
