/**
 * Bulk import of users (user.import_start / import_rows / import_commit / import_cancel): per-row problems
 * across batches, all or nothing, continue on error, dry runs that write nothing, and the importer's limits.
 * Runs on PGlite, and on PostgreSQL when DATABASE_URL is set.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import {
  getCommand,
  ImportProgress,
  ImportReport,
  type ImportRow,
  type ImportRowError,
} from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin, failure, group, rootGroup, signIn, uid, userWith } from '../support/fixtures';

let ts: TestServer;
let api: ApiClient;
const w = {} as {
  root: number;
  A: number;
  A1: number;
  B: number;
  lowRole: number;
  highRole: number;
  marker: number;
  markerName: string;
};

const start = (client = api) =>
  getCommand('user.import_start').run({ api: client }, { file_name: 'people.csv' });
const send = async (id: string, rows: ImportRow[], client = api) =>
  ImportProgress.parse(await getCommand('user.import_rows').run({ api: client }, { id, rows }));
const commit = async (
  id: string,
  opts: { continue_on_error?: boolean; dry_run?: boolean } = {},
  client = api,
) => ImportReport.parse(await getCommand('user.import_commit').run({ api: client }, { id, ...opts }));

/** A fingerprint of everything an import may write: the same before and after means nothing was written. */
async function checksum(): Promise<string> {
  const db = ts.server.context.db;
  const r = await sql<{ sum: string }>`select concat_ws('|',
      (select md5(coalesce(string_agg(t::text, ',' order by t.id), '')) from accounts t),
      (select md5(coalesce(string_agg(t::text, ',' order by t.id), '')) from users t),
      (select md5(coalesce(string_agg(t::text, ',' order by t.user_id, t.domain_id), '')) from user_domains t),
      (select md5(coalesce(string_agg(t::text, ',' order by t.user_id, t.marker_id), '')) from user_markers t),
      (select md5(coalesce(string_agg(t::text, ',' order by t.id), '')) from audit_events t where t.action <> 'permission_denied')) as sum`.execute(
    db,
  );
  return r.rows[0]!.sum;
}

const lines = (errors: ImportRowError[]) => [...new Set(errors.map((e) => e.line))].sort((a, b) => a - b);
const byLine = (errors: ImportRowError[], line: number) =>
  errors.filter((e) => e.line === line).map(({ line: _l, ...e }) => e);

beforeAll(async () => {
  ts = await startTestServer();
  api = await admin(ts);
  w.root = await rootGroup(api);
  w.A = await group(api, 'Import A', w.root, { logic_address: '7.1' });
  w.A1 = await group(api, 'Import A1', w.A);
  w.B = await group(api, 'Import B', w.root);
  // two groups of one name: naming it is ambiguous
  await group(api, 'Twin', w.A);
  await group(api, 'Twin', w.B);
  w.lowRole = (
    await getCommand('role.create').run({ api }, { name: 'Import resident', permissions: ['users.view'] })
  ).data.id;
  w.highRole = (
    await getCommand('role.create').run(
      { api },
      { name: 'Import boss', permissions: ['users.view', 'users.delete'] },
    )
  ).data.id;
  w.markerName = `VIP ${uid()}`;
  w.marker = (
    await getCommand('marker.create').run({ api }, { name: w.markerName, color: '#112233' })
  ).data.id;
});

afterAll(async () => {
  await ts?.close();
});

