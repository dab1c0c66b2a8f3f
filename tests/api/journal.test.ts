/**
 * Journals (issue 14 item 2), through the audit log: keyset paging returns every row exactly once while
 * rows are being appended, both ways; `from` / `to` bound the time; the lists' filter language works
 * unchanged; the export reads every row of the filter in keyset batches; the retention job deletes old rows
 * in batches by the server's clock and keeps the newer ones.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { getCommand, type AuditEvent } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { ManualClock, auditEventStore, journalRows, pruneJournal, retentionKind } from '@lintel/server';
import { startTestServer, type TestServer } from '../support/server';
import { admin, raw } from '../support/fixtures';

const DAY = 24 * 3600 * 1000;
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
const clock = new ManualClock(Date.parse('2026-06-15T12:00:00Z'));
let ts: TestServer;
let api: ApiClient;
let project: number;
let adminId: number;
const T0 = Date.parse('2026-06-01T00:00:00Z');

const list = (args: Parameters<ReturnType<typeof getCommand<'audit_event.list'>>['run']>[1]) =>
  getCommand('audit_event.list').run({ api }, args);

/** Appends audit events at the given times (many share a time: the id breaks the tie). */
async function append(times: number[], action = 'journal.test', userId: number | null = null) {
  if (!times.length) return;
  await sql`insert into audit_events (project_id, user_id, action, entity, created_at)
    select ${project}, ${userId}, ${action}, 'journal', to_timestamp(x / 1000.0)
    from unnest(${sql.val(times)}::float8[]) x`.execute(ts.server.context.db);
}

const idsOf = async (where = sql`true`) =>
  (
    await sql<{
      id: number;
    }>`select id from audit_events where project_id = ${project} and ${where} order by id`.execute(
      ts.server.context.db,
    )
  ).rows.map((r) => r.id);

beforeAll(async () => {
  // the worker is not started: the tests run due jobs with drain()
  ts = await startTestServer({
    config: { clock, modules: ['events', 'http'], retentionDays: { audit_event: 30 } },
  });
  api = await admin(ts);
  const me = await sql<{ project_id: number; id: number }>`
    select u.project_id, u.id from users u join accounts a on a.id = u.account_id where a.login = ${ts.adminLogin} order by u.id limit 1`.execute(
    ts.server.context.db,
  );
  project = me.rows[0]!.project_id;
  adminId = me.rows[0]!.id;
  // 10 days of events, seven at each of 60 moments (ties), plus some by the administrator
  const times: number[] = [];
  for (let m = 0; m < 60; m++) for (let k = 0; k < 7; k++) times.push(T0 + m * 4 * 3600 * 1000);
  await append(times);
  await append(
    Array.from({ length: 25 }, (_, i) => T0 + i * 9 * 3600 * 1000 + 1),
    'journal.actor',
    adminId,
  );
});
afterAll(async () => {
  await ts?.close();
});

