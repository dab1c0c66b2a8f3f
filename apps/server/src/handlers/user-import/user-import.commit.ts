import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { ImportReport, ImportRowError } from '@lintel/commands';
import { audit } from '../../audit/audit';
import type { ServerContext } from '../../context';
import type { DB } from '../../db/schema';
import type { FamilyCtx } from '../../engine/family';
import { AppError } from '../../errors';
import { assertNoCrossIdentities } from '../../auth/identities';
import { importUserLimits } from '../../licensing/limits';
import type { HandlerContext } from '../../pipeline/handler';
import { withImportTables, type ImportDB } from './user-import.tables';

/** How many problems a report lists one by one (the rest are counted). */
export const REPORT_ERRORS = 100;

type Q = Kysely<ImportDB> | Transaction<ImportDB>;

/** What a commit of the staged rows is to do, and the report's counts and problems. */
export async function reportBase(
  q: Q,
  id: string,
  opts: { dry_run: boolean; continue_on_error: boolean },
  rows: number,
  valid: number,
) {
  const invalid = rows - valid;
  const allowed = invalid === 0 || opts.continue_on_error;
  const base = {
    id,
    dry_run: opts.dry_run,
    continue_on_error: opts.continue_on_error,
    rows,
    valid,
    invalid,
    would_insert: allowed ? valid : 0,
    ...(await problems(q, id)),
  };
  return { base, allowed };
}

/**
 * A commit that writes nothing (a dry run, or invalid rows without continue_on_error): the import stays open
 * with its staged rows and their counts; its report.
 */
export async function keptOpen(
  q: Q,
  base: Awaited<ReturnType<typeof reportBase>>['base'],
  now: Date,
): Promise<ImportReport> {
  await q
    .updateTable('user_imports')
    .set({ rows_total: base.rows, rows_invalid: base.invalid, updated_at: now })
    .where('id', '=', base.id)
    .execute();
  return {
    ...base,
    committed: false,
    reason: base.dry_run ? 'dry_run' : 'invalid_rows',
    inserted: 0,
    inserted_lines: 'none',
  };
}

const problem = (field: string, key: string) => JSON.stringify([{ field, key }]);

/**
 * What may have changed since the rows were checked, read again set-based over the whole import in one pass
 * of the staging table: logins and e-mails taken meanwhile (or held twice by batches that raced), roles,
 * groups and markers deleted. A row found so gets its first problem, in that order; the rows found are then
 * written in one update.
 */
