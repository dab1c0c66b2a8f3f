// bench/journal: the audit log as a journal at 10,000,000 events on PostgreSQL (seeded with generate_series):
// the first page, a page one day back, a filter by actor over a week — p50 / p99 at 1 and 20 connections —
// the export of one day (keyset pages of 1,000 through the API) against `psql \copy (select …) to` of the
// same rows, and the btree indexes of migration 0015 against a BRIN index on the time, in SQL.
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import autocannon from 'autocannon';
import pg from 'pg';
import { machine, signIn, startServer, writeResults } from '../lib.mjs';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000_000);
const DAYS = Number(process.env.BENCH_DAYS ?? 100);
const ACTORS = 1000;
const DURATION = Number(process.env.BENCH_SECONDS ?? 5);
const PG = process.env.BENCH_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const PASSWORD = 'Bench-password-1';
const log = (...a) => console.log(new Date().toISOString().slice(11, 19), ...a);

const dbName = `lintel_bench_journal_${Date.now()}`;
const adminDb = new pg.Client({ connectionString: PG });
await adminDb.connect();
await adminDb.query(`create database ${dbName}`);
const dbUrl = new URL(PG);
dbUrl.pathname = `/${dbName}`;
const load1 = os.loadavg()[0];
let server;
let db;
try {
  server = await startServer({
    PORT: '18511',
    LINTEL_ADMIN_PASSWORD: PASSWORD,
    DATABASE_URL: dbUrl.toString(),
  });
  const token = await signIn(server.url, 'admin', PASSWORD);
  db = new pg.Client({ connectionString: dbUrl.toString() });
  await db.connect();
  const project = (await db.query('select id from projects order by id limit 1')).rows[0].id;
  // the newest event is "now" (the latest whole minute): DAYS days of events, newest first by id too
  const now = new Date(Math.floor(Date.now() / 60_000) * 60_000);

  // ----- seed: without the indexes, then build them (as a restore would) ---------------------------------
  let t = performance.now();
  await db.query('drop index if exists audit_events_project_time, audit_events_project_user_time');
  await db.query(
    `insert into audit_events (project_id, user_id, action, entity, entity_id, ip, data, created_at)
     select $1, 1000 + ((g::bigint * 7919) % ${ACTORS})::int, (array['login','user.update','door.open','call.end'])[1 + g % 4],
            'user', (g % 50000)::text, '10.0.' || (g % 250) || '.' || (g % 200), '{}'::jsonb,
            $2::timestamptz - ((${EVENTS} - g) * (${DAYS} * 86400.0 / ${EVENTS})) * interval '1 second'
     from generate_series(1, ${EVENTS}) g`,
    [project, now.toISOString()],
  );
  const seedS = (performance.now() - t) / 1000;
  log(`seeded ${EVENTS} events in ${seedS.toFixed(0)} s`);

  const sqlTimes = async (label, text, params, n = 15) => {
    const ms = [];
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      await db.query(text, params);
      ms.push(performance.now() - t0);
    }
    ms.sort((a, b) => a - b);
    return { label, p50: ms[Math.floor(n / 2)], max: ms[n - 1] };
  };
  const dayBack = new Date(now.getTime() - 86_400_000).toISOString();
  const weekFrom = new Date(now.getTime() - 8 * 86_400_000).toISOString();
  const weekTo = new Date(now.getTime() - 86_400_000).toISOString();
  const actor = 1000 + 17;
  // the page queries runJournal sends (keys of 51 rows, newest first), in SQL
  const shapes = [
    [
      'first page',
      `select id from audit_events t where t.project_id = $1 order by created_at desc, id desc limit 51`,
      [project],
    ],
    [
      'a page one day back',
      `select id from audit_events t where t.project_id = $1 and created_at < $2 order by created_at desc, id desc limit 51`,
      [project, dayBack],
    ],
    [
      'actor over a week',
      `select id from audit_events t where t.project_id = $1 and created_at >= $2 and created_at < $3 and user_id = $4 order by created_at desc, id desc limit 51`,
      [project, weekFrom, weekTo, actor],
    ],
    [
      'one day, all rows (export)',
      `select id from audit_events t where t.project_id = $1 and created_at >= $2 and created_at < $3`,
      [project, new Date(now.getTime() - 2 * 86_400_000).toISOString(), dayBack],
    ],
  ];
  const size = async (name) =>
    (await db.query(`select pg_size_pretty(pg_relation_size($1)) as s`, [name])).rows[0].s;

  // ----- BRIN on the time alone ----------------------------------------------------------------------------
  t = performance.now();
  await db.query('create index audit_events_brin on audit_events using brin (created_at)');
  const brinBuildS = (performance.now() - t) / 1000;
  await db.query('vacuum analyze audit_events');
  const brinSize = await size('audit_events_brin');
  const brin = [];
  for (const [label, text, params] of shapes)
    brin.push(await sqlTimes(label, text, params, label.startsWith('one') ? 5 : 15));
  log('brin', brin);
  await db.query('drop index audit_events_brin');

  // ----- the btree indexes of 0015 ------------------------------------------------------------------------
  t = performance.now();
  await db.query(
    'create index audit_events_project_time on audit_events (project_id, created_at desc, id desc)',
  );
  await db.query(
    'create index audit_events_project_user_time on audit_events (project_id, user_id, created_at desc, id desc)',
  );
  const btreeBuildS = (performance.now() - t) / 1000;
  await db.query('vacuum analyze audit_events');
  const btreeSize = `${await size('audit_events_project_time')} + ${await size('audit_events_project_user_time')}`;
  const btree = [];
  for (const [label, text, params] of shapes)
    btree.push(await sqlTimes(label, text, params, label.startsWith('one') ? 5 : 15));
  log('btree', btree);

  // ----- through the API --------------------------------------------------------------------------------
  const q = (o) => `/api/v0/audit-events?${new URLSearchParams(o)}`;
  const requests = [
    ['first page', q({ limit: '50' })],
    ['a page one day back', q({ limit: '50', to: dayBack })],
    [
      'actor over a week',
      q({
        limit: '50',
        from: weekFrom,
        to: weekTo,
        filters: JSON.stringify([{ field: 'user', rule: 'equals', value: actor }]),
      }),
    ],
  ];
  const auth = { authorization: `Bearer ${token}` };
  const api = [];
  for (const [label, path] of requests) {
    const check = await (await fetch(`${server.url}${path}`, { headers: auth })).json();
    if (!Array.isArray(check.data)) throw new Error(`${label}: ${JSON.stringify(check)}`);
    for (const connections of [1, 20]) {
      const r = await autocannon({
        url: `${server.url}${path}`,
        connections,
        duration: DURATION,
        timeout: 30,
        headers: auth,
      });
      api.push({
        label,
        rows: check.data.length,
        connections,
        rps: r.requests.average,
        p50: r.latency.p50,
        p99: r.latency.p99,
        failed: r.non2xx + r.errors + r.timeouts,
      });
      log(api[api.length - 1]);
    }
  }

  // ----- export of one day: keyset pages of 1,000 through the API, against psql \copy ------------------
  const dayFrom = new Date(now.getTime() - 2 * 86_400_000).toISOString();
  t = performance.now();
  let exported = 0;
  let cursor = null;
  for (;;) {
    const o = { limit: '1000', from: dayFrom, to: dayBack };
    if (cursor) o.cursor = cursor;
    const page = await (await fetch(`${server.url}${q(o)}`, { headers: auth })).json();
    exported += page.data.length;
    if (!page.meta.next) break;
    cursor = page.meta.next;
  }
  const exportS = (performance.now() - t) / 1000;
  t = performance.now();
  const copy = spawnSync(
    'psql',
    [
      dbUrl.toString(),
      '-c',
      `\\copy (select t.id, t.created_at, t.user_id, u.name, t.action, t.entity, t.entity_id, t.ip, t.data from audit_events t left join users u on u.id = t.user_id where t.project_id = ${project} and t.created_at >= '${dayFrom}' and t.created_at < '${dayBack}' order by t.created_at desc, t.id desc) to '/dev/null'`,
    ],
    { encoding: 'utf8' },
  );
  const copyS = (performance.now() - t) / 1000;
  if (copy.status !== 0) throw new Error(copy.stderr);
  const copied = Number(/COPY (\d+)/.exec(copy.stdout)?.[1] ?? 0);
  log({ exported, exportS, copied, copyS });
  const load2 = os.loadavg()[0];

  const f = (n) => n.toFixed(1);
  const md = `## journal — the audit log at ${EVENTS.toLocaleString('en')} events (PostgreSQL)

${new Date().toISOString().slice(0, 10)} · ${machine()} · load average ${load1.toFixed(1)} at the start, ${load2.toFixed(1)} at the end (a shared 2-core machine: figures are what it gave then) · ${DURATION} s per load run.
Seeded with \`generate_series\` in ${seedS.toFixed(0)} s: ${DAYS} days, ${(EVENTS / DAYS).toLocaleString('en')} events a day, ${ACTORS} actors.

Through the API (\`GET /api/v0/audit-events\`, pages of 50, keyset by (created_at, id), total counted to 10,001):

| request | rows | connections | req/s | p50 ms | p99 ms | failed |
|---|---|---|---|---|---|---|
${api.map((r) => `| ${r.label} | ${r.rows} | ${r.connections} | ${f(r.rps)} | ${r.p50} | ${r.p99} | ${r.failed} |`).join('\n')}

Export of one day (${exported.toLocaleString('en')} rows): through the API in keyset pages of 1,000, ${Math.round(exported / exportS).toLocaleString('en')} rows/s (${f(exportS)} s); \`psql \\copy (select … same rows, same join) to /dev/null\`, ${Math.round(copied / copyS).toLocaleString('en')} rows/s (${f(copyS)} s): the API gives ${(exported / exportS / (copied / copyS)).toFixed(2)} of COPY.

Indexes, the page queries in SQL (p50 / slowest of 15 runs, 5 for the day), one at a time on the same table:

| query | btree (project, time, id) + (project, user, time, id) | BRIN (created_at) |
|---|---|---|
${btree.map((b, i) => `| ${b.label} | ${f(b.p50)} / ${f(b.max)} ms | ${f(brin[i].p50)} / ${f(brin[i].max)} ms |`).join('\n')}
| build | ${f(btreeBuildS)} s | ${f(brinBuildS)} s |
| size | ${btreeSize} | ${brinSize} |`;
  writeResults('journal', md);
  console.log(md);
} finally {
  await db?.end();
  await server?.stop();
  await adminDb.query(`drop database if exists ${dbName} with (force)`);
  await adminDb.end();
}