describe('journal: keyset paging', () => {
  it('returns every row exactly once, walking older, while rows are being appended', async () => {
    const before = await idsOf();
    let appending = true;
    const appended: Promise<void>[] = [];
    // the appender runs beside the walk: new rows arrive at the newest end, some in the same instant
    const appender = (async () => {
      let n = 0;
      while (appending && n < 200) {
        const now = Date.now();
        appended.push(append([now, now, now]));
        await appended[appended.length - 1];
        n++;
      }
    })();
    const seen: number[] = [];
    let reply = await list({ limit: 37 });
    expect(reply.meta.prev).toBeNull();
    for (;;) {
      seen.push(...reply.data.map((r) => r.id));
      // each page is newest first by (time, id)
      for (let i = 1; i < reply.data.length; i++) {
        const a = reply.data[i - 1]!;
        const b = reply.data[i]!;
        expect(a.created_at > b.created_at || (a.created_at === b.created_at && a.id > b.id)).toBe(true);
      }
      if (!reply.meta.next) break;
      reply = await list({ limit: 37, cursor: reply.meta.next });
    }
    appending = false;
    await appender;
    expect(new Set(seen).size).toBe(seen.length);
    const seenSet = new Set(seen);
    // every row that was there when the walk began, once; rows appended meanwhile came after the first page
    expect(before.filter((id) => !seenSet.has(id))).toEqual([]);
    expect(appended.length).toBeGreaterThan(0);
  });

  it('walking oldest first returns every row once, including those appended meanwhile', async () => {
    // the oldest page: oldest first, then turn round by prev cursors (newer)
    let reply = await list({ limit: 41, sort: 'created_at' });
    const seen: number[] = reply.data.map((r) => r.id);
    let last = reply.data[reply.data.length - 1]!;
    // continue oldest-first with next; append in the middle of the walk
    let k = 0;
    while (reply.meta.next) {
      if (k++ % 3 === 0) await append([Date.now(), Date.now()]);
      reply = await list({ limit: 41, sort: 'created_at', cursor: reply.meta.next });
      seen.push(...reply.data.map((r) => r.id));
      if (reply.data.length) last = reply.data[reply.data.length - 1]!;
    }
    expect(new Set(seen).size).toBe(seen.length);
    const all = await idsOf();
    // all rows, including every one appended during the walk (they are the newest, read last)
    expect([...seen].sort((a, b) => a - b)).toEqual(all);
    expect(last.id).toBe(Math.max(...all));
  });

  it('prev turns back exactly onto the page before', async () => {
    const one = await list({ limit: 20 });
    const two = await list({ limit: 20, cursor: one.meta.next! });
    expect(two.meta.prev).not.toBeNull();
    const back = await list({ limit: 20, cursor: two.meta.prev! });
    expect(back.data.map((r) => r.id)).toEqual(one.data.map((r) => r.id));
    const forth = await list({ limit: 20, cursor: back.meta.next! });
    expect(forth.data.map((r) => r.id)).toEqual(two.data.map((r) => r.id));
  });

  it('`to` jumps to a day without the rows after it; `from` bounds the oldest', async () => {
    const day = '2026-06-05T00:00:00.000Z';
    const reply = await list({ limit: 10, to: '2026-06-06T00:00:00Z' });
    expect(reply.data[0]!.created_at.slice(0, 10)).toBe('2026-06-05');
    expect(reply.meta.prev).not.toBeNull();
    const within = await list({ limit: 1000, from: day, to: '2026-06-06T00:00:00Z' });
    expect(within.data.length).toBe(6 * 7 + 3); // six moments of seven rows, three by the administrator
    expect(within.data.every((r) => r.created_at.startsWith('2026-06-05'))).toBe(true);
    expect(within.meta.next).toBeNull();
  });

  it('bad cursors, times and sorts are check_fields_data naming the field', async () => {
    for (const [query, field] of [
      [{ cursor: 'bm90LWEtY3Vyc29y' }, 'cursor'],
      // well-formed JSON the server never wrote: an id past the integer column, a time PostgreSQL refuses
      [{ cursor: b64(['o', '2026-06-01T00:00:00.000000Z', 2 ** 40]) }, 'cursor'],
      [{ cursor: b64(['o', '2026', 5]) }, 'cursor'],
      [{ to: 'yesterday-ish' }, 'to'],
      [{ from: '10000-01-01T00:00:00Z' }, 'from'],
      [{ sort: 'action' }, 'sort'],
      [{ page: 500, limit: 50 }, 'page'],
    ] as const) {
      const r = await raw(ts, api, 'GET', '/audit-events', { query });
      expect(r.status, JSON.stringify(r.body)).toBe(422);
      expect(r.body.data.fields.map((f: { field: string }) => f.field)).toEqual([field]);
    }
  });
});

