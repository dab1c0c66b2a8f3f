import path from 'node:path';
import {
  getCommand,
  ImportReport,
  MAX_IMPORT_BATCH,
  type ImportProgress,
  type ImportRow,
} from '@lintel/commands';
import { ApiError, type ApiClient } from '@lintel/core';
import { execute } from '../api';
import type { CliContext } from '../context';
import { CliError } from '../errors';
import { ExitCode } from '../exit-codes';
import { evaluateGates } from '../families/gates';
import type { RunSession } from '../families/session';
import { printOutcome } from '../output';
import { createProgress } from './progress';
import { formatOf, openRows } from './readers';
import { reportText } from './report';

export interface ImportOptions {
  dryRun?: boolean;
  continueOnError?: boolean;
  batch?: string;
  format?: string;
  json?: boolean;
}

export const DEFAULT_BATCH = 500;
/** A batch stays under this many bytes of JSON, well below the server's 1 MiB body limit. */
const MAX_BATCH_BYTES = 768 * 1024;
/**
 * Batches under way at once: the server checks one while the next travels and the file is read. Lines
 * repeated across batches that were under way together are still found: the commit checks the whole import.
 */
const IN_FLIGHT = 2;
/** Network failures and timeouts are tried again this often: a batch sent twice replaces its lines. */
const RETRIES = 2;

function batchSize(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_BATCH;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > MAX_IMPORT_BATCH)
    throw new CliError('bad_batch', ExitCode.usage, { value: raw, max: MAX_IMPORT_BATCH });
  return n;
}

const transient = (err: unknown) =>
  err instanceof ApiError &&
  (err.code === 'network_error' || err.code === 'timeout' || err.status === 502 || err.status === 503);

async function withRetry<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      if (attempt >= RETRIES || !transient(err)) throw err;
      await new Promise((r) => setTimeout(r, 500 * (attempt + 1)));
    }
  }
}

/**
 * `lintel users import FILE`: reads the file row by row, sends batches (two under way while the next is
 * read), then commits: all or nothing, or every valid row with --continue-on-error, or nothing with
 * --dry-run. An import that is not committed is cancelled on the server. Exit 0 when every row went in (or
 * a dry run found none invalid), 1 when rows were rejected, 2 for a bad file or option.
 */
export async function importUsers(
  ctx: CliContext,
  session: RunSession,
  file: string,
  opts: ImportOptions,
): Promise<void> {
  const size = batchSize(opts.batch);
  const format = formatOf(file, opts.format);
  const source = openRows(file, format);
  const { api } = session.signedIn();
  const gate = evaluateGates(getCommand('user.import_start'), await session.profile());
  if (!gate.can)
    throw gate.reason === 'permission'
      ? new CliError(
          'method_prohibited',
          ExitCode.refused,
          { command: 'user.import_start', permissions: [...gate.permissions] },
          'errors',
        )
      : new CliError('feature_not_licensed', ExitCode.refused, {
          command: 'user.import_start',
          licence: gate.licence,
        });

  // the header is checked before anything is sent
  const first = await source.rows.next();
  const name = path.basename(file);
  const { id } = await execute(api, 'user.import_start', { file_name: name.slice(0, 255) });
  let settled = false;
  const interrupted = new AbortController();
  const onSigint = () => interrupted.abort();
  process.once('SIGINT', onSigint);
  const progress = await createProgress(ctx, name, { lines: !opts.json, phase: 'reading' });
  try {
    let batch: ImportRow[] = [];
    let bytes = 0;
    const inFlight: Promise<ImportProgress>[] = [];
    let sent = 0;
    let staged = 0;
    /** waits for the oldest batch under way (replies may come in any order: the counts only grow) */
    const settleOne = async () => {
      const reply = await inFlight.shift()!;
      staged = Math.max(staged, reply.rows);
      progress.update({
        rows: staged,
        invalid: reply.invalid,
        fraction: source.size ? Math.min(1, source.position() / source.size) : null,
      });
    };
    const flush = async () => {
      if (!batch.length) return;
      while (inFlight.length >= IN_FLIGHT) await settleOne();
      if (interrupted.signal.aborted) throw new CliError('cancelled', ExitCode.cancelled);
      const rows = batch;
      batch = [];
      bytes = 0;
      sent += rows.length;
      const call = withRetry(() => getCommand('user.import_rows').run({ api }, { id, rows }));
      // a rejection is handled when it is awaited
      call.catch(() => undefined);
      inFlight.push(call);
    };
    let next = first;
    while (!next.done) {
      const { line, cells } = next.value;
      const row = { line, ...cells } as ImportRow;
      const weight = JSON.stringify(row).length + 1;
      if (batch.length >= size || (batch.length && bytes + weight > MAX_BATCH_BYTES)) await flush();
      batch.push(row);
      bytes += weight;
      next = await source.rows.next();
    }
    await flush();
    while (inFlight.length) await settleOne();
    if (interrupted.signal.aborted) throw new CliError('cancelled', ExitCode.cancelled);

    progress.update({ phase: 'committing', rows: sent, fraction: 1 });
    const report = ImportReport.parse(
      await withRetry(() =>
        getCommand('user.import_commit').run(
          { api },
          { id, continue_on_error: Boolean(opts.continueOnError), dry_run: Boolean(opts.dryRun) },
        ),
      ),
    );
    settled = report.committed;
    await progress.finish();
    // a dry run or a refused import is not kept on the server
    if (!report.committed) await cancel(api, id).then(() => (settled = true));
    printOutcome(ctx, Boolean(opts.json), {
      data: report,
      text: reportText(report, name, ctx.stdout.columns || 100),
    });
    if (report.invalid)
      throw new CliError('rows_rejected', ExitCode.error, { count: report.invalid, file: name });
  } finally {
    process.removeListener('SIGINT', onSigint);
    await progress.finish();
    if (!settled) await cancel(api, id);
    await source.rows.return(undefined);
  }
}

async function cancel(api: ApiClient, id: string): Promise<void> {
  try {
    await getCommand('user.import_cancel').run({ api }, { id });
  } catch {
    // the server drops it after a day anyway
  }
}
