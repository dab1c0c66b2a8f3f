/**
 * The two-step import of identifiers (spec part 1 §4; issue 21 item 6) on the generic bulk-import machinery
 * (engine/bulk-import.ts: the NDJSON stream read in batches, the staging written by COPY on PostgreSQL): the
 * attempt checks every row like a create (value by type in the caller's format, the owner a user of the
 * project, the licence of plates) and marks duplicates of the project's identifiers and within the file;
 * the continue commits in one transaction with the action chosen for duplicates.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { parseIdentifierImportRow, type ImportRowError } from '@lintel/commands';
import {
  GeneratedValueTypes,
  identifierValueError,
  newIdentifierValue,
  parseIdentifierValue,
  evaluateGate,
  type IdentifierFormatCode,
} from '@lintel/core';
import { AppError } from '../../errors';
import { ndjsonBatches, openStager, streamedBody, type StagingTable } from '../../engine/bulk-import';
import { familyCtx } from '../../engine/family';
import { licenceFacts } from '../../licensing/licence';
import type { AllHandlers, HandlerContext } from '../../pipeline/handler';

const BATCH = 2000;
const REPORTED = 1000;
/** Attempts idle this long are removed with their rows (at the next attempt's start), as users' imports are. */
const IMPORT_TTL = '1 day';

/** migrations/0055_identifier_import.sql: the staging table, as the generic stager writes it. */
const staging: StagingTable = {
  table: 'identifier_import_rows',
  columns: [
    ['import_id', 'uuid'],
    ['line', 'int'],
    ['type', 'text'],
    ['value', 'text'],
    ['name', 'text'],
    ['owner', 'int'],
    ['description', 'text'],
    ['duplicate_of', 'int'],
    ['errors', 'jsonb'],
  ],
};

type Problem = Omit<ImportRowError, 'line'>;

