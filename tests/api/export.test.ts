/**
 * Exports that stream (issue 14 item 4): `<noun>.export` answers every row its list would show — the same
 * filters, search, sort and view scope — in one streamed reply (NDJSON, CSV or XLSX), read by a cursor on
 * PostgreSQL and by keyset pages on PGlite. A client that goes away mid-export leaves no connection behind,
 * and on PGlite other requests are served while an export is under way.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { parse as parseCsv } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import { getCommand, recordColumns, User, type ListExportQuery } from '@lintel/commands';
import type { ApiClient, Filter } from '@lintel/core';
import { EXPORT_APPLICATION, keysetReader, planList, userStore } from '@lintel/server';
import { startTestServer, type TestServer } from '../support/server';
import { admin, group, rootGroup, raw, tokenOf, userWith } from '../support/fixtures';

const SCALE = 2500;

let ts: TestServer;
let api: ApiClient;
let project: number;
const w = {} as { A: number; A1: number; B: number; inA1: number[]; inB: number[] };

/** Every row of the list, page after page (1,000 a page), as `lintel <nouns> list --all` reads them. */
async function listAll(client: ApiClient, query: Omit<ListExportQuery, 'format'>): Promise<User[]> {
  const rows: User[] = [];
  for (let page = 1; ; page++) {
    const reply = await getCommand('user.list').run({ api: client }, { ...query, page, limit: 1000 });
    rows.push(...reply.data);
    if (reply.data.length < 1000) return rows;
  }
}

const exportAll = (client: ApiClient, query: ListExportQuery) =>
  getCommand('user.export').run({ api: client }, query);

beforeAll(async () => {
  ts = await startTestServer();
  api = await admin(ts);
  project = (
    await sql<{ project_id: number }>`select u.project_id from users u join accounts a on a.id = u.account_id
      where a.login = ${ts.adminLogin} order by u.id limit 1`.execute(ts.server.context.db)
  ).rows[0]!.project_id;
  const root = await rootGroup(api);
  w.A = await group(api, 'Export A', root);
  w.A1 = await group(api, 'Export A1', w.A);
  w.B = await group(api, 'Export B', root);
  await getCommand('seed.scale').run({ api }, { users: SCALE });
  // a third of the people without an e-mail: sorting by it meets nulls at batch boundaries
  await sql`update accounts set email = null where login like 'scale-%' and substr(login, 7)::int % 3 = 0`.execute(
    ts.server.context.db,
  );
  const role = (await getCommand('role.list').run({ api }, { sort: 'id', limit: 1 })).data[0]!.id;
  const make = async (domain: number, n: number) => {
    const ids: number[] = [];
    for (let i = 0; i < n; i++)
      ids.push(
        (
          await getCommand('user.create').run(
            { api },
            {
              login: `exp-${domain}-${i}`,
              name: `Export person ${domain} ${i}`,
              role,
              domains: [domain],
              send_registration_link: false,
            },
          )
        ).data.id,
      );
    return ids;
  };
  w.inA1 = await make(w.A1, 4);
  w.inB = await make(w.B, 3);
}, 180_000);
afterAll(async () => {
  await ts?.close();
});

