/**
 * Issue 21, the access-control families (identifiers, schedules, holidays, access rules) as the API answers
 * them: each identifier type's value read in the caller's format and stored canonical, the server-made QR, the
 * duplicate of type and value, the licence gates of types and guests, the periods shifted to instants, the
 * pass limit shaping, revoke; schedules' defaults and checks; access rules' relations from both ends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { sql } from 'kysely';
import {
  admin,
  everyFeatureOn,
  failure,
  licence,
  raw,
  rootGroup,
  tokenOf,
  uid,
  userWith,
} from '../support/fixtures';

let ts: TestServer;
let api: ApiClient;
let root: number;
let owner: number;

const cmd = getCommand;
const card = (value: string, extra: Record<string, unknown> = {}) =>
  cmd('identifier.create').run({ api }, { type: 'card', value, ...extra } as never);

beforeAll(async () => {
  ts = await startTestServer();
  api = await admin(ts);
  root = await rootGroup(api);
  owner = (await userWith(ts, api, { permissions: [], domains: [root], name: `Owner ${uid()}` })).id;
});
afterAll(async () => {
  await ts?.close();
});

const digits = () => String(Math.floor(Math.random() * 9e9) + 1e8);

describe('identifiers', () => {
  it('stores a card number canonical, whatever format it was typed in', async () => {
    const n = digits();
    const made = (await card(`00${n}`.slice(-10), { owner })).data;
    expect(made).toMatchObject({
      type: 'card',
      value: String(Number(n)),
      owner,
      owner_type: 'user',
      is_active: true,
    });
    expect(made.owner_user?.id).toBe(owner);
    const e = await failure(card(`0x${Number(n).toString(16).padStart(10, '0')}`));
    expect([e.status, e.message]).toEqual([409, 'identifier_duplicate']);
  });

  it('refuses a value its type does not take, naming the rule', async () => {
    const e = await failure(card('12ab'));
    expect(e.status).toBe(422);
    expect(JSON.stringify(e.data)).toContain('number_or_hex');
    const code = await failure(
      cmd('identifier.create').run({ api }, { type: 'access_code', value: '12' } as never),
    );
    expect(JSON.stringify(code.data)).toContain('digits');
  });

  it('makes a QR its UUID', async () => {
    const qr = (await cmd('identifier.create').run({ api }, { type: 'qr', owner } as never)).data;
    expect(qr.value).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });

  it('shifts a typed period to instants by the caller time zone, and zeroes an unused pass limit', async () => {
    const made = (
      await card(digits(), {
        period_restrict_active: true,
        period_restrict_from: '2026-12-01T09:00:00',
        period_restrict_to: '2026-12-31T18:00:00',
        passes_restrict_active: false,
        passes_restrict_max_count: 7,
      })
    ).data;
    // the administrator has no zone: the project's default, Etc/GMT-2 (UTC+2)
    expect(made.period_restrict_from_u).toBe('2026-12-01T07:00:00Z');
    expect(made.period_restrict_to_u).toBe('2026-12-31T16:00:00Z');
    expect(made.passes_restrict_max_count).toBe(0);
    const sent = (
      await card(digits(), {
        period_restrict_active: true,
        period_restrict_from: '2026-12-01T09:00:00',
        period_restrict_from_u: '2026-12-01T06:00:00Z',
      })
    ).data;
    expect(sent.period_restrict_from_u).toBe('2026-12-01T06:00:00Z');
    const changed = (
      await cmd('identifier.update').run({ api }, {
        id: sent.id,
        period_restrict_from: '2026-12-02T10:00:00',
      } as never)
    ).data;
    expect(changed.period_restrict_from_u).toBe('2026-12-02T08:00:00Z');
  });

  it('revokes', async () => {
    const made = (await card(digits())).data;
    const r = await cmd('identifier.revoke').run({ api }, { id: made.id });
    expect(r.data.is_active).toBe(false);
    expect((await cmd('identifier.revoke').run({ api }, { id: made.id })).data.is_active).toBe(false);
  });

  it('asks the licence of plates and guests', async () => {
    const plate = () =>
      cmd('identifier.create').run({ api }, { type: 'license_plate', value: `a ${uid()}` } as never);
    const guest = () => cmd('identifier.create').run({ api }, { type: 'qr', owner_type: 'guest' } as never);
    expect((await failure(plate())).message).toBe('feature_not_licensed');
    expect((await failure(guest())).message).toBe('feature_not_licensed');
    await licence(ts, everyFeatureOn());
    const p = (await plate()).data;
    expect(p.value).toMatch(/^A[0-9A-F]{8}$/);
    const g = (await guest()).data;
    expect(g).toMatchObject({
      owner_type: 'guest',
      owner: null,
      name: 'Guest identifier',
      guest_type: 'guest',
    });
  });
});

describe('schedules and access rules', () => {
  it('keeps an access rule whole when only its name changes, and shows it from both ends', async () => {
    const serial = `AF${uid()}`;
    const device = (
      await cmd('device.create').run({ api }, {
        name: `Door ${serial}`,
        type: 'panel',
        serial_number: serial,
        domain_id: root,
      } as never)
    ).data;
    const schedule = (
      await cmd('schedule.create').run({ api }, {
        name: `Weekdays ${uid()}`,
        valid_from: '2026-01-01',
        repeat_days: ['mon', 'tue', 'wed', 'thu', 'fri'],
      } as never)
    ).data;
    expect(schedule).toMatchObject({ time_from: 32_400, time_to: 64_800, repeat_mode: 'weekly' });
    const id = (await card(digits())).data;
    const rule = (
      await cmd('access_rule.create').run({ api }, {
        name: `Staff ${uid()}`,
        devices: [device.id],
        time_rules: [schedule.id],
        users: [owner],
        identifiers: [id.id],
        domains: [root],
      } as never)
    ).data;
    expect(rule.devices.map((d) => d.id)).toEqual([device.id]);
    const renamed = (
      await cmd('access_rule.update').run({ api }, { id: rule.id, name: `Staff ${uid()}` } as never)
    ).data;
    expect(renamed).toMatchObject({
      devices: rule.devices,
      time_rules: rule.time_rules,
      users: rule.users,
      domains: rule.domains,
    });
    expect((await cmd('identifier.get').run({ api }, { id: id.id })).access_rules.map((r) => r.id)).toEqual([
      rule.id,
    ]);
    expect(
      (await cmd('schedule.get').run({ api }, { id: schedule.id })).access_rules.map((r) => r.id),
    ).toEqual([rule.id]);
    const none = await raw(ts, api, 'PUT', '/access-rules', {
      body: { name: `Empty ${uid()}`, devices: [] },
    });
    expect([none.status, none.body.error_code]).toEqual([422, 'check_fields_data']);
  });
});

describe('the identifier import', () => {
  /** step one: the rows as the NDJSON stream the console and the CLI send */
  const attempt = async (rows: unknown[]) => {
    const res = await fetch(`${ts.url}/api/v0/identifiers/import/attempt`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokenOf(api)}`, 'content-type': 'application/x-ndjson' },
      body: rows.map((r) => JSON.stringify(r)).join('\n'),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as {
      filepath: string;
      rows: number;
      invalid: number;
      duplicates: number;
      errors: { line: number; field: string; rule?: string }[];
      errors_total: number;
      rejected_lines: [number, number][];
      duplicate_lines: number[];
    };
  };
  const go = (filepath: string, action: 'skip' | 'overwrite' | 'stop') =>
    cmd('identifier.import_continue').run({ api }, { filepath, action });
  const count = async (values: string[]) =>
    (
      await sql<{
        n: number;
      }>`select count(*)::int as n from identifiers where type = 'card' and value in (${sql.join(values)})`.execute(
        ts.server.context.db,
      )
    ).rows[0]!.n;

  it('reports every bad row by line and reason, commits nothing on stop, the good rows on skip', async () => {
    const existing = (await card(digits(), { name: 'Old' })).data;
    const fresh = [digits(), digits(), digits()];
    const rows = [
      { type: 'card', value: fresh[0], name: 'A', owner },
      { type: 'card', value: 'zz' },
      { type: 'card', value: existing.value, name: 'New name' },
      { type: 'card', value: fresh[1] },
      { type: 'card', value: fresh[1] },
      { type: 'card', value: fresh[2], owner: 999_999 },
      { type: 'nope' },
    ];
    const a = await attempt(rows);
    expect(a).toMatchObject({
      rows: 7,
      invalid: 4,
      duplicates: 1,
      duplicate_lines: [3],
      errors_total: 4,
      rejected_lines: [
        [2, 2],
        [5, 7],
      ],
    });
    expect(a.errors.map((e) => [e.line, e.field, e.rule])).toEqual([
      [2, 'value', 'number_or_hex'],
      [5, 'value', 'duplicate_in_file'],
      [6, 'owner', 'invalid_related_entity'],
      [7, 'type', 'invalid_value'],
    ]);
    expect(await go(a.filepath, 'stop')).toMatchObject({ committed: false, created: 0 });
    expect(await count(fresh)).toBe(0);
    expect(await go(a.filepath, 'skip')).toMatchObject({
      committed: true,
      created: 2,
      updated: 0,
      skipped: 1,
    });
    expect(await count(fresh)).toBe(2);
    expect((await cmd('identifier.get').run({ api }, { id: existing.id })).name).toBe('Old');
    expect((await failure(go(a.filepath, 'skip'))).status).toBe(409);
  });

  it('skips a card made between the attempt and the continue, and puts the rest in', async () => {
    const values = [digits(), digits(), digits()];
    const a = await attempt(values.map((value, i) => ({ type: 'card', value, name: `Row ${i}` })));
    expect(a).toMatchObject({ rows: 3, invalid: 0, duplicates: 0 });
    const meanwhile = (await card(values[1]!, { name: 'Made meanwhile' })).data;
    expect(await go(a.filepath, 'skip')).toMatchObject({ committed: true, created: 2, updated: 0 });
    expect(await count(values)).toBe(3);
    expect((await cmd('identifier.get').run({ api }, { id: meanwhile.id })).name).toBe('Made meanwhile');
  });

  it('an attempt left for a day goes, with its staged rows, when the next attempt starts', async () => {
    const db = ts.server.context.db;
    const old = await attempt([
      { type: 'card', value: digits() },
      { type: 'card', value: digits() },
    ]);
    await sql`update identifier_imports set created_at = now() - interval '25 hours' where id = ${old.filepath}`.execute(
      db,
    );
    const staged = async (id: string) =>
      (
        await sql<{
          n: number;
        }>`select count(*)::int as n from identifier_import_rows where import_id = ${id}`.execute(db)
      ).rows[0]!.n;
    expect(await staged(old.filepath)).toBe(2);
    const next = await attempt([{ type: 'card', value: digits() }]);
    expect(await staged(old.filepath)).toBe(0);
    expect(await staged(next.filepath)).toBe(1);
    expect((await failure(go(old.filepath, 'skip'))).status).toBe(404);
  });

  it('names every rejected line beyond the first 1,000 problems it details', async () => {
    // 1,200 bad rows around a good one: lines 1-600 bad, 601 good, 602-1201 bad
    const rows = [
      ...Array.from({ length: 600 }, () => ({ type: 'card', value: 'zz' })),
      { type: 'card', value: digits() },
      ...Array.from({ length: 600 }, () => ({ type: 'card', value: 'zz' })),
    ];
    const a = await attempt(rows);
    expect(a).toMatchObject({ rows: 1201, invalid: 1200, errors_total: 1200 });
    expect(a.errors).toHaveLength(1000);
    expect(a.rejected_lines).toEqual([
      [1, 600],
      [602, 1201],
    ]);
  });

  it('is refused without identifiers.import, and continues only the caller own attempt', async () => {
    const a = await attempt([{ type: 'qr' }]);
    const outsider = await (
      await userWith(ts, api, { permissions: ['identifiers.create'], domains: [root] })
    ).client();
    const refused = await fetch(`${ts.url}/api/v0/identifiers/import/attempt`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokenOf(outsider)}`, 'content-type': 'application/x-ndjson' },
      body: '{"type":"qr"}',
    });
    expect(refused.status).toBe(403);
    const other = await (
      await userWith(ts, api, { permissions: ['identifiers.import'], domains: [root] })
    ).client();
    const e = await failure(
      cmd('identifier.import_continue').run({ api: other }, { filepath: a.filepath, action: 'skip' }),
    );
    expect(e.status).toBe(404);
  });

  it('overwrites duplicates with the rows when told to', async () => {
    const existing = (await card(digits(), { name: 'Old' })).data;
    const a = await attempt([{ type: 'card', value: existing.value, name: 'New', owner }]);
    expect(await go(a.filepath, 'overwrite')).toMatchObject({ committed: true, created: 0, updated: 1 });
    expect(await cmd('identifier.get').run({ api }, { id: existing.id })).toMatchObject({
      name: 'New',
      owner,
    });
  });
});