describe('user import: checking rows in batches', () => {
  const tag = uid();
  let id: string;
  let before: string;

  it('reports each bad row with field, rule or key and params, and counts across batches', async () => {
    before = await checksum();
    ({ id } = await start());
    const first = await send(id, [
      {
        line: 2,
        login: `ok1.${tag}`,
        name: 'Ok One',
        role: 'Import resident',
        domains: 'Import A',
        email: `ok1.${tag}@example.test`,
        phone: '+4912345678',
      },
      {
        line: 3,
        login: `ok2.${tag}`,
        name: 'Ok Two',
        role: String(w.lowRole),
        domains: `${w.A1};@7.1`,
        markers: w.markerName,
        is_group_admin: 'yes',
      },
      {
        line: 4,
        login: `ok3.${tag}`,
        name: 'Ok Three',
        role: w.lowRole,
        domains: [w.B],
        markers: [w.marker],
        description: 'from a file',
      },
      {
        line: 5,
        login: `bad-mail.${tag}`,
        name: 'Bad Mail',
        role: w.lowRole,
        domains: String(w.A),
        email: 'not-an-email',
      },
      { line: 6, login: `no-group.${tag}`, name: 'No Group', role: w.lowRole, domains: 'No such group' },
      { line: 7, login: ts.adminLogin, name: 'Taken', role: w.lowRole, domains: String(w.A) },
    ]);
    expect(first).toMatchObject({ id, rows: 6, valid: 3, invalid: 3 });
    expect(lines(first.errors)).toEqual([5, 6, 7]);
    expect(byLine(first.errors, 5)).toEqual([{ field: 'email', rule: 'email' }]);
    expect(byLine(first.errors, 6)).toEqual([
      {
        field: 'domains',
        key: 'invalid_related_entity',
        params: { entity: 'domains', values: ['No such group'] },
      },
    ]);
    expect(byLine(first.errors, 7)).toEqual([{ field: 'login', key: 'login_already_used' }]);

    const second = await send(id, [
      { line: 8, login: `OK1.${tag}`, name: 'Same login, other case', role: w.lowRole, domains: String(w.A) },
      {
        line: 9,
        login: `ok4.${tag}`,
        name: 'Ok Four',
        role: w.lowRole,
        domains: String(w.A),
        email: `OK1.${tag}@example.test`,
      },
      {
        line: 10,
        login: `ok5.${tag}`,
        name: 'Ok Five',
        role: 'No such role',
        domains: 'Twin',
        colour: 'red',
      },
      { line: 11, login: 'x', name: '', role: w.lowRole, domains: '', elevator_access_disabled: 'maybe' },
      {
        line: 12,
        login: `ok6.${tag}`,
        name: 'Ok Six',
        role: w.lowRole,
        domains: String(w.A),
        password: `Pw-${tag}-long`,
      },
    ]);
    expect(second).toMatchObject({ rows: 11, valid: 4, invalid: 7 });
    expect(byLine(second.errors, 8)).toEqual([
      { field: 'login', rule: 'duplicate_in_file', params: { line: 2 } },
    ]);
    expect(byLine(second.errors, 9)).toEqual([
      { field: 'email', rule: 'duplicate_in_file', params: { line: 2 } },
    ]);
    expect(byLine(second.errors, 10)).toEqual(
      expect.arrayContaining([
        { field: 'colour', rule: 'unknown_field' },
        {
          field: 'role',
          key: 'invalid_related_entity',
          params: { entity: 'roles', values: ['No such role'] },
        },
        { field: 'domains', rule: 'ambiguous_name', params: { value: 'Twin', count: 2 } },
      ]),
    );
    expect(byLine(second.errors, 11)).toEqual(
      expect.arrayContaining([
        { field: 'login', rule: 'min_length', params: { length: 3 } },
        { field: 'name', rule: 'required' },
        { field: 'domains', rule: 'min_items', params: { count: 1 } },
        { field: 'elevator_access_disabled', rule: 'invalid_type', params: { expected: 'boolean' } },
      ]),
    );
    expect(lines(second.errors)).toEqual([8, 9, 10, 11]);
  });

  it('a batch sent again replaces its lines instead of adding them', async () => {
    const again = await send(id, [
      {
        line: 12,
        login: `ok6.${tag}`,
        name: 'Ok Six',
        role: w.lowRole,
        domains: String(w.A),
        password: `Pw-${tag}-long`,
      },
    ]);
    expect(again).toMatchObject({ rows: 11, valid: 4, invalid: 7, errors: [] });
    const dup = await failure(
      send(id, [
        { line: 13, login: 'a1234' },
        { line: 13, login: 'b1234' },
      ]),
    );
    expect(dup.status).toBe(422);
  });

  it('without continue_on_error, one invalid row means nothing is inserted', async () => {
    const report = await commit(id);
    expect(report).toMatchObject({
      committed: false,
      reason: 'invalid_rows',
      rows: 11,
      valid: 4,
      invalid: 7,
      inserted: 0,
      would_insert: 0,
      inserted_lines: 'none',
    });
    expect(report.rejected_lines).toEqual([[5, 11]]);
    expect(report.errors_total).toBe(report.error_counts.reduce((n, c) => n + c.count, 0));
    expect(lines(report.errors)).toEqual([5, 6, 7, 8, 9, 10, 11]);
    expect(report.error_counts).toEqual(
      expect.arrayContaining([{ field: 'login', key: 'login_already_used', count: 1 }]),
    );
    expect(await checksum()).toBe(before);
  });

  it('a dry run reports what would change and writes nothing', async () => {
    const report = await commit(id, { dry_run: true, continue_on_error: true });
    expect(report).toMatchObject({
      dry_run: true,
      committed: false,
      reason: 'dry_run',
      valid: 4,
      invalid: 7,
      inserted: 0,
      would_insert: 4,
    });
    expect(await checksum()).toBe(before);
  });

  it('with continue_on_error, exactly the valid lines go in, with one audit event', async () => {
    const report = await commit(id, { continue_on_error: true });
    expect(report).toMatchObject({
      committed: true,
      reason: null,
      rows: 11,
      valid: 4,
      invalid: 7,
      inserted: 4,
      would_insert: 4,
      inserted_lines: 'all_valid',
      rejected_lines: [[5, 11]],
    });
    const found = await getCommand('user.list').run({ api }, { search: tag, limit: 100, sort: 'login' });
    expect(found.data.map((u) => u.login)).toEqual([`ok1.${tag}`, `ok2.${tag}`, `ok3.${tag}`, `ok6.${tag}`]);
    const [one, two, three, six] = found.data;
    expect(one).toMatchObject({
      name: 'Ok One',
      email: `ok1.${tag}@example.test`,
      role: { id: w.lowRole },
      domains: [{ id: w.A }],
      profile: { phone: '+4912345678', time_zone: '' },
      is_activated: false,
      is_invited: false,
    });
    expect(two!.domains.map((d) => d.id).sort()).toEqual([w.A, w.A1].sort());
    expect(two).toMatchObject({ markers: [{ id: w.marker }], is_group_admin: true });
    expect(three).toMatchObject({
      description: 'from a file',
      domains: [{ id: w.B }],
      markers: [{ id: w.marker }],
    });
    // a password in the file is set (hashed): the person can sign in
    expect(six).toMatchObject({ is_activated: true });
    await signIn(ts, `ok6.${tag}`, `Pw-${tag}-long`);

    const audit = await getCommand('audit_event.list').run(
      { api },
      { filters: [{ field: 'action', rule: 'equals', value: 'import' }] },
    );
    expect(audit.data).toHaveLength(1);
    expect(audit.data[0]).toMatchObject({ entity_id: id });

    // a repeated commit answers the same report; the import takes no more rows
    expect(await commit(id, { continue_on_error: true })).toEqual(report);
    expect((await failure(send(id, [{ line: 99, login: `late.${tag}` }]))).status).toBe(409);
    const staged = await sql<{
      n: number;
    }>`select count(*)::int as n from user_import_rows where import_id = ${id}`.execute(ts.server.context.db);
    expect(staged.rows[0]!.n).toBe(0);
  });
});

