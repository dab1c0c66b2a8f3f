/** Helpers of the backup tests: every row a backup covers, and waiting for a backup's job. */
import { sql, type Kysely } from 'kysely';
import JSZip from 'jszip';
import { getCommand, type Backup } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import type { DB } from '../../apps/server/src/db/schema';
import { PROJECT_COLUMNS, TABLES } from '../../apps/server/src/backup/format';

/**
 * Every row of the project in each table a backup covers, by table, in key order, as JSON (timestamps as
 * text): two databases' snapshots compare equal when every row is equal. Project ids are left out (a backup
 * may go to another project's id), and so are the server's own columns (`serverColumns`).
 */
export async function projectRows(db: Kysely<DB>, projectId: number): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  // timestamps as UTC text whatever the database's time zone (two servers may differ)
  await db.transaction().execute(async (trx) => {
    await sql`set local time zone 'UTC'`.execute(trx);
    for (const t of TABLES) out[t.name] = await rowsOf(trx, t, projectId);
  });
  return out;
}

async function rowsOf(db: Kysely<DB>, t: (typeof TABLES)[number], projectId: number): Promise<unknown[]> {
  {
    const cols = t.projectRow
      ? sql`jsonb_build_object(${sql.join(PROJECT_COLUMNS.map((c) => sql`${sql.lit(c)}::text, t.${sql.ref(c)}`))})`
      : sql`to_jsonb(t) - 'project_id'${sql.join(
          (t.serverColumns ?? []).map((c) => sql` - ${sql.lit(c)}::text`),
          sql``,
        )}`;
    const r = await sql<{ j: string }>`select (${cols})::text as j from ${sql.table(t.name)} t
      where ${t.scope(projectId)} order by ${sql.join(t.key.map((k) => sql.ref(`t.${k}`)))}`.execute(db);
    return r.rows.map((x) => JSON.parse(x.j) as unknown);
  }
}

/** The rows of a table's COPY text (format 4) as records of the manifest's columns, values as text or null. */
export function copyRows(text: string, columns: readonly string[]): Record<string, string | null>[] {
  const unescape = (v: string) =>
    v === '\\N' ? null : v.replace(/\\(.)/g, (_, c: string) => ({ t: '\t', n: '\n', r: '\r' })[c] ?? c);
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const values = line.split('\t');
      if (values.length !== columns.length) throw new Error(`a COPY line of ${values.length} values`);
      return Object.fromEntries(columns.map((c, i) => [c, unescape(values[i]!)]));
    });
}

/**
 * The backup `zip` (format 4) as a file of an older format (`version`, 1–3) would hold it: each table an NDJSON
 * entry `tables/<table>.ndjson` of `row_to_json` — what the make wrote before format 4 — read from `db`,
 * which must hold the rows the backup was made of (the stored files are kept; format 1 had none: removed).
 */
export async function olderFormat(db: Kysely<DB>, zip: Uint8Array, version: number): Promise<Uint8Array> {
  const z = await JSZip.loadAsync(zip);
  const manifest = JSON.parse(await z.file('manifest.json')!.async('string')) as {
    format_version: number;
    files?: unknown;
    tables: { name: string; file: string; rows: number; columns: string[] }[];
  };
  for (const m of manifest.tables) {
    const t = TABLES.find((x) => x.name === m.name)!;
    const row = t.projectRow
      ? sql`jsonb_build_object(${sql.join(PROJECT_COLUMNS.map((c) => sql`${sql.lit(c)}::text, t.${sql.ref(c)}`))})::text`
      : sql`row_to_json(t)::text`;
    const r = await sql<{ j: string }>`select ${row} as j from ${sql.table(t.name)} t
      where ${t.scope(1)}`.execute(db);
    if (r.rows.length !== m.rows)
      throw new Error(`${m.name}: ${r.rows.length} rows, the backup has ${m.rows}`);
    z.remove(m.file);
    m.file = `tables/${m.name}.ndjson`;
    z.file(m.file, r.rows.map((x) => x.j + '\n').join(''));
  }
  manifest.format_version = version;
  if (version < 2) {
    delete manifest.files;
    z.remove('files');
  }
  z.file('manifest.json', JSON.stringify(manifest));
  return z.generateAsync({ type: 'uint8array' });
}