describe('journal: the filter language and the export', () => {
  it('filters by actor over a week, with the rules of every list', async () => {
    const reply = await list({
      limit: 1000,
      from: '2026-06-01T00:00:00Z',
      to: '2026-06-08T00:00:00Z',
      filters: [{ field: 'user', rule: 'equals', value: adminId }],
    });
    const expected = await idsOf(
      sql`user_id = ${adminId} and created_at >= '2026-06-01T00:00:00Z' and created_at < '2026-06-08T00:00:00Z'`,
    );
    expect(reply.data.map((r) => r.id).sort((a, b) => a - b)).toEqual(expected);
    expect(expected.length).toBeGreaterThan(5);
    const any = await list({
      limit: 1000,
      from: '2026-06-01T00:00:00Z',
      to: '2026-06-02T00:00:00Z',
      match: 'any',
      filters: [
        { field: 'action', rule: 'equals', value: 'journal.actor' },
        { field: 'action', rule: 'begins_with', value: 'nothing' },
      ],
    });
    expect(any.data.every((r) => r.action === 'journal.actor')).toBe(true);
    expect(any.data.length).toBe(3);
    const bad = await raw(ts, api, 'GET', '/audit-events', {
      query: { filters: [{ field: 'user', rule: 'contains', value: 'x' }] },
    });
    expect(bad.status).toBe(422);
  });

  it('the export streams exactly the rows of the filter, in keyset batches', async () => {
    const rows: AuditEvent[] = [];
    let batches = 0;
    for await (const batch of journalRows(
      ts.server.context.db,
      auditEventStore,
      {
        from: '2026-06-01T00:00:00Z',
        to: '2026-06-11T00:00:00Z',
        filters: [{ field: 'action', rule: 'equals', value: 'journal.test' }],
        match: 'all',
      },
      sql<boolean>`t.project_id = ${project}`,
      50,
    )) {
      batches++;
      rows.push(...batch);
    }
    const expected = await idsOf(
      sql`action = 'journal.test' and created_at >= '2026-06-01T00:00:00Z' and created_at < '2026-06-11T00:00:00Z'`,
    );
    expect(rows.map((r) => r.id).sort((a, b) => a - b)).toEqual(expected);
    expect(expected.length).toBe(420);
    expect(batches).toBe(Math.ceil(420 / 50));
  });
});

describe('journal: retention', () => {
  it('deletes in batches of the given size by id range, older rows only', async () => {
    const db = ts.server.context.db;
    await append(
      Array.from({ length: 35 }, () => Date.parse('2020-01-01T00:00:00Z')),
      'journal.ancient',
    );
    const newer = await idsOf(sql`created_at >= '2021-01-01T00:00:00Z'`);
    const r = await pruneJournal(db, auditEventStore, new Date('2021-01-01T00:00:00Z'), 10);
    expect(r).toEqual({ deleted: 35, batches: 4 });
    expect(await idsOf(sql`created_at >= '2021-01-01T00:00:00Z'`)).toEqual(newer);
    expect(await idsOf(sql`created_at < '2021-01-01T00:00:00Z'`)).toEqual([]);
  });

  it('the daily job keeps 30 days (the configured retention) by the server clock, then queues the next day', async () => {
    const { jobs, db } = ts.server.context;
    const kind = retentionKind(auditEventStore);
    await jobs.enqueue(db, kind, {}, { idempotencyKey: `${kind}:${clock.now().toISOString().slice(0, 10)}` });
    // on 2026-06-15 nothing of June is older than 30 days
    const before = await idsOf();
    await jobs.drain();
    expect(await idsOf()).toEqual(before);
    // 20 days later the next day's run (queued for 2026-06-16) is due: rows older than now - 30 days go
    clock.set(Date.parse('2026-07-05T12:00:00Z'));
    const cutoff = new Date(clock.now().getTime() - 30 * DAY).toISOString();
    const newer = await idsOf(sql`created_at >= ${cutoff}::timestamptz`);
    expect(newer.length).toBeGreaterThan(0);
    expect(newer.length).toBeLessThan(before.length);
    expect(await jobs.drain()).toBe(1);
    expect(await idsOf()).toEqual(newer);
    const next = await sql<{ run_at: Date; state: string }>`
      select run_at, state from jobs where kind = ${kind} order by id desc limit 1`.execute(db);
    expect(next.rows[0]).toMatchObject({ state: 'waiting', run_at: new Date('2026-07-06T00:00:00Z') });
  });
});
