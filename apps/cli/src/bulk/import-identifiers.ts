import path from 'node:path';
import { getCommand, IdentifierImportAttempt, IdentifierImportColumns } from '@lintel/commands';
import type { CliContext } from '../context';
import { CliError } from '../errors';
import { ExitCode } from '../exit-codes';
import { evaluateGates } from '../families/gates';
import type { RunSession } from '../families/session';
import { t } from '../i18n';
import { printOutcome } from '../output';
import { CHUNK_BYTES, postStream } from './import';
import { createProgress } from './progress';
import { formatOf, openRows } from './readers';

export interface IdentifierImportOptions {
  onDuplicate?: 'skip' | 'overwrite' | 'stop';
  format?: string;
  json?: boolean;
}

/**
 * `lintel identifiers import FILE`: the file's rows as one NDJSON stream to `identifier.import_attempt` (the
 * server checks and stages each), the per-row report, then `identifier.import_continue` with the action for
 * duplicates (`--on-duplicate`, default skip). Exit 0 when every row went in, 1 when rows were rejected or
 * duplicates stopped the import, 2 for a bad file or option.
 */
export async function importIdentifiers(
  ctx: CliContext,
  session: RunSession,
  file: string,
  opts: IdentifierImportOptions,
): Promise<void> {
  const source = openRows(file, formatOf(file, opts.format), {
    known: IdentifierImportColumns,
    required: ['type'],
  });
  const { api } = session.signedIn();
  const gate = evaluateGates(getCommand('identifier.import_attempt'), await session.profile());
  if (!gate.can)
    throw new CliError(
      gate.reason === 'permission' ? 'method_prohibited' : 'feature_not_licensed',
      ExitCode.refused,
      { command: 'identifier.import_attempt' },
      gate.reason === 'permission' ? 'errors' : undefined,
    );
  const name = path.basename(file);
  const progress = await createProgress(ctx, name, { lines: !opts.json, phase: 'reading' });
  try {
    let sent = 0;
    const chunks = async function* () {
      let chunk = '';
      for await (const { cells } of { [Symbol.asyncIterator]: () => source.rows }) {
        chunk += JSON.stringify(cells) + '\n';
        sent++;
        if (chunk.length >= CHUNK_BYTES) {
          progress.update({
            rows: sent,
            invalid: 0,
            fraction: source.size ? source.position() / source.size : null,
          });
          yield chunk;
          chunk = '';
        }
      }
      if (chunk) yield chunk;
    };
    const attempt = IdentifierImportAttempt.parse(
      await postStream(api, 'identifiers/import/attempt', {}, chunks()),
    );
    progress.update({ rows: attempt.rows, invalid: attempt.invalid, fraction: 1 });
    const action = opts.onDuplicate ?? 'skip';
    const outcome = await getCommand('identifier.import_continue').run(
      { api },
      { filepath: attempt.filepath, action },
    );
    await progress.finish();
    const lines = [
      t('bulk.identifiers.summary', {
        file: name,
        rows: attempt.rows,
        created: outcome.created,
        updated: outcome.updated,
        skipped: outcome.skipped,
        invalid: attempt.invalid,
      }),
      ...attempt.errors.map((e) =>
        t('bulk.identifiers.row', { line: e.line, field: e.field, rule: e.rule ?? e.key ?? '' }),
      ),
      // the problems not listed one by one: every rejected line still named, as ranges
      ...(attempt.errors_total > attempt.errors.length
        ? [
            t('bulk.identifiers.more', {
              count: attempt.errors_total - attempt.errors.length,
              lines: attempt.rejected_lines.map(([a, b]) => (a === b ? String(a) : `${a}-${b}`)).join(', '),
            }),
          ]
        : []),
      ...(outcome.committed ? [] : [t('bulk.identifiers.stopped', { count: attempt.duplicates })]),
    ];
    printOutcome(ctx, Boolean(opts.json), { data: { ...attempt, ...outcome }, text: lines.join('\n') });
    if (attempt.invalid || !outcome.committed)
      throw new CliError('rows_rejected', ExitCode.error, {
        count: attempt.invalid + (outcome.committed ? 0 : attempt.duplicates),
        file: name,
      });
  } finally {
    await progress.finish();
    await source.rows.return(undefined);
  }
}
