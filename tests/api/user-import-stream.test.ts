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
