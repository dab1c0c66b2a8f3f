/**
 * Streamed import (user.import_stream): the rows as one NDJSON body, checked in batches and staged through
 * the generic stager (COPY on PostgreSQL, INSERT … SELECT on PGlite), with the same checks and the same
 * report as batches. Runs on PGlite, and on PostgreSQL when DATABASE_URL is set.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { getCommand, ImportReport } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin, group, raw, rootGroup, secondProject, tokenOf, uid, userWith } from '../support/fixtures';

let ts: TestServer;
let api: ApiClient;
let groupId: number;

async function stream(id: string, body: string | ReadableStream<Uint8Array>, query = '', as = api) {
  const res = await fetch(`${ts.url}/api/v0/users/import/${id}/stream${query}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tokenOf(as)}`, 'content-type': 'application/x-ndjson' },
    body,
    duplex: 'half',
  } as RequestInit);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return { status: res.status, body: (await res.json()) as any };
}

const ndjson = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

beforeAll(async () => {
  ts = await startTestServer();
  api = await admin(ts);
  groupId = await group(api, `Stream ${uid()}`, await rootGroup(api));
  await getCommand('role.create').run({ api }, { name: 'Stream resident', permissions: ['users.view'] });
});
afterAll(async () => {
  await ts?.close();
});

describe('user.import_stream', () => {
  it('checks rows across batches of the stream, finds duplicates between them, and commits the valid ones', async () => {
    const tag = uid();
    const rows = Array.from({ length: 25 }, (_, i) => ({
      line: i + 2,
      login: `s${i}.${tag}`,
      name: `Streamed ${i}`,
      role: 'Stream resident',
      domains: String(groupId),
    }));
    // line 20 repeats the login of line 3 (another batch at batch=4); line 11 names no group that exists
    rows[18]!.login = rows[1]!.login;
    rows[9]!.domains = 'No such group';
    const { id } = await getCommand('user.import_start').run({ api }, { file_name: 'stream.ndjson' });
    // the body in small pieces that split lines: the server reassembles them
    const text = ndjson(rows);
    const bytes = new TextEncoder().encode(text);
    let at = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (at >= bytes.length) return c.close();
        c.enqueue(bytes.slice(at, at + 37));
        at += 37;
      },
    });
    const reply = await stream(id, body, '?batch=4');
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ id, rows: 25, valid: 23, invalid: 2 });
    expect(reply.body.errors).toEqual([
      {
        line: 11,
        field: 'domains',
        key: 'invalid_related_entity',
        params: { entity: 'domains', values: ['No such group'] },
      },
      { line: 20, field: 'login', rule: 'duplicate_in_file', params: { line: 3 } },
    ]);
    const report = ImportReport.parse(
      await getCommand('user.import_commit').run({ api }, { id, continue_on_error: true }),
    );
    expect(report).toMatchObject({ committed: true, rows: 25, valid: 23, inserted: 23 });
    expect(report.rejected_lines).toEqual([
      [11, 11],
      [20, 20],
    ]);
    const found = await getCommand('user.list').run({ api }, { search: tag, limit: 100 });
    expect(found.data.map((u: { login?: string }) => u.login).sort()).toHaveLength(23);
  });

  it('refuses a JSON body (415), a line that is not JSON and lines that do not grow (422), keeping what was staged', async () => {
    const { id } = await getCommand('user.import_start').run({ api }, { file_name: 'bad.ndjson' });
    const json = await raw(ts, api, 'POST', `/users/import/${id}/stream`, { body: {} });
    expect(json.status).toBe(415);
    const tag = uid();
    const ok = { line: 2, login: `a.${tag}`, name: 'A', role: 'Stream resident', domains: String(groupId) };
    expect((await stream(id, ndjson([ok]))).body).toMatchObject({ rows: 1, valid: 1 });
    const notJson = await stream(id, '{"line": 3, "login"\n');
    expect(notJson.status).toBe(422);
    expect(notJson.body.error_code).toBe('check_fields_data');
    // line 2 is staged already: sending it again is refused, not staged twice
    const again = await stream(id, ndjson([ok]));
    expect(again.status).toBe(422);
    expect(again.body.data.fields[0]).toMatchObject({ rule: 'duplicate_in_file', params: { line: 2 } });
    const report = ImportReport.parse(
      await getCommand('user.import_commit').run({ api }, { id, dry_run: true }),
    );
    expect(report).toMatchObject({ rows: 1, valid: 1, invalid: 0 });
  });

  it('holds the gate and the owner: refused without users.create, and for an import of another project', async () => {
    const { id } = await getCommand('user.import_start').run({ api }, { file_name: 'gate.ndjson' });
    const line = ndjson([
      { line: 2, login: `g.${uid()}`, name: 'Gate', role: 'Stream resident', domains: String(groupId) },
    ]);
    const viewer = await userWith(ts, api, { permissions: ['users.view'], domains: [groupId] });
    const refused = await stream(id, line, '', await viewer.client());
    expect(refused.status).toBe(403);
    expect(refused.body.message).toBe('method_prohibited');
    const other = await secondProject(ts);
    const theirs = await getCommand('user.import_start').run(
      { api: other.api },
      { file_name: 'theirs.ndjson' },
    );
    const foreign = await stream(theirs.id, line);
    expect(foreign.status).toBe(404);
    // nothing was staged by either refusal: the admin's own import still takes the line as its first
    expect((await stream(id, line)).body).toMatchObject({ id, rows: 1, valid: 1 });
  });

  it('refuses to commit an import whose staged rows were lost (the staging table is unlogged: a crash empties it)', async () => {
    const tag = uid();
    const rows = [2, 3, 4].map((line) => ({
      line,
      login: `lost${line}.${tag}`,
      name: `Lost ${line}`,
      role: 'Stream resident',
      domains: String(groupId),
    }));
    const { id } = await getCommand('user.import_start').run({ api }, { file_name: 'lost.ndjson' });
    expect((await stream(id, ndjson(rows))).body).toMatchObject({ rows: 3, valid: 3 });
    // what a crash does to an unlogged table: its rows are gone, the import's counts stay
    await sql`delete from user_import_rows where import_id = ${id} and line > 2`.execute(
      ts.server.context.db,
    );
    const commit = await raw(ts, api, 'POST', `/users/import/${id}/commit`, {
      body: { continue_on_error: true },
    });
    expect(commit.status).toBe(409);
    expect(commit.body).toMatchObject({ error_code: 'cant_perform_action', data: { reason: 'import_lost' } });
    const found = await getCommand('user.list').run({ api }, { search: tag, limit: 100 });
    expect(found.data).toHaveLength(0);
  });
});

/**
 * The one-request import (`commit` on the stream): the valid rows go in as the stream is checked, in one
 * transaction the request holds (PostgreSQL), or staged and then committed in the same request (PGlite).
 */