export async function recheck(q: Q, importId: string, projectId: number): Promise<void> {
  const taken = (key: RawBuilder<unknown>) =>
    sql`exists (select 1 from accounts a where lower(a.login) = ${key})
      or exists (select 1 from accounts a where lower(a.email) = ${key})`;
  /** a row naming an id of this kind that is not (or no longer) in the project */
  const gone = (column: 'domain_ids' | 'marker_ids', table: 'domains' | 'markers') =>
    sql`exists (select 1 from jsonb_array_elements_text(${sql.ref(`w.${column}`)}) d(v)
      where not exists (select 1 from ${sql.table(table)} x where x.id = d.v::int and x.project_id = ${projectId}))`;
  /** a later line holding a login or e-mail an earlier one holds: the first line holding it keeps it */
  const duplicate = (field: 'login' | 'email') =>
    sql`jsonb_build_array(jsonb_build_object('field', ${field}::text, 'rule', 'duplicate_in_file',
      'params', jsonb_build_object('line', ${sql.ref(`w.first_${field}`)})))`;
  await sql`with w as (
      select r.line, r.errors, r.login_key, r.email_key, r.role_id, r.domain_ids, r.marker_ids,
        min(r.line) over (partition by r.login_key) as first_login,
        min(r.line) over (partition by r.email_key) as first_email
      from user_import_rows r where r.import_id = ${importId}
    ), p as (
      select w.line, case
        when ${taken(sql`w.login_key`)} then ${problem('login', 'login_already_used')}::jsonb
        when w.email_key is not null and (${taken(sql`w.email_key`)}) then ${problem('email', 'email_already_used')}::jsonb
        when w.login_key is not null and w.first_login < w.line then ${duplicate('login')}
        when w.email_key is not null and w.first_email < w.line then ${duplicate('email')}
        when not exists (select 1 from roles x where x.id = w.role_id and x.project_id = ${projectId})
          then ${problem('role', 'invalid_related_entity')}::jsonb
        when ${gone('domain_ids', 'domains')} then ${problem('domains', 'invalid_related_entity')}::jsonb
        when ${gone('marker_ids', 'markers')} then ${problem('markers', 'invalid_related_entity')}::jsonb
      end as errors
      from w where w.errors is null
    )
    update user_import_rows r set errors = p.errors from p
    where r.import_id = ${importId} and r.line = p.line and p.errors is not null`.execute(q);
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
 * Inserts every valid row of the import, set-based, in one statement that reads the staging table once: each
 * valid row, in file order, gets its account's and its user's ids from their sequences up front, so accounts,
 * users, their groups and markers are written from that one read with no join back (the ids follow the file).
 * Returns how many users went in.
 */
export async function insertValid(
  trx: Transaction<ImportDB>,
  importId: string,
  projectId: number,
  callerId: number,
): Promise<number> {
  // the trigram (GIN) indexes take new rows into their pending list; a larger list lets the whole
  // import in before it is merged (merged after the commit)
  await sql`set local gin_pending_list_limit = '64MB'`.execute(trx);
  return insertUsers(
    trx,
    await userSequences(trx),
    sql`(select r.login, r.email, r.password_hash, r.role_id, r.name, r.description, r.profile,
          r.elevator_access_disabled, r.is_group_admin, r.domain_ids, r.marker_ids
        from user_import_rows r where r.import_id = ${importId} and r.errors is null order by r.line) v`,
    projectId,
    callerId,
  );
}

/** The ids' sequences of accounts and users, named as literals: a constant for the planner, not a lookup per row. */
export async function userSequences(q: Q): Promise<{ a: string; u: string }> {
  return (
    await sql<{
      a: string;
      u: string;
    }>`select pg_get_serial_sequence('accounts', 'id') as a, pg_get_serial_sequence('users', 'id') as u`.execute(
      q,
    )
  ).rows[0]!;
}

/**
 * The rows of `source` (a relation named `v`: login, email, password_hash, role_id, name, description, profile,
 * elevator_access_disabled, is_group_admin, domain_ids, marker_ids; in the order their ids are to be taken)
 * into accounts, users, user_domains and user_markers, each row's ids from the sequences up front: one
 * materialized set every insert reads, nothing joined back. How many went in.
 */
export async function insertUsers(
  q: Q,
  seq: { a: string; u: string },
  source: RawBuilder<unknown>,
  projectId: number,
  callerId: number,
): Promise<number> {
  const r = await sql<{ n: number }>`
    with s as materialized (
      select nextval(${sql.lit(seq.a)}::regclass)::int as account_id,
        nextval(${sql.lit(seq.u)}::regclass)::int as user_id, v.*
      from ${source}
    ), a as (
      insert into accounts (id, login, email, password_hash, activated_at) overriding system value
      select s.account_id, s.login, s.email, s.password_hash, case when s.password_hash is null then null else now() end
      from s
    ), u as (
      insert into users (id, project_id, account_id, role_id, name, description, profile, elevator_access_disabled, is_group_admin, created_by) overriding system value
      select s.user_id, ${projectId}, s.account_id, s.role_id, s.name, s.description, s.profile, s.elevator_access_disabled, s.is_group_admin, ${callerId}
      from s
    ), d as (
      insert into user_domains (user_id, domain_id)
      select s.user_id, x.v::int from s cross join lateral jsonb_array_elements_text(s.domain_ids) x(v)
    ), m as (
      insert into user_markers (user_id, marker_id)
      select s.user_id, x.v::int from s cross join lateral jsonb_array_elements_text(s.marker_ids) x(v)
      where jsonb_array_length(s.marker_ids) > 0
    )
    select count(*)::int as n from s`.execute(q);
  return r.rows[0]?.n ?? 0;
}

/** After this many new users, the statistics and trigram indexes are refreshed. */
const VACUUM_AFTER = 1000;

/** The caller's own open or committed import, locked when `forUpdate`; 404 for anyone else's. */
export async function ownImport(q: Kysely<ImportDB>, c: FamilyCtx, id: string, forUpdate = false) {
  let query = q
    .selectFrom('user_imports')
    .selectAll()
    .where('id', '=', id)
    .where('project_id', '=', c.caller.projectId)
    .where('user_id', '=', c.caller.userId);
  if (forUpdate) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (!row) throw new AppError('item_not_found');
  return row;
}

/**
 * The upkeep after a users import that inserted `inserted` users (outside its transaction, once committed).
 */
export async function upkeep(app: ServerContext, inserted: number): Promise<void> {
  // after a bulk insert: fold the trigram (GIN) indexes' pending lists in and refresh the statistics — not
  // a VACUUM, which also read every page of the tables and of their GIN indexes again, the bulk of its time.
  // Each index and each table on a connection of its own, at once: one after the other they took 1.3 s at
  // 100,000 rows. The rows are in by then: upkeep that fails is told in the log, not as a failed commit.
  if (inserted < VACUUM_AFTER) return;
  const gin = await sql<{ index: string }>`select x.indexrelid::regclass::text as index from pg_index x
      join pg_class i on i.oid = x.indexrelid join pg_am am on am.oid = i.relam
      where am.amname = 'gin' and x.indrelid in ('accounts'::regclass, 'users'::regclass)`.execute(app.db);
  await Promise.all([
    ...gin.rows.map((g) => sql`select gin_clean_pending_list(${g.index}::regclass)`.execute(app.db)),
    ...['accounts', 'users', 'user_domains, user_markers'].map((t) =>
      sql`analyze ${sql.raw(t)}`.execute(app.db),
    ),
  ]).catch((err: unknown) =>
    app.log.warn({ err: String(err) }, 'the upkeep after a users import did not finish'),
  );
}

/**
 * `user.import_commit`: all or nothing in one transaction: the rows are read again against the database,
 * then — unless this is a dry run, or invalid rows stop it — every valid row goes in set-based, with one
 * audit event. A committed import keeps its report (a repeated commit answers it) and drops its rows.
 */
export async function commitImport(
  ctx: HandlerContext,
  c: FamilyCtx,
  id: string,
  opts: { continue_on_error: boolean; dry_run: boolean },
): Promise<ImportReport> {
  const args = { id, ...opts };
  const db = withImportTables(ctx.app.db);
  const result = await db.transaction().execute(async (trx) => {
    const imp = await ownImport(trx, c, args.id, true);
    if (imp.status === 'committed' && imp.report) return { report: imp.report, inserted: 0 };
    // no JIT: the estimates of the set-based statements over the staging table (a JSON list a row) pass
    // its threshold, and compiling them cost half a second of a commit of 100,000 rows, for plans that
    // read every row once. No ANALYZE of the staging table either: the statements read it whole, their
    // plans do not hang on its statistics
    await sql`set local jit = off`.execute(trx);
    // its sorts (the duplicates' windows, the lines' order) and the rows the insert reads once, in memory
    await sql`set local work_mem = '64MB'`.execute(trx);
    await recheck(trx, args.id, c.caller.projectId);
    // the groups' user caps, as user.create applies them: locked, then counted with the import's rows
    await importUserLimits(trx, args.id, args.continue_on_error || args.dry_run);
    const { rows, valid } = await counts(trx, args.id);
    // the staging table is unlogged: a crash since the rows were staged emptied it
    if (rows !== imp.rows_total) throw new AppError('cant_perform_action', { reason: 'import_lost' }, 409);
    const { base, allowed } = await reportBase(trx, args.id, args, rows, valid);
    if (args.dry_run || !allowed) {
      return { report: await keptOpen(trx, base, ctx.app.clock.now()), inserted: 0 };
    }
    const inserted = await insertValid(trx, args.id, c.caller.projectId, c.caller.userId);
    // a login or e-mail taken since the recheck in the other column (no index spans the two)
    await assertNoCrossIdentities(trx as unknown as Kysely<DB>, args.id);
    const report: ImportReport = {
      ...base,
      committed: true,
      reason: null,
      inserted,
      inserted_lines: 'all_valid',
    };
    await audit(trx as unknown as Kysely<DB>, {
      projectId: c.caller.projectId,
      userId: c.caller.userId,
      action: 'import',
      entity: 'user',
      entityId: args.id,
      ip: c.ip,
      data: {
        file_name: imp.file_name,
        rows,
        valid,
        invalid: base.invalid,
        inserted,
        continue_on_error: args.continue_on_error,
      },
    });
    await trx.deleteFrom('user_import_rows').where('import_id', '=', args.id).execute();
    await trx
      .updateTable('user_imports')
      .set({
        status: 'committed',
        report: JSON.stringify(report),
        rows_total: rows,
        rows_invalid: base.invalid,
        updated_at: ctx.app.clock.now(),
      })
      .where('id', '=', args.id)
      .execute();
    return { report, inserted };
  });
  await upkeep(ctx.app, result.inserted);
  return result.report;
}
