import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { UserImportColumns, type ImportRowError } from '@lintel/commands';
import { hashPassword } from '../../auth/crypto';
import { AppError } from '../../errors';
import { familyCtx } from '../../engine/family';
import type { SomeHandlers } from '../../pipeline/handler';
import { checkDuplicates, checkRows, type CheckedRow } from './user-import.check';
import { commitImport, ownImport } from './user-import.commit';
import { withImportTables } from './user-import.tables';
import { importStream, stagedRow } from './user-import.stream';
import { importStreamCommitted } from './user-import.stream-commit';

/** Imports idle this long are removed with their rows (at the next import's start). */
const IMPORT_TTL = '1 day';
/** argon2id runs on libuv's pool (4 threads by default): more at once only queues. */
const HASH_CONCURRENCY = 4;

async function hashAll(rows: CheckedRow[]): Promise<Map<number, string>> {
  const todo = rows.filter((r) => !r.problems.length && r.values?.password);
  const out = new Map<number, string>();
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(HASH_CONCURRENCY, todo.length) }, async () => {
      while (next < todo.length) {
        const r = todo[next++]!;
        out.set(r.line, await hashPassword(r.values!.password!));
      }
    }),
  );
  return out;
}

export const userImportHandlers = {
  'user.import_start': async (ctx, args) => {
    const c = await familyCtx(ctx);
    const db = withImportTables(ctx.app.db);
    // imports left open (or committed) for a day go, with their staging rows
    await sql`delete from user_imports where updated_at < now() - ${IMPORT_TTL}::interval`.execute(db);
    const id = randomUUID();
    await db
      .insertInto('user_imports')
      .values({
        id,
        project_id: c.caller.projectId,
        user_id: c.caller.userId,
        file_name: args.file_name ?? '',
      })
      .execute();
    return { id, columns: [...UserImportColumns] };
  },

  /**
   * Checks a batch and stages it with its problems. Everything is read first; the short transaction at the
   * end replaces lines sent before (a batch sent again after a lost reply) and updates the counts.
   */
  'user.import_rows': async (ctx, args) => {
    const c = await familyCtx(ctx);
    const db = withImportTables(ctx.app.db);
    const before = await ownImport(db, c, args.id);
    if (before.status !== 'open')
      throw new AppError('cant_perform_action', { reason: 'import_committed' }, 409);
    // a line twice in one batch is the client's mistake, not the file's
    const lineSeen = new Set<number>();
    let again = -1;
    for (const [i, r] of args.rows.entries()) {
      if (lineSeen.has(r.line)) {
        again = i;
        break;
      }
      lineSeen.add(r.line);
    }
    if (again >= 0)
      throw new AppError('check_fields_data', {
        fields: [
          {
            field: `rows.${again}.line`,
            rule: 'duplicate_in_file',
            params: { line: args.rows[again]!.line },
          },
        ],
      });

    const checked = await checkRows(ctx.app.db, c.caller, args.rows);
    await checkDuplicates(db, args.id, checked);
    const hashes = await hashAll(checked);
    const lines = checked.map((r) => r.line);
    const newInvalid = checked.filter((r) => r.problems.length).length;

    const totals = await db.transaction().execute(async (trx) => {
      const current = await ownImport(trx, c, args.id, true);
      if (current.status !== 'open')
        throw new AppError('cant_perform_action', { reason: 'import_committed' }, 409);
      // lines sent before (a batch sent again after a lost reply) are replaced
      const replace = sql<{ invalid: boolean }>`delete from user_import_rows where import_id = ${args.id}
        and line = any(array(select (jsonb_array_elements_text(${JSON.stringify(lines)}::jsonb))::int))
        returning errors is not null as invalid`;
      const replaced = (await replace.execute(trx)).rows;
      // one JSON parameter instead of sixteen per row: PostgreSQL parses one value, not thousands
      const staged = checked.map((r) => stagedRow(args.id, r, hashes.get(r.line) ?? null));
      const insert = sql`insert into user_import_rows (import_id, line, login, login_key, email, email_key, name,
          description, role_id, domain_ids, marker_ids, profile, elevator_access_disabled, is_group_admin, password_hash, errors)
        select x.import_id, x.line, x.login, x.login_key, x.email, x.email_key, x.name, x.description, x.role_id,
          x.domain_ids, x.marker_ids, x.profile, x.elevator_access_disabled, x.is_group_admin, x.password_hash, x.errors
        from jsonb_to_recordset(${JSON.stringify(staged)}::jsonb) as x(import_id uuid, line int, login text, login_key text, email text,
          email_key text, name text, description text, role_id int, domain_ids jsonb, marker_ids jsonb, profile jsonb,
          elevator_access_disabled boolean, is_group_admin boolean, password_hash text, errors jsonb)`;
      await insert.execute(trx);
      const rows_total = current.rows_total + checked.length - replaced.length;
      const rows_invalid = current.rows_invalid + newInvalid - replaced.filter((r) => r.invalid).length;
      await trx
        .updateTable('user_imports')
        .set({ rows_total, rows_invalid, updated_at: ctx.app.clock.now() })
        .where('id', '=', args.id)
        .execute();
      return { rows_total, rows_invalid };
    });
    const errors: ImportRowError[] = checked.flatMap((r) => r.problems.map((p) => ({ line: r.line, ...p })));
    return {
      id: args.id,
      rows: totals.rows_total,
      valid: totals.rows_total - totals.rows_invalid,
      invalid: totals.rows_invalid,
      errors,
    };
  },

  /** The rows as one NDJSON stream, checked and staged batch by batch (user-import.stream.ts). */
  'user.import_stream': async (ctx, args) =>
    args.commit
      ? importStreamCommitted(ctx, await familyCtx(ctx), args.id, args.batch, hashAll, args.commit)
      : importStream(ctx, await familyCtx(ctx), args.id, args.batch, hashAll),

  /**
   * All or nothing in one transaction: the rows are read again against the database, then — unless this is
   * a dry run, or invalid rows stop it — every valid row goes in set-based, with one audit event. A
   * committed import keeps its report (a repeated commit answers it) and drops its rows.
   */
  'user.import_commit': async (ctx, args) => commitImport(ctx, await familyCtx(ctx), args.id, args),

  'user.import_cancel': async (ctx, args) => {
    const c = await familyCtx(ctx);
    const db = withImportTables(ctx.app.db);
    await ownImport(db, c, args.id);
    await db.deleteFrom('user_imports').where('id', '=', args.id).execute();
    return { ok: true as const };
  },
} satisfies SomeHandlers;
