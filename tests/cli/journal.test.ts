/**
 * `lintel audit-events list` over a journal: `--from` / `--to` bound the time, `--where` is the lists'
 * filter language, and `--all` walks the keyset cursors to the last row (past the page-number bound).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sql } from 'kysely';
import { startTestServer, type TestServer } from '../support/server';
import { buildCli, freshConfigDir, lintel, removeConfigDirs } from './support';

let ts: TestServer;
let dir: string;

beforeAll(async () => {
  const built = buildCli();
  expect(built.status, built.stderr).toBe(0);
  ts = await startTestServer();
  dir = freshConfigDir();
  const r = await lintel(['login', '--server', ts.url, '--login', ts.adminLogin, '--password-stdin'], {
    configDir: dir,
    input: `${ts.adminPassword}\n`,
  });
  expect(r.code, r.stderr).toBe(0);
  // 12,000 events on 2026-03-02 (more than page-number paging reaches), 5 the day before and after
  await sql`insert into audit_events (project_id, action, entity, created_at)
    select (select id from projects order by id limit 1), case when g % 3 = 0 then 'cli.three' else 'cli.other' end,
      'journal', '2026-03-02T00:00:00Z'::timestamptz + g * interval '7 seconds'
    from generate_series(0, 11999) g`.execute(ts.server.context.db);
  await sql`insert into audit_events (project_id, action, created_at)
    select (select id from projects order by id limit 1), 'cli.edge', d
    from unnest(array['2026-03-01T23:59:59Z', '2026-03-03T00:00:00Z']::timestamptz[]) d`.execute(
    ts.server.context.db,
  );
});
afterAll(async () => {
  await ts?.close();
  removeConfigDirs();
});

it('lists one day with --from/--to and --all by cursor, the filter in force', async () => {
  const day = ['--from', '2026-03-02T00:00:00Z', '--to', '2026-03-03T00:00:00Z'];
  const all = await lintel(['audit-events', 'list', ...day, '--all', '--json'], { configDir: dir });
  expect(all.code, all.stderr).toBe(0);
  const rows = (JSON.parse(all.stdout) as { data: { id: number; action: string; created_at: string }[] })
    .data;
  expect(rows.length).toBe(12_000);
  expect(new Set(rows.map((r) => r.id)).size).toBe(12_000);
  expect(rows.every((r) => r.created_at.startsWith('2026-03-02'))).toBe(true);

  const three = await lintel(
    ['audit-events', 'list', ...day, '--where', 'action equals cli.three', '--all', '--json'],
    { configDir: dir },
  );
  expect(three.code, three.stderr).toBe(0);
  const filtered = (JSON.parse(three.stdout) as { data: { action: string }[] }).data;
  expect(filtered.length).toBe(4_000);
  expect(filtered.every((r) => r.action === 'cli.three')).toBe(true);
}, 120_000);

it('exports one day with --from/--to and the filter, the rows of list --all in their order', async () => {
  const day = ['--from', '2026-03-02T00:00:00Z', '--to', '2026-03-03T00:00:00Z'];
  const query = [...day, '--where', 'action equals cli.three'];
  const exported = await lintel(['audit-events', 'export', ...query, '--format', 'ndjson'], {
    configDir: dir,
  });
  expect(exported.code, exported.stderr).toBe(0);
  const listed = await lintel(['audit-events', 'list', ...query, '--all', '--json'], { configDir: dir });
  const rows = (JSON.parse(listed.stdout) as { data: unknown[] }).data;
  expect(rows.length).toBe(4_000);
  expect(
    exported.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l)),
  ).toEqual(rows);
  // oldest first, as the list sorts it
  const oldest = await lintel(
    ['audit-events', 'export', ...day, '--sort', 'created_at', '--format', 'ndjson'],
    {
      configDir: dir,
    },
  );
  const times = oldest.stdout
    .trimEnd()
    .split('\n')
    .map((l) => (JSON.parse(l) as { created_at: string }).created_at);
  expect(times.length).toBe(12_000);
  expect([...times].sort()).toEqual(times);
}, 120_000);

it('an export cut off half-way (the server failed) exits 1 and leaves no file behind', async () => {
  const out = path.join(os.tmpdir(), `lintel-cut-${process.pid}.ndjson`);
  // the oldest event is one the server refuses to write (its details are not an object: the record
  // check of development and tests fails), after more rows than a batch holds on either database
  await sql`insert into audit_events (project_id, action, data, created_at)
    values ((select id from projects order by id limit 1), 'cli.broken', '[1]'::jsonb, '2020-01-01T00:00:00Z')`.execute(
    ts.server.context.db,
  );
  const r = await lintel(['audit-events', 'export', '-o', out], { configDir: dir });
  expect(r.code, r.stderr).toBe(1);
  expect(r.stderr).toMatch(/network|reach|connection/i);
  expect(fs.existsSync(out)).toBe(false);
}, 120_000);