export const identifierImportHandlers = {
  'identifier.import_attempt': async (ctx: HandlerContext) => {
    const stream = streamedBody(ctx.body);
    const c = await familyCtx(ctx);
    const db = ctx.app.db;
    const projectId = c.caller.projectId;
    // attempts left open for a day (stopped by duplicates, or never continued) go, with their staged rows
    await sql`delete from identifier_imports where created_at < now() - ${IMPORT_TTL}::interval`.execute(db);
    const id = randomUUID();
    await sql`insert into identifier_imports (id, project_id, user_id) values (${id}, ${projectId}, ${c.caller.userId})`.execute(
      db,
    );
    const me = await sql<{
      format: string | null;
    }>`select profile->>'identifier_format' as format from users where id = ${c.caller.userId}`.execute(db);
    const format: IdentifierFormatCode = me.rows[0]?.format === 'hex' ? 'hex' : 'dec';
    const facts = await licenceFacts(
      db,
      projectId,
      await c.caller.domains(),
      ['license_plate'],
      ctx.app.clock.now(),
    );
    const plates = evaluateGate({ licence: ['license_plate'] }, { permissions: [], ...facts }).can;
    const seen = new Map<string, number>();
    const errors: ImportRowError[] = [];
    let errorsTotal = 0;
    // every rejected line, as ranges of consecutive lines (the lines come in order)
    const rejected: Array<[number, number]> = [];
    const duplicateLines: number[] = [];
    let rows = 0;
    let invalid = 0;
    let duplicates = 0;
    const stager = await openStager(ctx.app, staging);
    // one batch is staged (COPY on its own connection) while the next is read and checked
    let staged: Promise<void> = Promise.resolve();
    try {
      let line = 0;
      for await (const batch of ndjsonBatches(stream, BATCH)) {
        const checked = batch.map(({ value: raw }) => {
          line++;
          const problems: Problem[] = [];
          const parsed = parseIdentifierImportRow(raw);
          if (!parsed.success) {
            for (const issue of parsed.error.issues)
              problems.push({ field: issue.path.join('.') || 'row', rule: issue.code });
            return { line, problems, row: null, value: null, owner: null as number | null };
          }
          const r = parsed.data;
          const typed = r.value === undefined ? '' : String(r.value);
          let value: string | null = null;
          if (!typed.trim() && GeneratedValueTypes.includes(r.type)) value = newIdentifierValue();
          else {
            const v = parseIdentifierValue(r.type, typed, format);
            if (v.ok) value = v.value;
            else problems.push(identifierValueError(r.type, v.rule));
          }
          if (r.type === 'license_plate' && !plates)
            problems.push({
              field: 'type',
              rule: 'feature_not_licensed',
              params: { feature: 'license_plate' },
            });
          const owner =
            r.owner === undefined || r.owner === null || r.owner === ''
              ? null
              : /^\d+$/.test(String(r.owner))
                ? Number(r.owner)
                : NaN;
          if (Number.isNaN(owner)) problems.push({ field: 'owner', rule: 'invalid_related_entity' });
          if (value !== null) {
            const key = `${r.type}:${value}`;
            const first = seen.get(key);
            if (first !== undefined)
              problems.push({ field: 'value', rule: 'duplicate_in_file', params: { line: first } });
            else seen.set(key, line);
          }
          return { line, problems, row: r, value, owner: Number.isNaN(owner) ? null : owner };
        });
        // owners: users of the project
        const owners = [...new Set(checked.flatMap((r) => (r.owner !== null ? [r.owner] : [])))];
        const known = new Set(
          owners.length
            ? (
                await sql<{
                  id: number;
                }>`select id from users where project_id = ${projectId} and id in (${sql.join(owners)})`.execute(
                  db,
                )
              ).rows.map((u) => u.id)
            : [],
        );
        for (const r of checked)
          if (r.owner !== null && !known.has(r.owner))
            r.problems.push({ field: 'owner', rule: 'invalid_related_entity', params: { ids: [r.owner] } });
        // duplicates of the project's identifiers, by type and value
        const keys = checked.filter((r) => r.row && r.value !== null && !r.problems.length);
        const existing = new Map<string, number>();
        if (keys.length) {
          const found = await sql<{ id: number; type: string; value: string }>`select i.id, i.type, i.value
            from identifiers i join jsonb_to_recordset(${JSON.stringify(keys.map((r) => ({ type: r.row!.type, value: r.value })))}::jsonb) as k(type text, value text)
              on i.type = k.type and i.value = k.value
            where i.project_id = ${projectId}`.execute(db);
          for (const f of found.rows) existing.set(`${f.type}:${f.value}`, f.id);
        }
        const rowsOut = checked.map((r) => {
          const dup = r.row && r.value !== null ? (existing.get(`${r.row.type}:${r.value}`) ?? null) : null;
          rows++;
          if (r.problems.length) {
            invalid++;
            errorsTotal += r.problems.length;
            const last = rejected[rejected.length - 1];
            if (last && last[1] === r.line - 1) last[1] = r.line;
            else rejected.push([r.line, r.line]);
            for (const p of r.problems) if (errors.length < REPORTED) errors.push({ line: r.line, ...p });
          } else if (dup !== null) {
            duplicates++;
            if (duplicateLines.length < REPORTED) duplicateLines.push(r.line);
          }
          return {
            import_id: id,
            line: r.line,
            type: r.row?.type ?? null,
            value: r.value,
            name: r.row?.name ?? '',
            owner: r.owner,
            description: r.row?.description ?? '',
            duplicate_of: r.problems.length ? null : dup,
            errors: r.problems.length ? r.problems : null,
          };
        });
        await staged;
        staged = stager.write(rowsOut);
        staged.catch(() => undefined);
      }
      await staged;
    } finally {
      await staged.catch(() => undefined);
      await stager.close();
    }
    await sql`update identifier_imports set rows_total = ${rows}, rows_invalid = ${invalid}, rows_duplicate = ${duplicates} where id = ${id}`.execute(
      db,
    );
    return {
      filepath: id,
      rows,
      valid: rows - invalid,
      invalid,
      duplicates,
      errors,
      errors_total: errorsTotal,
      rejected_lines: rejected,
      duplicate_lines: duplicateLines,
    };
  },

  'identifier.import_continue': async (
    ctx: HandlerContext,
    args: { filepath: string; action: 'skip' | 'overwrite' | 'stop' },
  ) => {
    const c = await familyCtx(ctx);
    const now = ctx.app.clock.now().toISOString();
    return ctx.app.db.transaction().execute(async (trx) => {
      const imp = (
        await sql<{
          status: string;
          rows_total: number;
          rows_invalid: number;
          rows_duplicate: number;
        }>`select status, rows_total, rows_invalid, rows_duplicate from identifier_imports
          where id = ${args.filepath} and project_id = ${c.caller.projectId} and user_id = ${c.caller.userId} for update`.execute(
          trx,
        )
      ).rows[0];
      if (!imp) throw new AppError('item_not_found');
      if (imp.status !== 'open')
        throw new AppError('cant_perform_action', { reason: 'import_committed' }, 409);
      // the staging table is unlogged: a crash since the attempt emptied it
      const staged = await sql<{ n: number }>`select count(*)::int as n from identifier_import_rows
        where import_id = ${args.filepath}`.execute(trx);
      if (staged.rows[0]?.n !== imp.rows_total)
        throw new AppError('cant_perform_action', { reason: 'import_lost' }, 409);
      const skippedAll = { committed: false, created: 0, updated: 0, skipped: 0, invalid: imp.rows_invalid };
      if (args.action === 'stop' && imp.rows_duplicate > 0) return skippedAll;
      let updated = 0;
      if (args.action === 'overwrite') {
        const u = await sql`update identifiers i set name = r.name, owner = r.owner, owner_type = 'user',
            guest_type = null, description = r.description, updated_at = ${now}
          from identifier_import_rows r
          where r.import_id = ${args.filepath} and r.errors is null and r.duplicate_of = i.id
            and i.project_id = ${c.caller.projectId}`.execute(trx);
        updated = Number(u.numAffectedRows ?? 0);
      }
      // the sort by line in memory; no JIT (the estimates over the staging table pass its threshold)
      await sql`set local work_mem = '64MB'`.execute(trx);
      await sql`set local jit = off`.execute(trx);
      const insert = (onConflict: boolean) =>
        sql`insert into identifiers (project_id, name, type, value, owner, description, created_by)
        select ${c.caller.projectId}, r.name, r.type, r.value, r.owner, r.description, ${c.caller.userId}
        from identifier_import_rows r
        where r.import_id = ${args.filepath} and r.errors is null and r.duplicate_of is null
        order by r.line
        ${onConflict ? sql`on conflict (project_id, type, value) do nothing` : sql``}`.execute(trx);
      // A plain insert first: ON CONFLICT checks the unique index before each row as well as in it, a
      // quarter of the insert's time. An identifier made between the attempt and now with the same type and
      // value breaks it (nothing of it stays, back to the savepoint), and then the insert skips those.
      await sql`savepoint import_insert`.execute(trx);
      let ins: Awaited<ReturnType<typeof insert>>;
      try {
        ins = await insert(false);
        await sql`release savepoint import_insert`.execute(trx);
      } catch (err) {
        if ((err as { code?: string }).code !== '23505') throw err;
        await sql`rollback to savepoint import_insert`.execute(trx);
        ins = await insert(true);
      }
      const created = Number(ins.numAffectedRows ?? 0);
      await sql`update identifier_imports set status = 'committed' where id = ${args.filepath}`.execute(trx);
      await sql`delete from identifier_import_rows where import_id = ${args.filepath}`.execute(trx);
      return {
        committed: true,
        created,
        updated,
        skipped: imp.rows_duplicate - updated,
        invalid: imp.rows_invalid,
      };
    });
  },
} satisfies Partial<AllHandlers>;
