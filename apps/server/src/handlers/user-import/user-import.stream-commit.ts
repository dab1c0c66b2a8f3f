/**
 * The one-request users import (`user.import_stream` with `commit`, docs/decisions.md "Imports against their
 * floor: the one-request import"): the stream is checked batch by batch as without `commit`, and each batch's
 * valid rows go into accounts, users, user_domains and user_markers inside ONE transaction this request holds
 * on one connection, while the next batch is read and checked on the pool's other connections. Every row is
 * still staged (COPY, unlogged, on the stager's own connection) for the report, which is built as
 * `user.import_commit` builds it. The transaction commits at the end, or rolls back: a dry run, invalid rows
 * without `continue_on_error`, any failure — and a server killed mid-stream leaves nothing of the file.
 */
import { sql, type ControlledTransaction, type RawBuilder } from 'kysely';
import {
  IMPORT_STREAM_BATCH,
  type ImportProgress,
  type ImportReport,
  type ImportRowError,
} from '@lintel/commands';
import { audit } from '../../audit/audit';
import type { DB } from '../../db/schema';
import { AppError } from '../../errors';
import { assertNoCrossIdentities } from '../../auth/identities';
import { arrayLiteral, ndjsonBatches, openStager, streamedBody } from '../../engine/bulk-import';
import type { FamilyCtx } from '../../engine/family';
import { importUserLimits } from '../../licensing/limits';
import type { HandlerContext } from '../../pipeline/handler';
import { checkRows, type CheckedRow } from './user-import.check';
import {
  commitImport,
  counts,
  keptOpen,
  insertUsers,
  ownImport,
  REPORT_ERRORS,
  reportBase,
  upkeep,
  userSequences,
} from './user-import.commit';
import { withImportTables, type ImportDB } from './user-import.tables';
import { importStream, rowsOf, stagedRow, userStaging } from './user-import.stream';
import type { Kysely } from 'kysely';

type Options = { continue_on_error: boolean; dry_run: boolean };
type Reply = ImportProgress & { report: ImportReport };

/**
 * Duplicates inside the file from memory: the first line holding a login or an e-mail (valid or not) keeps
 * it, a later line holding it is `duplicate_in_file {line}` — what `checkDuplicates` finds in the staging
 * table, which the rows this transaction inserted cannot be read from by the checks' connections.
 */
export function inFileDuplicates(
  first: { login: Map<string, number>; email: Map<string, number> },
  rows: readonly CheckedRow[],
): void {
  for (const r of rows) {
    for (const field of ['login', 'email'] as const) {
      const key = field === 'login' ? r.login_key : r.email_key;
      if (!key) continue;
      const held = first[field].get(key);
      if (held === undefined) first[field].set(key, r.line);
      else r.problems.push({ field, rule: 'duplicate_in_file', params: { line: held } });
    }
  }
}

/** What a foreign key of the insert names, as the catalogue's entity. */
const RELATED: Record<string, string> = {
  users_role_id_fkey: 'roles',
  user_domains_domain_id_fkey: 'domains',
  user_markers_marker_id_fkey: 'markers',
};

/**
 * What changed between a batch's check and its insert, as the catalogue's error: a login or e-mail taken by
 * someone else (a unique index), a role, group or marker deleted (a foreign key: `invalid_related_entity`
 * with its id, as `user.create` would answer). The transaction rolls back; nothing of the file is in.
 */
function changedMeanwhile(err: unknown): unknown {
  const e = err as { code?: string; constraint?: string; detail?: string };
  if (e?.code === '23505') {
    if (e.constraint === 'accounts_login_key') return new AppError('login_already_used', { field: 'login' });
    if (e.constraint === 'accounts_email_key') return new AppError('email_already_used', { field: 'email' });
  }
  const entity = e?.code === '23503' ? RELATED[e.constraint ?? ''] : undefined;
  if (entity) {
    const id = /\)=\((\d+)\)/.exec(e.detail ?? '')?.[1];
    return new AppError('invalid_related_entity', { entity, ids: id ? [Number(id)] : [] });
  }
  return err;
}

/** A batch's valid rows as `insertUsers` reads them: one array literal a column (`arrayLiteral`), built ahead. */
type BatchSource = RawBuilder<unknown> | null;

