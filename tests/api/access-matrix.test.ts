/**
 * Issue 21, the access matrix: the server's use of the one decision. A random world — a group tree, users in
 * it, devices, schedules (weekly windows, overnight, all day), holidays of the project and of a group,
 * identifiers revoked, limited in time and in passes, and rules naming devices, schedules, users,
 * identifiers and groups, some of them prohibitions — is made through the API; the matrix at many instants
 * must equal `decideByScan` (the core's plain reading of the rules) over the same data as the test knows it,
 * pair for pair, and a prohibition in force always refuses. Then paging, filters and the download.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { getCommand, type AccessMatrixRow } from '@lintel/commands';
import {
  decideByScan,
  holidayDays,
  scheduleState,
  type AccessRuleSpec,
  type ApiClient,
  type ScheduleSpec,
} from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin, group, raw, rootGroup, tokenOf, uid, userWith } from '../support/fixtures';

const TZ = 'Etc/GMT-2';
let ts: TestServer;
let api: ApiClient;

/** a small PRNG with a printed seed, so a failing world can be made again */
const seed = Number(process.env.MATRIX_SEED ?? Date.now() % 100_000);
let state = seed;
const rnd = () => {
  state = (state + 0x6d2b79f5) | 0;
  let t = Math.imul(state ^ (state >>> 15), 1 | state);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
};
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
const some = <T>(xs: readonly T[], p = 0.4): T[] => xs.filter(() => rnd() < p);
const chance = (p: number) => rnd() < p;

interface World {
  parent: Map<number, number | null>;
  userGroups: Map<number, number[]>;
  deviceGroup: Map<number, number>;
  holidays: { date: string; group: number | null }[];
  schedules: Map<number, ScheduleSpec>;
  rules: AccessRuleSpec[];
  identifiers: Array<{
    id: number;
    owner: number | null;
    is_active: boolean;
    period_restrict_active: boolean;
    period_restrict_from_u: string | null;
    period_restrict_to_u: string | null;
    passes_restrict_active: boolean;
    passes_restrict_max_count: number;
    passes_count: number;
    type: string;
  }>;
  devices: number[];
}
const w: World = {
  parent: new Map(),
  userGroups: new Map(),
  deviceGroup: new Map(),
  holidays: [],
  schedules: new Map(),
  rules: [],
  identifiers: [],
  devices: [],
};

const chain = (g: number): number[] => {
  const out: number[] = [];
  for (let x: number | null | undefined = g; x != null; x = w.parent.get(x)) out.push(x);
  return out;
};

