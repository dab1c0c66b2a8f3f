import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { ImportReport, ImportRowError } from '@lintel/commands';
import type { ImportDB } from './user-import.tables';

/** How many problems a report lists one by one (the rest are counted). */
export const REPORT_ERRORS = 100;

type Q = Kysely<ImportDB> | Transaction<ImportDB>;

const problem = (field: string, key: string) => JSON.stringify([{ field, key }]);

/**
 * What may have changed since the rows were checked, read again set-based over the whole import: logins and
 * e-mails taken meanwhile (or held twice by batches that raced), roles, groups and markers deleted. A row
 * found so gets that one problem.
 */
export async function recheck(q: Q, importId: string, projectId: number): Promise<void> {
  const valid = sql`r.import_id = ${importId} and r.errors is null`;
  const flag = (field: string, key: string, when: RawBuilder<unknown>) =>
    sql`update user_import_rows r set errors = ${problem(field, key)}::jsonb where ${valid} and ${when}`;
  /** a row naming an id of this kind that is not (or no longer) in the project */
  const gone = (column: 'domain_ids' | 'marker_ids', table: 'domains' | 'markers') =>
    sql`exists (select 1 from jsonb_array_elements_text(${sql.ref(`r.${column}`)}) d(v)
      where not exists (select 1 from ${sql.table(table)} x where x.id = d.v::int and x.project_id = ${projectId}))`;
  /** a later line holding a login or e-mail an earlier one holds (one window pass, computed once) */
  const duplicate = (field: 'login' | 'email') => {
    const key = sql.ref(`${field}_key`);
    return sql`with d as materialized (
        select line, first_value(line) over (partition by ${key} order by line) as first
        from user_import_rows where import_id = ${importId} and ${key} is not null)
      update user_import_rows r
      set errors = jsonb_build_array(jsonb_build_object('field', ${field}::text, 'rule', 'duplicate_in_file',
        'params', jsonb_build_object('line', d.first)))
      from d where ${valid} and r.line = d.line and d.first < d.line`;
  };
  const checks = [
    flag(
      'login',
      'login_already_used',
      sql`exists (select 1 from accounts a where lower(a.login) = r.login_key or lower(a.email) = r.login_key)`,
    ),
    flag(
      'email',
      'email_already_used',
      sql`r.email_key is not null and exists (select 1 from accounts a where lower(a.email) = r.email_key or lower(a.login) = r.email_key)`,
    ),
    duplicate('login'),
    duplicate('email'),
    flag(
      'role',
      'invalid_related_entity',
      sql`not exists (select 1 from roles x where x.id = r.role_id and x.project_id = ${projectId})`,
    ),
    flag('domains', 'invalid_related_entity', gone('domain_ids', 'domains')),
    flag('markers', 'invalid_related_entity', gone('marker_ids', 'markers')),
  ];
  for (const check of checks) await check.execute(q);
}

export async function counts(q: Q, importId: string): Promise<{ rows: number; valid: number }> {
  const r = await sql<{
    rows: number;
    valid: number;
  }>`select count(*)::int as rows, (count(*) filter (where errors is null))::int as valid
    from user_import_rows where import_id = ${importId}`.execute(q);
  return r.rows[0] ?? { rows: 0, valid: 0 };
}

/** The problems part of a report: the first ones by line, their count by field and rule, the rejected lines. */
export async function problems(
  q: Q,
  importId: string,
): Promise<Pick<ImportReport, 'errors' | 'errors_total' | 'error_counts' | 'rejected_lines'>> {
  const [first, byKind, ranges] = await Promise.all([
    sql<{ line: number; errors: Omit<ImportRowError, 'line'>[] }>`select line, errors from user_import_rows
      where import_id = ${importId} and errors is not null order by line limit ${REPORT_ERRORS}`.execute(q),
    sql<{
      field: string;
      rule: string | null;
      key: string | null;
      count: number;
    }>`select e->>'field' as field, e->>'rule' as rule, e->>'key' as key, count(*)::int as count
      from user_import_rows r cross join lateral jsonb_array_elements(r.errors) e
      where r.import_id = ${importId} and r.errors is not null group by 1, 2, 3 order by 4 desc, 1, 2, 3`.execute(
      q,
    ),
    // consecutive rejected lines as [from, to] (gaps and islands)
    sql<{ from: number; to: number }>`select min(line) as "from", max(line) as "to" from (
        select line, line - row_number() over (order by line) as island from user_import_rows
        where import_id = ${importId} and errors is not null) s
      group by island order by 1`.execute(q),
  ]);
  const errors = first.rows
    .flatMap((r) => r.errors.map((e) => ({ line: r.line, ...e })))
    .slice(0, REPORT_ERRORS);
  const error_counts = byKind.rows.map((r) => ({
    field: r.field,
    ...(r.rule ? { rule: r.rule } : {}),
    ...(r.key ? { key: r.key } : {}),
    count: r.count,
  }));
  return {
    errors,
    errors_total: error_counts.reduce((n, c) => n + c.count, 0),
    error_counts,
    rejected_lines: ranges.rows.map((r) => [Number(r.from), Number(r.to)] as [number, number]),
  };
}

/**
 * Inserts every valid row of the import, set-based, in one statement: accounts, then users (matched to
 * their rows by the new accounts' logins, not by reading the accounts table again), then their groups and
 * markers. Lines go in in file order, so ids follow the file. Returns how many users went in.
 */
export async function insertValid(
  trx: Transaction<ImportDB>,
  importId: string,
  projectId: number,
  callerId: number,
): Promise<number> {
  // the trigram (GIN) indexes take new rows into their pending list; a larger list lets the whole
  // import in before it is merged (the vacuum after the commit merges it)
  await sql`set local gin_pending_list_limit = '64MB'`.execute(trx);
  const r = await sql<{ n: number }>`
    with a as (
      insert into accounts (login, email, password_hash, activated_at)
      select r.login, r.email, r.password_hash, case when r.password_hash is null then null else now() end
      from user_import_rows r where r.import_id = ${importId} and r.errors is null order by r.line
      returning id, lower(login) as login_key
    ), src as (
      select a.id as account_id, r.line, r.role_id, r.name, r.description, r.profile, r.elevator_access_disabled, r.is_group_admin, r.domain_ids, r.marker_ids
      from a join user_import_rows r on r.import_id = ${importId} and r.errors is null and r.login_key = a.login_key
    ), u as (
      insert into users (project_id, account_id, role_id, name, description, profile, elevator_access_disabled, is_group_admin, created_by)
      select ${projectId}, s.account_id, s.role_id, s.name, s.description, s.profile, s.elevator_access_disabled, s.is_group_admin, ${callerId}
      from src s order by s.line
      returning id, account_id
    ), d as (
      insert into user_domains (user_id, domain_id)
      select u.id, x.v::int from u join src s on s.account_id = u.account_id cross join lateral jsonb_array_elements_text(s.domain_ids) x(v)
    ), m as (
      insert into user_markers (user_id, marker_id)
      select u.id, x.v::int from u join src s on s.account_id = u.account_id cross join lateral jsonb_array_elements_text(s.marker_ids) x(v)
      where jsonb_array_length(s.marker_ids) > 0
    )
    select count(*)::int as n from u`.execute(trx);
  return r.rows[0]?.n ?? 0;
}