describe('user import: all or nothing', () => {
  it('a clean import goes in whole; a login taken after staging stops it at commit', async () => {
    const tag = uid();
    const { id } = await start();
    const rows = Array.from({ length: 250 }, (_, i) => ({
      line: i + 2,
      login: `bulk${i}.${tag}`,
      name: `Bulk ${i}`,
      role: 'Import resident',
      domains: 'Import A1',
    }));
    for (let i = 0; i < rows.length; i += 100) await send(id, rows.slice(i, i + 100));
    // someone takes line 50's login meanwhile
    await getCommand('user.create').run(
      { api },
      {
        login: `bulk48.${tag}`,
        name: 'Early bird',
        role: w.lowRole,
        domains: [w.A],
        send_registration_link: false,
        password: 'early-bird-pw',
      },
    );
    const before = await checksum();
    const refused = await commit(id);
    expect(refused).toMatchObject({
      committed: false,
      reason: 'invalid_rows',
      valid: 249,
      invalid: 1,
      rejected_lines: [[50, 50]],
      errors: [{ line: 50, field: 'login', key: 'login_already_used' }],
    });
    expect(await checksum()).toBe(before);
    const report = await commit(id, { continue_on_error: true });
    expect(report).toMatchObject({ committed: true, inserted: 249 });
    const inA1 = await getCommand('user.list').run(
      { api },
      {
        filters: [
          { field: 'domains', rule: 'has', value: w.A1 },
          { field: 'login', rule: 'begins_with', value: 'bulk' },
        ],
        limit: 1,
      },
    );
    expect(inA1.meta.total).toBe(249);
  });

  it('a group or marker deleted after staging is found at commit', async () => {
    const tag = uid();
    const doomed = await group(api, `Doomed ${tag}`, w.root);
    const marker = (
      await getCommand('marker.create').run({ api }, { name: `Doomed ${tag}`, color: '#010203' })
    ).data.id;
    const { id } = await start();
    const r = await send(id, [
      { line: 1, login: `keep.${tag}`, name: 'Keep', role: w.lowRole, domains: [w.A] },
      { line: 2, login: `lost.${tag}`, name: 'Lost group', role: w.lowRole, domains: [doomed] },
      {
        line: 3,
        login: `tag.${tag}`,
        name: 'Lost marker',
        role: w.lowRole,
        domains: [w.A],
        markers: [marker],
      },
    ]);
    expect(r).toMatchObject({ valid: 3, invalid: 0 });
    await getCommand('group.delete').run({ api }, { id: doomed });
    await getCommand('marker.delete').run({ api }, { id: marker });
    const report = await commit(id, { continue_on_error: true });
    expect(report).toMatchObject({ inserted: 1, invalid: 2, rejected_lines: [[2, 3]] });
    expect(report.errors).toEqual([
      { line: 2, field: 'domains', key: 'invalid_related_entity' },
      { line: 3, field: 'markers', key: 'invalid_related_entity' },
    ]);
  });

  it('an import with no invalid rows commits without continue_on_error', async () => {
    const tag = uid();
    const { id } = await start();
    await send(id, [{ line: 1, login: `solo.${tag}`, name: 'Solo', role: w.lowRole, domains: [w.A] }]);
    expect(await commit(id)).toMatchObject({
      committed: true,
      inserted: 1,
      invalid: 0,
      errors: [],
      rejected_lines: [],
    });
  });
});