/** Polls the backup until its job has made it (generous bound: CI is slow). */
export async function waitReady(api: ApiClient, id: number, timeoutMs = 120_000): Promise<Backup> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    // on the embedded database the make holds the one connection for its snapshot: a poll then times out
    const got = await getCommand('backup.get')
      .run({ api }, { id })
      .catch((err: unknown) => {
        if ((err as { code?: string }).code === 'timeout') return null;
        throw err;
      });
    const b = got?.data;
    if (b?.state === 'ready') return b;
    if (b?.state === 'failed') throw new Error(`backup ${id} failed: ${b.error}`);
    if (Date.now() > end) throw new Error(`backup ${id} not made in time`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Adds `n` users to project 1 set-based (accounts, users in the root group, a marker for every third), with
 * the awkward values a copy must keep: Unicode, quotes, backslashes, new lines, JSON profiles, nulls.
 */
export async function seedUsers(db: Kysely<DB>, n: number, tag: string): Promise<void> {
  await sql`insert into markers (project_id, name, color) values (1, ${`Seed ${tag}`}, '#123abc')`.execute(
    db,
  );
  await sql`with a as (
      insert into accounts (login, email, password_hash, locale)
      select ${`s${tag}-`} || i, case when i % 2 = 0 then ${`s${tag}-`} || i || '@example.test' end,
        'hash-' || i, case when i % 3 = 0 then 'ru' else 'en' end
      from generate_series(1, ${n}) i
      returning id, login)
    insert into users (project_id, account_id, role_id, name, description, profile)
    select 1, a.id, (select id from roles where project_id = 1 order by id limit 1),
      'Пользователь "' || a.login || E'" \\\\ O''Neil\\nline',
      case when a.id % 5 = 0 then '' else 'desc ' || a.id end,
      jsonb_build_object('phone', '+7 900 ' || a.id, 'nested', jsonb_build_object('k', array[a.id, 2]))
    from a`.execute(db);
  await sql`insert into user_domains (user_id, domain_id)
    select u.id, (select id from domains where project_id = 1 and parent_id is null limit 1)
    from users u where u.project_id = 1 and u.name like ${`%s${tag}-%`}`.execute(db);
  await sql`insert into user_markers (user_id, marker_id)
    select u.id, (select id from markers where name = ${`Seed ${tag}`})
    from users u where u.project_id = 1 and u.name like ${`%s${tag}-%`} and u.id % 3 = 0`.execute(db);
}

/**
 * Adds `n` identifiers to project 1 set-based, owned by its users in turn (every tenth a guest's, no owner),
 * with the awkward values a copy must keep, and the access control around them: a schedule, a holiday of the
 * root group, a rule naming every fifth identifier, every seventh user and the root group.
 */
export async function seedIdentifiers(db: Kysely<DB>, n: number, tag: string): Promise<void> {
  await sql`with u as (select id, row_number() over (order by id) as rn from users where project_id = 1),
      c as (select count(*) as n from u)
    insert into identifiers (project_id, name, type, value, owner_type, owner, description,
      period_restrict_active, period_restrict_from, period_restrict_to, period_restrict_from_u, period_restrict_to_u,
      passes_restrict_active, passes_restrict_max_count, passes_count)
    select 1, 'Карта "' || i || E'" \\\\ O''Neil\\n', 'license_plate', ${`${tag.toUpperCase()}-`} || i,
      case when i % 10 = 0 then 'guest' else 'user' end,
      u.id,
      case when i % 4 = 0 then '' else 'desc ' || i end,
      i % 3 = 0, case when i % 3 = 0 then '2026-12-01T09:00:00' end, case when i % 3 = 0 then '2027-01-01T18:00:00' end,
      case when i % 3 = 0 then '2026-12-01T06:00:00Z'::timestamptz end,
      case when i % 3 = 0 then '2027-01-01T15:00:00Z'::timestamptz end,
      i % 2 = 0, case when i % 2 = 0 then 10 else 0 end, i % 5
    -- a join, not a subquery per row: that scanned the users once per identifier
    from generate_series(1, ${n}) i cross join c left join u on u.rn = 1 + i % c.n and i % 10 <> 0`.execute(
    db,
  );
  const root = sql`(select id from domains where project_id = 1 and parent_id is null limit 1)`;
  await sql`insert into schedules (project_id, name, valid_from, repeat_days, time_from, time_to)
    values (1, ${`Seed ${tag}`}, '2026-01-01', '["mon", "fri"]'::jsonb, 28800, 64800)`.execute(db);
  await sql`with h as (insert into holidays (project_id, name, date) values (1, ${`Seed ${tag}`}, '2027-01-01')
      returning id)
    insert into holiday_domains (holiday_id, domain_id) select h.id, ${root} from h`.execute(db);
  await sql`insert into access_rules (project_id, name, is_shareable) values (1, ${`Seed ${tag}`}, true)`.execute(
    db,
  );
  const rule = sql`(select id from access_rules where project_id = 1 and name = ${`Seed ${tag}`})`;
  await sql`insert into access_rule_identifiers (access_rule_id, identifier_id)
    select ${rule}, id from identifiers where project_id = 1 and value like ${`${tag.toUpperCase()}-%`} and id % 5 = 0`.execute(
    db,
  );
  await sql`insert into access_rule_users (access_rule_id, user_id)
    select ${rule}, id from users where project_id = 1 and id % 7 = 0`.execute(db);
  await sql`insert into access_rule_schedules (access_rule_id, schedule_id)
    select ${rule}, id from schedules where project_id = 1 and name = ${`Seed ${tag}`}`.execute(db);
  await sql`insert into access_rule_domains (access_rule_id, domain_id) values (${rule}, ${root})`.execute(
    db,
  );
}
