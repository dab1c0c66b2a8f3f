import path from 'node:path';
import {
  exportNamers,
  exportPages,
  exportRow,
  getCommand,
  userResource,
  type ExportNamers,
} from '@lintel/commands';
import { checkFilters, parseWhere, WhereSyntaxError, type Filter } from '@lintel/core';
import { execute } from '../api';
import type { CliContext } from '../context';
import { CliError } from '../errors';
import { ExitCode } from '../exit-codes';
import { evaluateGates } from '../families/gates';
import type { RunSession } from '../families/session';
import { printOutcome } from '../output';
import { t } from '../i18n';
import { createProgress } from './progress';
import { formatOf, type FileFormat } from './readers';
import { openWriter } from './writers';

// the namers and the rows are shared with the console's export (packages/commands, user.export.ts)
export { groupNamer, exportRow } from '@lintel/commands';

export interface ExportOptions {
  where?: string;
  format?: string;
  output?: string;
  refs?: string;
  json?: boolean;
}

function readWhere(text: string | undefined): { filters: Filter[]; match: 'all' | 'any' } {
  if (!text) return { filters: [], match: 'all' };
  let where: ReturnType<typeof parseWhere>;
  try {
    where = parseWhere(text);
  } catch (err) {
    if (err instanceof WhereSyntaxError) throw new CliError('bad_where', ExitCode.usage, { at: err.at });
    throw err;
  }
  const problems = checkFilters(where.filters, userResource.filterable);
  if (problems.length)
    throw new CliError('check_fields_data', ExitCode.usage, { fields: problems }, 'errors');
  return where;
}

/**
 * `lintel users export`: pages through `user.list` (1,000 rows a page) and writes each page as it comes.
 * Pages follow the ids (`id above` the last one) when the filter allows one more condition, so rows added
 * or removed meanwhile do not shift the pages; else by page number (`exportPages`, shared with the console).
 */
export async function exportUsers(ctx: CliContext, session: RunSession, opts: ExportOptions): Promise<void> {
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
  const { filters, match } = readWhere(opts.where);

  const { api } = session.signedIn();
  const gate = evaluateGates(getCommand('user.list'), await session.profile());
  if (!gate.can) {
    if (gate.reason === 'permission')
      throw new CliError(
        'method_prohibited',
        ExitCode.refused,
        { command: 'user.list', permissions: [...gate.permissions] },
        'errors',
      );
    throw new CliError('feature_not_licensed', ExitCode.refused, {
      command: 'user.list',
      licence: gate.licence,
    });
  }

  let namers: ExportNamers = exportNamers('id');
  if (refs === 'name') {
    // the groups' names and addresses, to tell which name is unique; without the right to list them, names
    const groups = await execute(api, 'group.full', {})
      .then((r) => r.data)
      .catch(() => null);
    namers = exportNamers('name', groups);
  }

  let writer: Awaited<ReturnType<typeof openWriter>>;
  try {
    writer = await openWriter(format, file, ctx.stdout);
  } catch (err) {
    throw new CliError('file_unwritable', ExitCode.usage, { file, detail: (err as Error).message });
  }
  const progress = await createProgress(ctx, file ? path.basename(file) : t('bulk.export.stdout'), {
    lines: false,
    phase: 'exporting',
  });
  let exported = 0;
  try {
    const pages = exportPages((args) => execute(api, 'user.list', args), { filters, match });
    for await (const { users, total } of pages) {
      await writer.write(users.map((u) => exportRow(u, namers)));
      exported += users.length;
      progress.update({ rows: exported, fraction: total ? Math.min(1, exported / total) : 1 });
    }
    await writer.close();
  } finally {
    await progress.finish();
  }
  if (file)
    printOutcome(ctx, Boolean(opts.json), {
      data: { exported, file, format },
      text: t('bulk.export.done', { count: exported.toLocaleString('en'), file }),
    });
}