describe('user import: the importer’s limits', () => {
  it('a limited importer may give only available roles within his rights, and only groups of his subtree', async () => {
    const importer = await userWith(ts, api, {
      permissions: ['users.create', 'users.view'],
      domains: [w.A],
      available: [w.lowRole, w.highRole],
    });
    const client = await importer.client();
    const tag = uid();
    const { id } = await start(client);
    const r = await send(
      id,
      [
        { line: 1, login: `lim1.${tag}`, name: 'Fine', role: w.lowRole, domains: 'Import A1' },
        { line: 2, login: `lim2.${tag}`, name: 'Too high', role: 'Import boss', domains: String(w.A) },
        {
          line: 3,
          login: `lim3.${tag}`,
          name: 'Not listed',
          role: importer.roleId + 1000,
          domains: String(w.A),
        },
        { line: 4, login: `lim4.${tag}`, name: 'Elsewhere', role: w.lowRole, domains: String(w.B) },
      ],
      client,
    );
    expect(byLine(r.errors, 2)).toEqual([
      {
        field: 'role',
        key: 'method_prohibited',
        params: { reason: 'grant_more_than_own', permissions: ['users.delete'] },
      },
    ]);
    expect(byLine(r.errors, 3)).toEqual([
      {
        field: 'role',
        key: 'invalid_related_entity',
        params: { entity: 'roles', values: [String(importer.roleId + 1000)] },
      },
    ]);
    expect(byLine(r.errors, 4)).toEqual([
      {
        field: 'domains',
        key: 'method_prohibited',
        params: { reason: 'domain_out_of_scope', domains: [w.B] },
      },
    ]);
    expect(lines(r.errors)).toEqual([2, 3, 4]);

    // a role the importer's role does not list
    const other = (await getCommand('role.create').run({ api }, { name: `Unlisted ${tag}`, permissions: [] }))
      .data.id;
    const r2 = await send(
      id,
      [{ line: 5, login: `lim5.${tag}`, name: 'Unlisted', role: other, domains: String(w.A) }],
      client,
    );
    expect(byLine(r2.errors, 5)).toEqual([
      { field: 'role', key: 'method_prohibited', params: { reason: 'role_not_available', role: other } },
    ]);

    // an import is its importer's own: anyone else (even the administrator) gets 404 on every verb, and
    // without users.create every verb is refused (this file is the permission matrix of the import commands)
    expect((await failure(send(id, [{ line: 9, login: 'zzz' }]))).status).toBe(404);
    expect(await failure(commit(id, { dry_run: true }))).toMatchObject({ status: 404 });
    expect(await failure(getCommand('user.import_cancel').run({ api }, { id }))).toMatchObject({
      status: 404,
    });
    const viewer = await (await userWith(ts, api, { permissions: ['users.view'], domains: [w.A] })).client();
    for (const call of [
      () => start(viewer),
      () => send(id, [{ line: 9, login: 'zzz' }], viewer),
      () => commit(id, {}, viewer),
      () => getCommand('user.import_cancel').run({ api: viewer }, { id }),
    ])
      expect(await failure(call())).toMatchObject({ status: 403, message: 'method_prohibited' });

    expect(await commit(id, { continue_on_error: true }, client)).toMatchObject({ inserted: 1, invalid: 4 });
  });

  it('cancel drops an import and its rows', async () => {
    const { id } = await start();
    await send(id, [{ line: 1, login: `gone.${uid()}`, name: 'Gone', role: w.lowRole, domains: [w.A] }]);
    await getCommand('user.import_cancel').run({ api }, { id });
    expect((await failure(commit(id))).status).toBe(404);
    const staged = await sql<{
      n: number;
    }>`select count(*)::int as n from user_import_rows where import_id = ${id}`.execute(ts.server.context.db);
    expect(staged.rows[0]!.n).toBe(0);
  });
});
