import path from 'node:path';
import {
  exportNamers,
  exportRow,
  flatCells,
  MULTI_VALUE_SEPARATOR,
  recordColumns,
  UserExportColumns,
  type ExportNamers,
  type StreamCommand,
  type User,
  type UserExportRow,
} from '@lintel/commands';
import { checkFilters, fieldErrors, parseWhere, WhereSyntaxError, type Filter } from '@lintel/core';
import { execute } from '../api';
import type { CliContext } from '../context';
import { CliError } from '../errors';
import { ExitCode } from '../exit-codes';
import { evaluateGates } from '../families/gates';
import type { RunSession } from '../families/session';
import type { Family } from '../families/words';
import { printOutcome } from '../output';
import { t } from '../i18n';
import { createProgress } from './progress';
import { formatOf, type FileFormat } from './readers';
import { openWriter, type FileRowWriter, type RowShape } from './writers';

// the namers and the rows are shared with the console's export (packages/commands, user.export.ts)
export { groupNamer, exportRow } from '@lintel/commands';

export interface ExportOptions {
  where?: string;
  search?: string;
  sort?: string;
  /** journals: the time range */
  from?: string;
  to?: string;
  format?: string;
  output?: string;
  /** users: references by id or by name */
  refs?: string;
  json?: boolean;
}

function readWhere(
  text: string | undefined,
  family: Family,
): { filters: Filter[]; match: 'all' | 'any' } | null {
  if (!text) return null;
  let where: ReturnType<typeof parseWhere>;
  try {
    where = parseWhere(text);
  } catch (err) {
    if (err instanceof WhereSyntaxError) throw new CliError('bad_where', ExitCode.usage, { at: err.at });
    throw err;
  }
  const filterable = family.resource?.filterable;
  const problems = filterable ? checkFilters(where.filters, filterable) : [];
  if (problems.length)
    throw new CliError('check_fields_data', ExitCode.usage, { fields: problems }, 'errors');
  return where;
}

const flat = (v: UserExportRow[keyof UserExportRow]) =>
  Array.isArray(v) ? v.join(MULTI_VALUE_SEPARATOR) : v;

/** Users are written in the import's columns, references as `--refs` says, so a file imports back. */
const userShape = (namers: ExportNamers): RowShape<User> => ({
  columns: UserExportColumns,
  cells: (u) => {
    const row = exportRow(u, namers);
    return UserExportColumns.map((c) => flat(row[c]));
  },
  object: (u) => exportRow(u, namers),
  sheet: 'users',
});

/** Every other family: its record's fields; JSON keeps the records as the API gives them. */
const recordShape = (cmd: StreamCommand, sheet: string): RowShape<Record<string, unknown>> => {
  const columns = recordColumns(cmd.stream.item);
  return { columns, cells: (r) => flatCells(r, columns), object: (r) => r, sheet };
};

/**
 * `lintel <nouns> export`: one streamed request to `<noun>.export` (the list's rows: its filter, search and
 * sort, the caller's scope), each batch written as it arrives — CSV, XLSX (streaming writer), JSON or NDJSON —
 * so memory stays flat however many rows there are. Users are written in the import's columns.
 */
export async function exportFamily(
  ctx: CliContext,
  session: RunSession,
  family: Family,
  cmd: StreamCommand,
  opts: ExportOptions,
): Promise<void> {
  const users = family.noun === 'user';
  const refs = opts.refs ?? 'id';
  if (refs !== 'id' && refs !== 'name')
    throw new CliError(
      'check_fields_data',
      ExitCode.usage,
      { fields: [{ field: 'refs', rule: 'one_of', params: { values: ['id', 'name'] } }] },
      'errors',
    );
  const file = opts.output ?? null;
  const format: FileFormat = opts.format ? formatOf(file ?? '-', opts.format) : file ? formatOf(file) : 'csv';
  if (!file && opts.json) throw new CliError('json_needs_output', ExitCode.usage);
  if (!file && format === 'xlsx' && ctx.stdout.isTTY)
    throw new CliError('binary_to_terminal', ExitCode.usage);
  const where = readWhere(opts.where, family);
  const args: Record<string, unknown> = {
    ...(where ? { filters: where.filters, match: where.match } : {}),
    ...(opts.search !== undefined ? { search: opts.search } : {}),
    ...(opts.sort !== undefined ? { sort: opts.sort } : {}),
    ...(opts.from !== undefined ? { from: opts.from } : {}),
    ...(opts.to !== undefined ? { to: opts.to } : {}),
  };
  const checked = cmd.args.safeParse(args);
  if (!checked.success)
    throw new CliError(
      'check_fields_data',
      ExitCode.usage,
      { fields: fieldErrors(checked.error, args) },
      'errors',
    );

  const { api } = session.signedIn();
  const gate = evaluateGates(cmd, await session.profile());
  if (!gate.can) {
    if (gate.reason === 'permission')
      throw new CliError(
        'method_prohibited',
        ExitCode.refused,
        { command: cmd.id, permissions: [...gate.permissions] },
        'errors',
      );
    throw new CliError('feature_not_licensed', ExitCode.refused, { command: cmd.id, licence: gate.licence });
  }

  let namers: ExportNamers = exportNamers('id');
  if (users && refs === 'name') {
    // the groups' names and addresses, to tell which name is unique; without the right to list them, names
    const groups = await execute(api, 'group.full', {})
      .then((r) => r.data)
      .catch(() => null);
    namers = exportNamers('name', groups);
  }
  const shape = (users ? userShape(namers) : recordShape(cmd, family.word)) as RowShape<unknown>;

  let writer: FileRowWriter<unknown>;
  try {
    writer = await openWriter(format, file, ctx.stdout, shape);
  } catch (err) {
    throw new CliError('file_unwritable', ExitCode.usage, { file, detail: (err as Error).message });
  }
  const progress = await createProgress(ctx, file ? path.basename(file) : t('bulk.export.stdout'), {
    lines: false,
    phase: 'exporting',
  });
  let exported = 0;
  try {
    // no total: the export counts nothing; the rows come as the server reads them
    progress.update({ fraction: null });
    for await (const batch of cmd.rows({ api }, args)) {
      await writer.write(batch);
      exported += batch.length;
      progress.update({ rows: exported });
    }
    progress.update({ fraction: 1 });
    await writer.close();
  } catch (err) {
    // the reply was cut off (or the file could not be written): no partial file is left behind
    await writer.abort();
    throw err;
  } finally {
    await progress.finish();
  }
  if (file)
    printOutcome(ctx, Boolean(opts.json), {
      data: { exported, file, format },
      text: users
        ? t('bulk.export.done', { count: exported.toLocaleString('en'), file })
        : t('bulk.export.done_rows', { count: exported.toLocaleString('en'), file }),
    });
}