beforeAll(async () => {
  ts = await startTestServer();
  api = await admin(ts);
  const root = await rootGroup(api);
  w.parent.set(root, null);
  const A = await group(api, `A${uid()}`, root);
  const A1 = await group(api, `A1${uid()}`, A);
  const B = await group(api, `B${uid()}`, root);
  w.parent.set(A, root).set(A1, A).set(B, root);
  const groups = [root, A, A1, B];
  const users: number[] = [];
  for (let k = 0; k < 5; k++) {
    const gs = [pick([A1, B, A, root])];
    const u = await userWith(ts, api, { permissions: [], domains: gs });
    users.push(u.id);
    w.userGroups.set(u.id, gs);
  }
  for (let k = 0; k < 4; k++) {
    const serial = `MX${uid()}`;
    const g = pick([root, A, A1, B]);
    const d = (
      await getCommand('device.create').run({ api }, {
        name: `Door ${serial}`,
        type: 'panel',
        serial_number: serial,
        domain_id: g,
      } as never)
    ).data;
    w.devices.push(d.id);
    w.deviceGroup.set(d.id, g);
  }
  const shapes: Array<Partial<ScheduleSpec>> = [
    { repeat_mode: 'weekly', repeat_days: ['mon', 'tue', 'wed', 'thu', 'fri'] },
    { repeat_mode: 'daily', time_from: 72_000, time_to: 21_600 },
    { repeat_mode: 'weekly', repeat_days: ['sat', 'sun'], is_all_day: true },
    { repeat_mode: 'every_2_weeks', repeat_days: ['wed'], time_from: 3600, time_to: 50_000 },
  ];
  for (const shape of shapes) {
    const s = (
      await getCommand('schedule.create').run({ api }, {
        name: `S ${uid()}`,
        valid_from: '2026-11-02',
        ...shape,
      } as never)
    ).data;
    w.schedules.set(s.id, s);
  }
  for (const [date, g] of [
    ['2026-12-25', null],
    ['2026-12-02', A],
  ] as const) {
    await getCommand('holiday.create').run({ api }, {
      name: `H ${uid()}`,
      date,
      ...(g ? { domains: [g] } : {}),
    } as never);
    w.holidays.push({ date, group: g });
  }
  for (let k = 0; k < 14; k++) {
    const passes = chance(0.3);
    const period = chance(0.3);
    const i = (
      await getCommand('identifier.create').run({ api }, {
        ...(chance(0.5)
          ? { type: 'card', value: String(100_000 + k * 7919 + (seed % 1000)) }
          : { type: 'qr' }),
        owner: chance(0.8) ? pick(users) : null,
        passes_restrict_active: passes,
        passes_restrict_max_count: passes ? Math.floor(rnd() * 3) : 0,
        period_restrict_active: period,
        ...(period
          ? {
              period_restrict_from: `2026-11-${String(5 + Math.floor(rnd() * 10)).padStart(2, '0')}T08:00:00`,
              period_restrict_to: `2026-12-${String(1 + Math.floor(rnd() * 20)).padStart(2, '0')}T20:00:00`,
            }
          : {}),
      } as never)
    ).data;
    if (chance(0.15)) await getCommand('identifier.revoke').run({ api }, { id: i.id });
    // what devices reported
    const count = Math.floor(rnd() * 3);
    await sql`update identifiers set passes_count = ${count} where id = ${i.id}`.execute(
      ts.server.context.db,
    );
    const now = (await getCommand('identifier.get').run({ api }, { id: i.id })) as World['identifiers'][0];
    w.identifiers.push({ ...now, passes_count: count });
  }
  for (let k = 0; k < 10; k++) {
    // the first rule: a prohibition at all times of one identifier at one device, so every instant has one
    const first = k === 0;
    const devices = first ? [w.devices[0]!] : some(w.devices, 0.5);
    if (!devices.length) devices.push(pick(w.devices));
    const r = (
      await getCommand('access_rule.create').run({ api }, {
        name: `R ${uid()}`,
        devices,
        time_rules: !first && chance(0.6) ? some([...w.schedules.keys()], 0.4) : [],
        users: first ? [] : some(users, 0.25),
        identifiers: first
          ? [w.identifiers[0]!.id]
          : some(
              w.identifiers.map((i) => i.id),
              0.15,
            ),
        domains: first ? [] : some(groups, 0.25),
        prohibition: first || chance(0.25),
      } as never)
    ).data;
    w.rules.push({
      id: r.id,
      prohibition: r.prohibition,
      devices: r.devices.map((x) => x.id),
      time_rules: r.time_rules.map((x) => x.id),
      users: r.users.map((x) => x.id),
      identifiers: r.identifiers.map((x) => x.id),
      domains: r.domains.map((x) => x.id),
    });
  }
}, 240_000);
afterAll(async () => {
  await ts?.close();
});

const matrix = async (args: Record<string, unknown>): Promise<AccessMatrixRow[]> => {
  const out: AccessMatrixRow[] = [];
  let cursor: string | undefined;
  do {
    const page = await getCommand('access_matrix.list').run({ api }, {
      limit: 1000,
      ...args,
      cursor,
    } as never);
    out.push(...page.data);
    cursor = page.meta.next ?? undefined;
  } while (cursor);
  return out;
};

/** What the test expects, from the world as it made it: the reference reading of the rules. */
function expected(at: number) {
  const out = new Map<string, { allowed: boolean; rule: number | null; reason: string | null }>();
  for (const i of w.identifiers)
    for (const d of w.devices) {
      const groups = i.owner === null ? [] : [...new Set((w.userGroups.get(i.owner) ?? []).flatMap(chain))];
      const named = w.rules.some(
        (r) =>
          r.devices.includes(d) &&
          (r.identifiers.includes(i.id) ||
            (i.owner !== null && r.users.includes(i.owner)) ||
            r.domains.some((g) => groups.includes(g))),
      );
      if (!named) continue;
      const deviceChain = chain(w.deviceGroup.get(d)!);
      const holidays = holidayDays(
        w.holidays.filter((h) => h.group === null || deviceChain.includes(h.group)).map((h) => h.date),
      );
      const decision = decideByScan(
        i,
        d,
        at,
        { rules: w.rules, schedules: w.schedules },
        { tz: TZ, holidays, groups },
      );
      out.set(`${i.id}.${d}`, { allowed: decision.allowed, rule: decision.rule, reason: decision.reason });
    }
  return out;
}