function batchSource(staged: readonly Record<string, unknown>[]): BatchSource {
  const valid = staged.filter((r) => r.errors === null);
  if (!valid.length) return null;
  const col = (f: (r: Record<string, unknown>) => string | number | boolean | null) =>
    arrayLiteral(valid.map(f));
  const text = (key: string) => col((r) => (r[key] as string | null) ?? null);
  const json = (key: string) => col((r) => JSON.stringify(r[key]));
  return sql`(select v.login, v.email, v.password_hash, v.role_id, v.name, v.description, v.profile::jsonb as profile,
      v.elevator_access_disabled, v.is_group_admin, v.domain_ids::jsonb as domain_ids, v.marker_ids::jsonb as marker_ids
    from unnest(${text('login')}::text[], ${text('email')}::text[], ${text('password_hash')}::text[],
      ${col((r) => r.role_id as number)}::int[], ${text('name')}::text[], ${text('description')}::text[],
      ${json('profile')}::text[], ${col((r) => r.elevator_access_disabled as boolean)}::boolean[],
      ${col((r) => r.is_group_admin as boolean)}::boolean[], ${json('domain_ids')}::text[], ${json('marker_ids')}::text[])
    as v(login, email, password_hash, role_id, name, description, profile, elevator_access_disabled, is_group_admin,
      domain_ids, marker_ids)) v`;
}

/** The valid rows of a batch into the tables, in the transaction: ids from the sequences, as insertValid takes them. */
async function insertBatch(
  trx: Kysely<ImportDB>,
  seq: { a: string; u: string },
  source: BatchSource,
  projectId: number,
  callerId: number,
): Promise<number> {
  if (!source) return 0;
  return insertUsers(trx, seq, source, projectId, callerId).catch((err: unknown) => {
    throw changedMeanwhile(err);
  });
}

/**
 * `user.import_stream` with `commit`. The import must be the caller's, open, and hold no rows yet (a stream
 * sent before is committed with `user.import_commit`). On PGlite (one connection: a transaction held across
 * the stream would hold the whole database while the body arrives) the stream is staged as without
 * `commit` and then committed by `user.import_commit`'s own code, in this request.
 */
