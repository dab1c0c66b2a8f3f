// bench/licence-reports: the licence reports over 10,000 groups on PostgreSQL at 1 connection (issue 15
// item 7; spec part 2 §9: reports time out after 5 minutes). Seeds the groups set-based (generate_series):
// 100 regions of 99 buildings under the root, each with licence settings of two licences (periods spread
// over three years), maximums, a type, 30,000 users in the buildings (one in ten a group admin) and a
// last notice for a third. Times, one request after another: the first page of each report, every page of
// each report through the API (keyset pages of 1,000), and the CSV and XLSX exports of both, with the
// server's peak memory (VmHWM) after them.
import fs from 'node:fs';
import os from 'node:os';
import pg from 'pg';
import { machine, signIn, startServer, writeResults } from '../lib.mjs';

const REGIONS = 100;
const PER_REGION = 99;
const USERS = Number(process.env.BENCH_USERS ?? 30_000);
const TIMEOUT_S = 300;
const PG = process.env.BENCH_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const PASSWORD = 'Bench-password-1';
const log = (...a) => console.log(new Date().toISOString().slice(11, 19), ...a);

const dbName = `lintel_bench_reports_${Date.now()}`;
const adminDb = new pg.Client({ connectionString: PG });
await adminDb.connect();
await adminDb.query(`create database ${dbName}`);
const dbUrl = new URL(PG);
dbUrl.pathname = `/${dbName}`;
const loadBefore = os.loadavg();
let server;
let db;
try {
  server = await startServer({
    PORT: '18531',
    LINTEL_ADMIN_PASSWORD: PASSWORD,
    DATABASE_URL: dbUrl.toString(),
  });
  const token = await signIn(server.url, 'admin', PASSWORD);
  db = new pg.Client({ connectionString: dbUrl.toString() });
  await db.connect();
  const project = (await db.query('select id from projects order by id limit 1')).rows[0].id;
  const root = (
    await db.query('select id from domains where project_id = $1 and parent_id is null', [project])
  ).rows[0].id;
  const role = (await db.query('select id from roles where project_id = $1 order by id limit 1', [project]))
    .rows[0].id;

  let t = performance.now();
  await db.query(
    `insert into domain_types (project_id, type, name) select $1, 't' || g, 'Type ' || g from generate_series(1, 3) g`,
    [project],
  );
  const settings = (i) => `jsonb_build_object(
      'is_enabled', ${i} % 5 <> 0,
      'notifications', jsonb_build_object('period', (array['never','once','everyday','every_week'])[1 + ${i} % 4], 'notify_before', 14),
      'licenses', jsonb_build_array(
        jsonb_build_object('is_active', true, 'features', jsonb_build_object('sip', jsonb_build_object('is_enabled', true)),
          'restrict_period', jsonb_build_object('is_active', true,
            'from', to_char(date '2025-01-01' + (${i} % 700), 'YYYY-MM-DD'),
            'to', to_char(date '2025-01-01' + (${i} % 700) + 365, 'YYYY-MM-DD'))),
        jsonb_build_object('is_active', ${i} % 3 <> 0, 'features', jsonb_build_object('elevator', jsonb_build_object('is_enabled', true)),
          'restrict_period', jsonb_build_object('is_active', false, 'from', null, 'to', null))))`;
  await db.query(
    `insert into domains (project_id, parent_id, name, domain_type_id, license_settings, license_limits)
     select $1, $2, 'Region ' || g, (select min(id) from domain_types where project_id = $1), ${settings('g')},
       jsonb_build_object('users', 1000)
     from generate_series(1, ${REGIONS}) g`,
    [project, root],
  );
  await db.query(
    `insert into domains (project_id, parent_id, name, domain_type_id, license_settings, license_limits)
     select $1, r.id, 'Building ' || r.id || '-' || g,
       (select min(id) + 1 + (g % 2) from domain_types where project_id = $1), ${settings('(r.id * 100 + g)')},
       jsonb_build_object('users', 10, 'mobile_apps', 5)
     from domains r cross join generate_series(1, ${PER_REGION}) g
     where r.project_id = $1 and r.parent_id = $2`,
    [project, root],
  );
  await db.query(`insert into accounts (login) select 'bench' || g from generate_series(1, ${USERS}) g`);
  await db.query(
    `insert into users (project_id, account_id, role_id, name, is_group_admin)
     select $1, a.id, $2, 'User ' || a.login, a.id % 10 = 0 from accounts a where a.login like 'bench%'`,
    [project, role],
  );
  await db.query(
    `with b as (select id, row_number() over (order by id) as n from domains where project_id = $1 and name like 'Building %'),
          u as (select id, row_number() over (order by id) as n from users where project_id = $1 and name like 'User bench%')
     insert into user_domains (user_id, domain_id)
     select u.id, b.id from u join b on b.n = 1 + (u.n % (select count(*) from b))`,
    [project],
  );
  await db.query(
    `insert into group_licence_notify (domain_id, last_notified_at, last_key)
     select id, now() - (id % 30) * interval '1 day', 'bench' from domains where project_id = $1 and id % 3 = 0`,
    [project],
  );
  await db.query('analyze');
  const groups = Number(
    (await db.query('select count(*) from domains where project_id = $1', [project])).rows[0].count,
  );
  const seedS = (performance.now() - t) / 1000;
  log(`seeded ${groups} groups, ${USERS} users in ${seedS.toFixed(1)} s`);

  const get = async (path) => {
    const t0 = performance.now();
    const r = await fetch(`${server.url}/api/v0${path}`, { headers: { authorization: `Bearer ${token}` } });
    if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
    const body = Buffer.from(await r.arrayBuffer());
    return { ms: performance.now() - t0, bytes: body.length, body };
  };
  const rows = [];
  const firstPage = async (label, path) => {
    const ms = [];
    for (let i = 0; i < 5; i++) ms.push((await get(path)).ms);
    ms.sort((a, b) => a - b);
    rows.push([label, 'first page of 100 (median of 5)', '100', ms[2]]);
  };
  const allPages = async (label, path) => {
    const t0 = performance.now();
    let cursor = '';
    let n = 0;
    let pages = 0;
    for (;;) {
      const r = await get(
        `${path}${path.includes('?') ? '&' : '?'}limit=1000${cursor ? `&cursor=${cursor}` : ''}`,
      );
      const j = JSON.parse(r.body.toString());
      n += j.data.length;
      pages++;
      if (!j.meta.next) break;
      cursor = encodeURIComponent(j.meta.next);
    }
    rows.push([
      label,
      `every page of 1,000 (${pages} requests)`,
      n.toLocaleString('en'),
      performance.now() - t0,
    ]);
  };
  const exportOf = async (label, path, format) => {
    const r = await get(`${path}?format=${format}`);
    const lines = format === 'csv' ? r.body.toString().trim().split('\r\n').length - 1 : null;
    rows.push([
      label,
      `${format.toUpperCase()} export, streamed (${(r.bytes / 1024).toFixed(0)} KiB)`,
      lines === null ? '—' : lines.toLocaleString('en'),
      r.ms,
    ]);
  };
  const hwm = () => {
    const s = fs.readFileSync(`/proc/${server.pid}/status`, 'utf8');
    return Number(/VmHWM:\s+(\d+)/.exec(s)[1]) / 1024;
  };
  const rssStart = hwm();
  await firstPage('licences used', '/reports/licenses/used');
  await firstPage('licence periods', '/reports/licenses/period');
  await allPages('licences used', '/reports/licenses/used');
  await allPages('licence periods', '/reports/licenses/period');
  const rssJson = hwm();
  await exportOf('licences used', '/reports/licenses/used/export', 'csv');
  await exportOf('licence periods', '/reports/licenses/period/export', 'csv');
  await exportOf('licences used', '/reports/licenses/used/export', 'xlsx');
  await exportOf('licence periods', '/reports/licenses/period/export', 'xlsx');
  const rssEnd = hwm();
  for (const r of rows) log(r[0], r[1], r[2], `${r[3].toFixed(0)} ms`);
  const loadAfter = os.loadavg();
  const la = (l) => l.map((x) => x.toFixed(1)).join(', ');
  const worst = Math.max(...rows.map((r) => r[3]));
  const table = [
    '| report | request | rows | time | share of the 5-minute timeout |',
    '| ------ | ------- | ---- | ---- | ----------------------------- |',
    ...rows.map(
      (r) =>
        `| ${r[0]} | ${r[1]} | ${r[2]} | ${(r[3] / 1000).toFixed(2)} s | ${((r[3] / 1000 / TIMEOUT_S) * 100).toFixed(2)} % |`,
    ),
  ].join('\n');
  writeResults(
    'licence-reports',
    `## licence-reports — the licence reports over ${groups.toLocaleString('en')} groups, PostgreSQL, 1 connection

${new Date().toISOString().slice(0, 10)} · ${machine()} · load average before ${la(loadBefore)}, after ${la(loadAfter)} (the machine is shared with other helpers' builds and tests on its 2 cores: the times include their competition).
Seed (set-based SQL, ${seedS.toFixed(1)} s): ${REGIONS} regions × ${PER_REGION} buildings under the root, each with licence settings of two licences and maximums, three group types, ${USERS.toLocaleString('en')} users in the buildings (one in ten a group admin), a last notice on a third of the groups. Requests one after another through the built server (\`apps/server/dist/main.js\`), period all time, no filter: the whole project.
Timeout (spec part 2 §9): 300 s. Slowest request: ${(worst / 1000).toFixed(2)} s (${((worst / 1000 / TIMEOUT_S) * 100).toFixed(2)} % of it).
Server peak memory (VmHWM): ${rssStart.toFixed(0)} MiB after start-up and sign-in, ${rssJson.toFixed(0)} MiB after the JSON pages, ${rssEnd.toFixed(0)} MiB after the four exports (each read in keyset pages of 500 and written row by row).

${table}`,
  );
  log('written to bench/RESULTS.md');
} finally {
  await db?.end();
  await server?.stop();
  await adminDb.query(`drop database if exists ${dbName} with (force)`);
  await adminDb.end();
}