describe('user.import_stream with commit', () => {
  /** A file of 12 rows: line 5 repeats line 3's login, line 8 names no group, line 11 no valid e-mail. */
  const file = (tag: string) => {
    const rows: Record<string, unknown>[] = Array.from({ length: 12 }, (_, i) => ({
      line: i + 2,
      login: `c${i}.${tag}`,
      name: `Committed ${i}`,
      email: `c${i}.${tag}@example.test`,
      role: 'Stream resident',
      domains: String(groupId),
    }));
    rows[3]!.login = rows[1]!.login;
    rows[6]!.domains = 'No such group';
    rows[9]!.email = 'not-an-email';
    // line 13 repeats line 2's e-mail in another case
    rows[11]!.email = `C0.${tag}@example.test`;
    return rows;
  };
  const logins = async (tag: string) =>
    (await getCommand('user.list').run({ api }, { search: tag, limit: 100 })).data
      .map((u: { login?: string }) => u.login)
      .sort();
  const oneRequest = async (rows: object[], commit: object, query = '?batch=3') => {
    const { id } = await getCommand('user.import_start').run({ api }, { file_name: 'one.ndjson' });
    const reply = await stream(
      id,
      ndjson(rows),
      `${query}&commit=${encodeURIComponent(JSON.stringify(commit))}`,
    );
    return { id, ...reply };
  };
  const withoutId = (r: ImportReport) => ({ ...r, id: undefined });

  it('with continue_on_error commits exactly the valid rows, and reports as the stream and commit do', async () => {
    const tag = uid();
    const one = await oneRequest(file(tag), { continue_on_error: true });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: one.id, rows: 12, valid: 8, invalid: 4 });
    expect(one.body.errors).toEqual([
      { line: 5, field: 'login', rule: 'duplicate_in_file', params: { line: 3 } },
      {
        line: 8,
        field: 'domains',
        key: 'invalid_related_entity',
        params: { entity: 'domains', values: ['No such group'] },
      },
      { line: 11, field: 'email', rule: 'email' },
      { line: 13, field: 'email', rule: 'duplicate_in_file', params: { line: 2 } },
    ]);
    const report = ImportReport.parse(one.body.report);
    expect(report).toMatchObject({
      committed: true,
      reason: null,
      rows: 12,
      valid: 8,
      invalid: 4,
      inserted: 8,
      inserted_lines: 'all_valid',
      rejected_lines: [
        [5, 5],
        [8, 8],
        [11, 11],
        [13, 13],
      ],
    });
    const expected = file(tag)
      .filter((r) => ![5, 8, 11, 13].includes(r.line as number))
      .map((r) => r.login)
      .sort();
    expect(await logins(tag)).toEqual(expected);
    // the import is committed: its commit answers the same report, a stream into it is refused
    expect(
      withoutId(ImportReport.parse(await getCommand('user.import_commit').run({ api }, { id: one.id }))),
    ).toEqual(withoutId(report));
    expect((await stream(one.id, ndjson(file(uid())))).status).toBe(409);

    // the same file (other logins) through the stream and then the commit: the same report
    const tag2 = uid();
    const { id } = await getCommand('user.import_start').run({ api }, { file_name: 'two.ndjson' });
    const streamed = (await stream(id, ndjson(file(tag2)), '?batch=3')).body;
    const { report: _report, ...progress } = one.body;
    expect({ ...streamed, id: undefined }).toEqual({ ...progress, id: undefined });
    const twoStep = ImportReport.parse(
      await getCommand('user.import_commit').run({ api }, { id, continue_on_error: true }),
    );
    expect(withoutId(twoStep)).toEqual(withoutId(report));
    // the audit entry, as the commit writes it
    const audited = await sql<{ n: number }>`select count(*)::int as n from audit_events
      where entity = 'user' and action = 'import' and entity_id = ${one.id}`.execute(ts.server.context.db);
    expect(audited.rows[0]!.n).toBe(1);
  });

  it('without continue_on_error, and on a dry run, commits nothing; the reports say why, as the commit does', async () => {
    const tag = uid();
    const refused = await oneRequest(file(tag), {});
    expect(refused.status).toBe(200);
    expect(ImportReport.parse(refused.body.report)).toMatchObject({
      committed: false,
      reason: 'invalid_rows',
      rows: 12,
      valid: 8,
      invalid: 4,
      inserted: 0,
      would_insert: 0,
      inserted_lines: 'none',
    });
    expect(await logins(tag)).toEqual([]);
    const dry = await oneRequest(file(tag), { dry_run: true, continue_on_error: true });
    expect(ImportReport.parse(dry.body.report)).toMatchObject({
      committed: false,
      reason: 'dry_run',
      valid: 8,
      would_insert: 8,
      inserted: 0,
    });
    const clean = file(tag).filter((r) => ![5, 8, 11, 13].includes(r.line as number));
    const cleanDry = await oneRequest(clean, { dry_run: true });
    expect(ImportReport.parse(cleanDry.body.report)).toMatchObject({
      committed: false,
      reason: 'dry_run',
      rows: 8,
      invalid: 0,
      would_insert: 8,
    });
    expect(await logins(tag)).toEqual([]);
    // a dry run leaves the import open with its rows: committed by the two-step path, it goes in whole
    const later = ImportReport.parse(
      await getCommand('user.import_commit').run({ api }, { id: cleanDry.id }),
    );
    expect(later).toMatchObject({ committed: true, inserted: 8 });
    expect(await logins(tag)).toHaveLength(8);
  });

  it('stores every value as the file gives it: quotes, backslashes, braces, commas, "NULL", other scripts', async () => {
    const tag = uid();
    const awkward = [
      {
        name: 'Quote " and \\ backslash',
        description: '{braces}, commas, "quoted"',
        address: 'Flat "9", 1\\2',
      },
      { name: 'NULL', description: 'NULL', address: '\\N' },
      { name: 'Анна Ёлкина 🚪', description: '\\"both\\"', address: '' },
      { name: '{"a":1}', description: "it's", address: '{1,2}' },
    ];
    const rows = awkward.map((a, i) => ({
      line: i + 2,
      login: `awk${i}.${tag}`,
      email: i === 1 ? '' : `awk${i}.${tag}@example.test`,
      role: 'Stream resident',
      domains: String(groupId),
      ...a,
    }));
    const one = await oneRequest(rows, { continue_on_error: true }, '?batch=3');
    expect(one.status).toBe(200);
    expect(one.body.errors).toEqual([]);
    expect(ImportReport.parse(one.body.report)).toMatchObject({ committed: true, inserted: 4, invalid: 0 });
    const got = (await getCommand('user.list').run({ api }, { search: `awk`, limit: 100 })).data.filter(
      (u: { login?: string }) => u.login?.endsWith(tag),
    );
    expect(
      got
        .map((u) => ({
          login: u.login,
          email: u.email,
          name: u.name,
          description: u.description,
          address: u.profile.address,
          domains: u.domains.map((d) => d.id),
        }))
        .sort((a, b) => a.login!.localeCompare(b.login!)),
    ).toEqual(
      rows.map((r, i) => ({
        login: r.login,
        email: i === 1 ? null : r.email,
        name: r.name,
        description: r.description,
        address: r.address,
        domains: [groupId],
      })),
    );
  });

  it('a stream that fails after batches went in (a line that is not JSON) leaves nothing of the file', async () => {
    const tag = uid();
    const rows = file(tag).filter((r) => ![5, 8, 11, 13].includes(r.line as number));
    const { id } = await getCommand('user.import_start').run({ api }, { file_name: 'broken.ndjson' });
    const reply = await stream(
      id,
      `${ndjson(rows)}{"line": 99, "login"\n`,
      `?batch=2&commit=${encodeURIComponent('{"continue_on_error":true}')}`,
    );
    expect(reply.status).toBe(422);
    expect(reply.body.error_code).toBe('check_fields_data');
    expect(await logins(tag)).toEqual([]);
  });

  it('refuses an import that holds rows already, and a commit option that is not one', async () => {
    const tag = uid();
    const { id } = await getCommand('user.import_start').run({ api }, { file_name: 'twice.ndjson' });
    const rows = file(tag).slice(0, 2);
    expect((await stream(id, ndjson(rows))).status).toBe(200);
    const again = await stream(
      id,
      ndjson(file(tag).slice(2, 4)),
      `?commit=${encodeURIComponent('{"continue_on_error":true}')}`,
    );
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({
      error_code: 'cant_perform_action',
      data: { reason: 'import_not_empty' },
    });
    for (const bad of ['yes', '{"continue_on_error":"maybe"}', '{"commit_now":true}']) {
      const r = await stream(id, ndjson(rows), `?commit=${encodeURIComponent(bad)}`);
      expect(r.status).toBe(422);
      expect(r.body.error_code).toBe('check_fields_data');
    }
    expect(await logins(tag)).toEqual([]);
  });
});