describe('export: the list’s rows, streamed', () => {
  const cases: Array<[string, Omit<ListExportQuery, 'format'>]> = [
    ['every row, by id', {}],
    [
      'a filter, natural name order descending',
      { filters: [{ field: 'name', rule: 'contains', value: '1' }], sort: '-name' },
    ],
    ['search and e-mail ascending (nulls last)', { search: 'a', sort: 'email' }],
    [
      'match any, e-mail descending (nulls first)',
      {
        filters: [
          { field: 'name', rule: 'contains', value: '7' },
          { field: 'login', rule: 'begins_with', value: 'exp-' },
        ] as Filter[],
        match: 'any',
        sort: '-email',
      },
    ],
    ['ties broken by id: role', { sort: 'role' }],
  ];

  it.each(cases)('%s: exactly the rows of list --all, in its order', async (_name, query) => {
    const listed = await listAll(api, query);
    const exported = await exportAll(api, query);
    expect(listed.length).toBeGreaterThan(query.filters || query.search ? 100 : SCALE);
    expect(exported).toEqual(listed);
  });

  it('users: the JSON lines the database writes are the records the list builds', async () => {
    const db = ts.server.context.db;
    // text to escape, a profile with a key of its own and a value over a default, markers, a creator
    const odd = w.inB[2]!;
    const marker = (
      await sql<{ id: number }>`insert into markers (project_id, name, color)
        values (${project}, ${'Marker "ü" \\ ☃'}, '#112233') returning id`.execute(db)
    ).rows[0]!.id;
    await sql`insert into user_markers (user_id, marker_id) values (${odd}, ${marker})`.execute(db);
    // a second marker and a second group, made after and named before: the lists are ordered by name
    const first = (
      await sql<{ id: number }>`insert into markers (project_id, name, color)
        values (${project}, 'A marker', '#445566') returning id`.execute(db)
    ).rows[0]!.id;
    await sql`insert into user_markers (user_id, marker_id) values (${odd}, ${first})`.execute(db);
    const second = await group(api, 'Export 0, a second group', await rootGroup(api));
    await sql`insert into user_domains (user_id, domain_id) values (${odd}, ${second})`.execute(db);
    await sql`update users set description = ${'a "quote", back\\slash,\nnew line\t\u0001 ☃ 𝄞'},
      profile = ${JSON.stringify({ phone: '+4930123456', own: { a: [1, null] } })}::jsonb,
      created_at = '2026-11-28 12:34:56.789999+03' where id = ${odd}`.execute(db);
    const ids = (
      await sql<{ id: number }>`select id from users where project_id = ${project} order by id desc`.execute(
        db,
      )
    ).rows.map((r) => r.id);
    // one text of lines, each ended by a line break, in the order asked; an id that is not there has none
    const text = await userStore.loadLines!(db, [...ids.slice(0, 3), 2_000_000_000, ...ids.slice(3)]);
    expect(text.endsWith('\n')).toBe(true);
    const lines = text.slice(0, -1).split('\n');
    expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual(await userStore.load(db, ids));
    expect(await userStore.loadLines!(db, [])).toBe('');
    expect(await userStore.loadLines!(db, [2_000_000_000])).toBe('');
    const [mine] = await userStore.load(db, [odd]);
    expect(mine!.markers).toEqual([
      { id: first, name: 'A marker', color: '#445566' },
      { id: marker, name: 'Marker "ü" \\ ☃', color: '#112233' },
    ]);
    expect(mine!.domains).toHaveLength(2);
    expect(mine!.created_at).toBe('2026-11-28T09:34:56.789Z');
  });

  it('keyset pages (the PGlite path, on either database) walk the list’s order across nulls and ties', async () => {
    for (const [, query] of cases) {
      const listed = (await listAll(api, query)).map((u) => u.id);
      const plan = planList(
        userStore,
        { match: 'all', ...query, filters: query.filters as Filter[] | undefined },
        sql<boolean>`t.project_id = ${project}`,
      );
      const reader = keysetReader(
        ts.server.context.db,
        { from: plan.pageFrom, where: plan.where, keys: plan.keys, desc: plan.desc },
        97,
      );
      const ids: number[] = [];
      for (let batch = await reader.next(); batch.length; batch = await reader.next()) ids.push(...batch);
      expect(ids).toEqual(listed);
    }
  });

  it('a narrower view scope exports only its own rows, as its list shows them', async () => {
    const viewer = await userWith(ts, api, { permissions: ['users.view'], domains: [w.A] });
    const client = await viewer.client();
    const query = { filters: [{ field: 'login', rule: 'begins_with', value: 'exp-' }] as Filter[] };
    const exported = await exportAll(client, query);
    expect(exported.map((u) => u.id).sort((a, b) => a - b)).toEqual([...w.inA1].sort((a, b) => a - b));
    expect(exported).toEqual(await listAll(client, query));
    // without a filter: nothing of B, none of the scale group's, himself included as the list has him
    const all = await exportAll(client, {});
    expect(all.map((u) => u.id)).not.toEqual(expect.arrayContaining([w.inB[0]]));
    expect(all).toEqual(await listAll(client, {}));
    // without the view gate: refused before anything is read
    const outsider = await userWith(ts, api, { permissions: ['markers.view'], domains: [w.A] });
    const refused = await raw(ts, await outsider.client(), 'GET', '/users/export');
    expect(refused.status).toBe(403);
    expect(refused.body.message).toBe('method_prohibited');
  });

  it('CSV: a header of the record’s fields and one line per row; bad input is a 422 before any row', async () => {
    const query = { filters: [{ field: 'login', rule: 'begins_with', value: 'exp-' }], format: 'csv' };
    const res = await fetch(
      `${ts.url}/api/v0/users/export?${new URLSearchParams({
        filters: JSON.stringify(query.filters),
        format: 'csv',
      })}`,
      { headers: { authorization: `Bearer ${tokenOf(api)}` } },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    const rows = parseCsv(await res.text()) as string[][];
    expect(rows[0]).toEqual(recordColumns(User));
    const listed = await listAll(api, { filters: query.filters as Filter[] });
    expect(rows.slice(1).map((r) => Number(r[0]))).toEqual(listed.map((u) => u.id));
    const login = rows[0]!.indexOf('login');
    expect(rows.slice(1).map((r) => r[login])).toEqual(listed.map((u) => u.login));
    // a reference is its id, a boolean its word
    const role = rows[0]!.indexOf('role');
    expect(rows[1]![role]).toBe(String(listed[0]!.role.id));
    expect(['true', 'false']).toContain(rows[1]![rows[0]!.indexOf('is_activated')]);

    const bad = await raw(ts, api, 'GET', '/users/export', {
      query: { filters: [{ field: 'colour', rule: 'equals', value: 'red' }] },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.message).toBe('check_fields_data');
    const badSort = await raw(ts, api, 'GET', '/users/export', { query: { sort: 'password' } });
    expect(badSort.status).toBe(422);
  });

  it('XLSX: every export answers a workbook with the CSV’s columns and the list’s rows', async () => {
    const filters = [{ field: 'login', rule: 'begins_with', value: 'exp-' }];
    const download = (path: string, query: Record<string, string>) =>
      fetch(`${ts.url}/api/v0${path}?${new URLSearchParams({ ...query, format: 'xlsx' })}`, {
        headers: { authorization: `Bearer ${tokenOf(api)}` },
      });
    const sheetOf = async (res: Response) => {
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(
        'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      );
      const book = new ExcelJS.Workbook();
      await book.xlsx.load((await res.arrayBuffer()) as unknown as Parameters<typeof book.xlsx.load>[0]);
      const rows: unknown[][] = [];
      book.worksheets[0]!.eachRow((row) => rows.push((row.values as unknown[]).slice(1)));
      return rows;
    };
    // a family: users, filtered as the list
    const users = await sheetOf(await download('/users/export', { filters: JSON.stringify(filters) }));
    expect(users[0]).toEqual(recordColumns(User));
    const listed = await listAll(api, { filters: filters as Filter[] });
    expect(users.slice(1).map((r) => Number(r[0]))).toEqual(listed.map((u) => u.id));
    expect(users.slice(1).map((r) => r[users[0]!.indexOf('login')])).toEqual(listed.map((u) => u.login));
    // a journal: the audit log, newest first like its list
    const events = await sheetOf(await download('/audit-events/export', { sort: '-created_at' }));
    const firstPage = await getCommand('audit_event.list').run({ api }, { sort: '-created_at', limit: 50 });
    expect(events.slice(1, 51).map((r) => Number(r[0]))).toEqual(firstPage.data.map((e) => e.id));
  });

  it('every family and the audit log export like their lists', async () => {
    for (const noun of ['role', 'group', 'marker', 'domain_type'] as const) {
      const exported = await getCommand(`${noun}.export`).run({ api }, { sort: '-id' });
      const listed = await getCommand(`${noun}.list`).run({ api }, { sort: '-id', limit: 1000 });
      expect(exported, noun).toEqual(listed.data);
    }
    const events = await getCommand('audit_event.export').run({ api }, { sort: 'created_at' });
    const firstPage = await getCommand('audit_event.list').run({ api }, { sort: 'created_at', limit: 1000 });
    expect(events.slice(0, firstPage.data.length)).toEqual(firstPage.data);
  });
});

describe('export: connections', () => {
  /**
   * Audit events enough that the reply (about 95 MB) cannot sit whole in the sockets' buffers (at most 4 MB
   * sent and 32 MB received on this kernel's loopback): a client that stops reading stops the export.
   */
  const EVENTS = 30_000;
  beforeAll(async () => {
    await sql`insert into audit_events (project_id, user_id, action, entity, entity_id, data, created_at)
      select ${project}, null, 'export.bulk', 'export', i::text,
        jsonb_build_object('n', i, 'padding', repeat('x', 3000)), now() - (i || ' seconds')::interval
      from generate_series(1, ${EVENTS}) i`.execute(ts.server.context.db);
  }, 120_000);

  const url = () =>
    `${ts.url}/api/v0/audit-events/export?${new URLSearchParams({
      filters: JSON.stringify([{ field: 'action', rule: 'equals', value: 'export.bulk' }]),
    })}`;

  /** The export's own connections still open on PostgreSQL (on PGlite there are none). */
  const exportConnections = async () =>
    ts.server.context.database.kind === 'postgres'
      ? (
          await sql<{
            n: number;
          }>`select count(*)::int as n from pg_stat_activity where application_name = ${EXPORT_APPLICATION}`.execute(
            ts.server.context.db,
          )
        ).rows[0]!.n
      : 0;

  it('serves other requests while an export waits for its client, then finishes it whole', async () => {
    const res = await fetch(url(), { headers: { authorization: `Bearer ${tokenOf(api)}` } });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = new TextDecoder().decode((await reader.read()).value);
    // the client reads no more for now: the export waits, and holds nothing other requests need
    for (let i = 0; i < 5; i++) {
      // on PGlite a request that cannot have the one connection within its wait is refused (503)
      const listed = await getCommand('user.list').run({ api }, { limit: 5 });
      expect(listed.data.length).toBe(5);
    }
    const decoder = new TextDecoder();
    let lines = 0;
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) break;
      text += decoder.decode(chunk.value, { stream: true });
      const cut = text.lastIndexOf('\n');
      lines += text.slice(0, cut + 1).split('\n').length - 1;
      text = text.slice(cut + 1);
    }
    expect(text).toBe('');
    expect(lines).toBe(EVENTS);
    await expect.poll(exportConnections, { timeout: 10_000 }).toBe(0);
  }, 120_000);

  it('a client that goes away mid-export leaves no connection behind', async () => {
    const before = await exportConnections();
    expect(before).toBe(0);
    const abort = new AbortController();
    const res = await fetch(url(), {
      headers: { authorization: `Bearer ${tokenOf(api)}` },
      signal: abort.signal,
    });
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(first.value!.length).toBeGreaterThan(0);
    if (ts.server.context.database.kind === 'postgres') expect(await exportConnections()).toBe(1);
    abort.abort();
    await reader.read().catch(() => undefined);
    // the server stops reading and gives its connection back
    await expect.poll(exportConnections, { timeout: 10_000 }).toBe(0);
    // on PGlite a connection still held would refuse this request (503) after its wait
    expect((await getCommand('user.list').run({ api }, { limit: 1 })).data.length).toBe(1);
    // and the pool serves a full export afterwards
    const roles = await getCommand('role.export').run({ api }, {});
    expect(roles.length).toBeGreaterThan(0);
  }, 120_000);
});