describe('the access matrix', () => {
  it(`equals the reference decision at every instant tried, and a prohibition always wins (seed ${seed})`, async () => {
    const instants = [
      Date.parse('2026-12-02T08:30:00Z'), // a Wednesday, a holiday of group A
      Date.parse('2026-12-25T10:00:00Z'), // the project's holiday
      Date.parse('2026-11-29T12:00:00Z'), // a Sunday
    ];
    for (let k = 0; k < 17; k++)
      instants.push(Date.parse('2026-11-01T00:00:00Z') + Math.floor(rnd() * 60 * 86_400) * 1000);
    let cases = 0;
    let prohibited = 0;
    for (const at of instants) {
      const rows = await matrix({ at: new Date(at).toISOString() });
      const want = expected(at);
      const got = new Map(
        rows.map((r) => [
          `${r.identifier.id}.${r.device.id}`,
          { allowed: r.allowed, rule: r.rule?.id ?? null, reason: r.reason },
        ]),
      );
      expect(got, new Date(at).toISOString()).toEqual(want);
      cases += got.size;
      for (const r of rows) {
        const i = w.identifiers.find((x) => x.id === r.identifier.id)!;
        const groups = i.owner === null ? [] : (w.userGroups.get(i.owner) ?? []).flatMap(chain);
        const inForce = w.rules.some(
          (rule) =>
            rule.prohibition &&
            rule.devices.includes(r.device.id) &&
            (rule.identifiers.includes(i.id) ||
              (i.owner !== null && rule.users.includes(i.owner)) ||
              rule.domains.some((g) => groups.includes(g))) &&
            (rule.time_rules.length === 0 ||
              rule.time_rules.some((s) => {
                const dc = chain(w.deviceGroup.get(r.device.id)!);
                const hs = w.holidays
                  .filter((h) => h.group === null || dc.includes(h.group))
                  .map((h) => h.date);
                return scheduleState(w.schedules.get(s)!, at, TZ, hs) === 'open';
              })),
        );
        if (inForce) {
          prohibited++;
          expect(r.allowed).toBe(false);
        }
      }
    }
    expect(cases).toBeGreaterThan(50);
    expect(prohibited).toBeGreaterThanOrEqual(instants.length);
    if (process.env.MATRIX_REPORT) console.log({ seed, cases, prohibited });
  });

  it('pages by cursor to the same rows, and filters by user, type, device and answer', async () => {
    const at = '2026-11-25T09:30:00Z';
    const all = await matrix({ at });
    const paged = await matrix({ at, limit: 3 });
    expect(paged).toEqual(all);
    const owner = all.find((r) => r.owner)?.owner;
    if (owner)
      expect(await matrix({ at, user: owner.id })).toEqual(all.filter((r) => r.owner?.id === owner.id));
    expect(await matrix({ at, type: 'qr' })).toEqual(all.filter((r) => r.identifier.type === 'qr'));
    expect(await matrix({ at, device: w.devices[0] })).toEqual(
      all.filter((r) => r.device.id === w.devices[0]),
    );
    expect(await matrix({ at, allowed: true })).toEqual(all.filter((r) => r.allowed));
    expect(await matrix({ at, allowed: false })).toEqual(all.filter((r) => !r.allowed));
  });

  it('downloads the matrix of the filters as CSV', async () => {
    const at = '2026-11-25T09:30:00Z';
    const all = await matrix({ at });
    const res = await fetch(`${ts.url}/api/v0/access-matrix/export?format=csv&at=${at}`, {
      headers: { authorization: `Bearer ${tokenOf(api)}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toContain('access-matrix-2026-11-25.csv');
    const lines = (await res.text()).trim().split('\r\n');
    expect(lines[0]).toContain('Identifier');
    expect(lines).toHaveLength(all.length + 1);
    const refused = await raw(ts, await admin(ts), 'GET', '/access-matrix', { query: { cursor: 'x' } });
    expect(refused.status).toBe(422);
  });
});
