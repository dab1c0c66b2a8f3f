import {
  IMPORT_STREAM_BATCH,
  parseImportRow,
  type ImportProgress,
  type ImportRow,
  type ImportRowError,
} from '@lintel/commands';
import { AppError } from '../../errors';
import { ndjsonBatches, openStager, streamedBody, type StagingTable } from '../../engine/bulk-import';
import type { FamilyCtx } from '../../engine/family';
import type { HandlerContext } from '../../pipeline/handler';
import { checkDuplicates, checkRows, type CheckedRow } from './user-import.check';
import { REPORT_ERRORS } from './user-import.commit';
import { withImportTables } from './user-import.tables';
import { sql } from 'kysely';

/** migrations/0004_user_import.sql: the users' staging table, as the generic stager writes it. */
export const userStaging: StagingTable = {
  table: 'user_import_rows',
  columns: [
    ['import_id', 'uuid'],
    ['line', 'int'],
    ['login', 'text'],
    ['login_key', 'text'],
    ['email', 'text'],
    ['email_key', 'text'],
    ['name', 'text'],
    ['description', 'text'],
    ['role_id', 'int'],
    ['domain_ids', 'jsonb'],
    ['marker_ids', 'jsonb'],
    ['profile', 'jsonb'],
    ['elevator_access_disabled', 'boolean'],
    ['is_group_admin', 'boolean'],
    ['password_hash', 'text'],
    ['errors', 'jsonb'],
  ],
};

/** A checked row as the staging table keeps it: what it will insert, or its problems. */
export function stagedRow(importId: string, r: CheckedRow, hash: string | null): Record<string, unknown> {
  const v = !r.problems.length ? r.values : null;
  return {
    import_id: importId,
    line: r.line,
    login: v?.login ?? null,
    login_key: r.login_key,
    email: v?.email ?? null,
    email_key: r.email_key,
    name: v?.name ?? null,
    description: v?.description ?? '',
    role_id: v?.role_id ?? null,
    domain_ids: v?.domain_ids ?? [],
    marker_ids: v?.marker_ids ?? [],
    profile: v?.profile ?? {},
    elevator_access_disabled: v?.elevator_access_disabled ?? false,
    is_group_admin: v?.is_group_admin ?? false,
    password_hash: hash,
    errors: r.problems.length ? r.problems : null,
  };
}

/**
 * A batch of the stream's lines as rows, their lines growing from after `previous`; a line that is no row,
 * or does not grow, is a 422 naming it.
 */
export function rowsOf(batch: readonly { n: number; value: unknown }[], previous: number): ImportRow[] {
  const rows: ImportRow[] = [];
  for (const { n, value } of batch) {
    const parsed = parseImportRow(value);
    if (!parsed.success || parsed.data.line <= previous)
      throw new AppError('check_fields_data', {
        fields: [
          parsed.success
            ? { field: `body.${n}.line`, rule: 'duplicate_in_file', params: { line: parsed.data.line } }
            : { field: `body.${n}`, rule: 'invalid_type', params: { expected: 'row' } },
        ],
      });
    previous = parsed.data.line;
    rows.push(parsed.data);
  }
  return rows;
}

/**
 * `user.import_stream`: reads the body line by line, checks each batch like `user.import_rows` does (the
 * same checks, the same hashing), stages it through the generic stager and moves the import's counts on.
 * Lines must grow through the stream and start after the lines staged before, so nothing is staged twice.
 */
export async function importStream(
  ctx: HandlerContext,
  c: FamilyCtx,
  importId: string,
  batchSize: number | undefined,
  hashAll: (rows: CheckedRow[]) => Promise<Map<number, string>>,
): Promise<ImportProgress> {
  const stream = streamedBody(ctx.body);
  const db = withImportTables(ctx.app.db);
  const own = async () => {
    const imp = await db
      .selectFrom('user_imports')
      .selectAll()
      .where('id', '=', importId)
      .where('project_id', '=', c.caller.projectId)
      .where('user_id', '=', c.caller.userId)
      .executeTakeFirst();
    if (!imp) throw new AppError('item_not_found');
    if (imp.status !== 'open') throw new AppError('cant_perform_action', { reason: 'import_committed' }, 409);
    return imp;
  };
  await own();
  const last = await sql<{ line: number | null }>`select max(line) as line from user_import_rows
    where import_id = ${importId}`.execute(db);
  let previous = last.rows[0]?.line ?? 0;
  const errors: ImportRowError[] = [];
  const stager = await openStager(ctx.app, userStaging);
  const stage = async (checked: CheckedRow[], hashes: Map<number, string>) => {
    await own();
    await stager.write(checked.map((r) => stagedRow(importId, r, hashes.get(r.line) ?? null)));
    const invalid = checked.filter((r) => r.problems.length).length;
    await db
      .updateTable('user_imports')
      .set((eb) => ({
        rows_total: eb('rows_total', '+', checked.length),
        rows_invalid: eb('rows_invalid', '+', invalid),
        updated_at: ctx.app.clock.now(),
      }))
      .where('id', '=', importId)
      .execute();
  };
  // one batch is staged while the next is read and checked against the database; the next one's check
  // for duplicates inside the import waits for it (it reads the staging table)
  let staging: Promise<void> = Promise.resolve();
  try {
    for await (const batch of ndjsonBatches(stream, batchSize ?? IMPORT_STREAM_BATCH)) {
      const rows = rowsOf(batch, previous);
      previous = rows[rows.length - 1]!.line;
      const checking = checkRows(ctx.app.db, c.caller, rows);
      checking.catch(() => undefined);
      await staging;
      const checked = await checking;
      await checkDuplicates(db, importId, checked);
      const hashes = await hashAll(checked);
      for (const r of checked) {
        if (errors.length >= REPORT_ERRORS) break;
        for (const p of r.problems) errors.push({ line: r.line, ...p });
      }
      staging = stage(checked, hashes);
      staging.catch(() => undefined);
    }
    await staging;
  } finally {
    await staging.catch(() => undefined);
    await stager.close();
  }
  const imp = await own();
  return {
    id: importId,
    rows: imp.rows_total,
    valid: imp.rows_total - imp.rows_invalid,
    invalid: imp.rows_invalid,
    errors: errors.slice(0, REPORT_ERRORS),
  };
}