export async function importStreamCommitted(
  ctx: HandlerContext,
  c: FamilyCtx,
  importId: string,
  batchSize: number | undefined,
  hashAll: (rows: CheckedRow[]) => Promise<Map<number, string>>,
  opts: Options,
): Promise<Reply> {
  const stream = streamedBody(ctx.body);
  const db = withImportTables(ctx.app.db);
  const fresh = async (q: Kysely<ImportDB>, lock: boolean) => {
    if (lock) await sql`select 1 from user_imports where id = ${importId} for no key update`.execute(q);
    const imp = await ownImport(q, c, importId);
    if (imp.status !== 'open') throw new AppError('cant_perform_action', { reason: 'import_committed' }, 409);
    const staged = await sql<{ n: number }>`select count(*)::int as n from
      (select 1 from user_import_rows where import_id = ${importId} limit 1) s`.execute(q);
    if (imp.rows_total > 0 || staged.rows[0]!.n > 0)
      throw new AppError('cant_perform_action', { reason: 'import_not_empty' }, 409);
    return imp;
  };
  await fresh(db, false);
  if (!(ctx.app.database.kind === 'postgres' && ctx.app.config.databaseUrl)) {
    const progress = await importStream(ctx, c, importId, batchSize, hashAll);
    return { ...progress, report: await commitImport(ctx, c, importId, opts) };
  }

  const trx: ControlledTransaction<ImportDB> = await db.startTransaction().execute();
  let open = true;
  try {
    // the import, locked against a commit of it by another request (which waits, then finds it committed);
    // not against the staging's COPY, whose foreign key takes a key-share lock
    const imp = await fresh(trx, true);
    // as the commit: no JIT, sorts in memory, a GIN pending list that takes the whole import
    await sql`set local jit = off`.execute(trx);
    await sql`set local work_mem = '64MB'`.execute(trx);
    await sql`set local gin_pending_list_limit = '64MB'`.execute(trx);
    const seq = await userSequences(trx);

    const first = { login: new Map<string, number>(), email: new Map<string, number>() };
    const errors: ImportRowError[] = [];
    // the groups the valid rows name, for the groups' caps at the end (not read back from a million staged rows)
    const groups = new Set<number>();
    let rows = 0;
    let invalid = 0;
    let inserted = 0;
    let analyzed = false;
    let previous = 0;
    const stager = await openStager(ctx.app, userStaging);
    // one batch is staged and inserted (each on its own connection) while the next is read, checked and
    // encoded (its COPY text and its insert's arrays: the insert's connection, the import's slowest part,
    // waits for nothing the server could have done before)
    let writing: Promise<void> = Promise.resolve();
    const write = async (stage: () => Promise<void>, source: BatchSource) => {
      const [, n] = await Promise.all([
        stage(),
        insertBatch(trx, seq, source, c.caller.projectId, c.caller.userId),
      ]);
      inserted += n;
      // the foreign keys' checks (users → accounts, memberships and markers → users) are planned once a
      // connection and kept: planned while the tables were small, they read every row for each row checked
      // (a batch of 1,000 took 0.5–2 s by 20,000 users). Statistics taken once rows are in (in this
      // transaction: ANALYZE counts its own rows) plan them again, by index
      if (n && !analyzed) {
        analyzed = true;
        await sql`analyze accounts (id), users (id)`.execute(trx);
      }
    };
    try {
      for await (const batch of ndjsonBatches(stream, batchSize ?? IMPORT_STREAM_BATCH)) {
        const parsed = rowsOf(batch, previous);
        previous = parsed[parsed.length - 1]!.line;
        const checked = await checkRows(ctx.app.db, c.caller, parsed);
        inFileDuplicates(first, checked);
        const hashes = await hashAll(checked);
        for (const r of checked) {
          rows++;
          if (r.problems.length) invalid++;
          else for (const g of r.values?.domain_ids ?? []) groups.add(g);
          if (errors.length < REPORT_ERRORS) for (const p of r.problems) errors.push({ line: r.line, ...p });
        }
        const staged = checked.map((r) => stagedRow(importId, r, hashes.get(r.line) ?? null));
        const stage = stager.prepare(staged);
        const source = batchSource(staged);
        await writing;
        writing = write(stage, source);
        writing.catch(() => undefined);
      }
      await writing;
    } finally {
      await writing.catch(() => undefined);
      await stager.close();
    }
    const progress: ImportProgress = {
      id: importId,
      rows,
      valid: rows - invalid,
      invalid,
      errors: errors.slice(0, REPORT_ERRORS),
    };

    // the groups' user caps, as the commit applies them; the rows are in already, so an excess row goes out
    const takenOut = await importUserLimits(
      trx,
      importId,
      opts.continue_on_error || opts.dry_run,
      true,
      groups,
    );
    const { rows: staged, valid } = await counts(trx, importId);
    if (staged !== rows) throw new AppError('cant_perform_action', { reason: 'import_lost' }, 409);
    const { base, allowed } = await reportBase(trx, importId, opts, staged, valid);
    if (opts.dry_run || !allowed) {
      await trx.rollback().execute();
      open = false;
      // the import stays open with its staged rows, as after a stream and a commit that wrote nothing
      return { ...progress, report: await keptOpen(db, base, ctx.app.clock.now()) };
    }
    // every staged valid row went in, and only those (the caps took their excess out again)
    if (inserted - takenOut !== valid)
      throw new Error(`the one-request import holds ${inserted - takenOut} of ${valid} valid rows`);
    // a login or e-mail taken meanwhile in the other column (no index spans the two): the namespace locked
    await assertNoCrossIdentities(trx as unknown as Kysely<DB>, importId);
    const report: ImportReport = {
      ...base,
      committed: true,
      reason: null,
      inserted: valid,
      inserted_lines: 'all_valid',
    };
    await audit(trx as unknown as Kysely<DB>, {
      projectId: c.caller.projectId,
      userId: c.caller.userId,
      action: 'import',
      entity: 'user',
      entityId: importId,
      ip: c.ip,
      data: {
        file_name: imp.file_name,
        rows: staged,
        valid,
        invalid: base.invalid,
        inserted: valid,
        continue_on_error: opts.continue_on_error,
      },
    });
    await trx.deleteFrom('user_import_rows').where('import_id', '=', importId).execute();
    await trx
      .updateTable('user_imports')
      .set({
        status: 'committed',
        report: JSON.stringify(report),
        rows_total: staged,
        rows_invalid: base.invalid,
        updated_at: ctx.app.clock.now(),
      })
      .where('id', '=', importId)
      .execute();
    await trx.commit().execute();
    open = false;
    await upkeep(ctx.app, valid);
    return { ...progress, report };
  } finally {
    if (open)
      await trx
        .rollback()
        .execute()
        .catch(() => undefined);
  }
}
