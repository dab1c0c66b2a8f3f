import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { getCommand, ImportReport, MAX_IMPORT_BATCH, userImportStream } from '@lintel/commands';
import { ApiError, type ApiClient } from '@lintel/core';
import { execute } from '../api';
import type { CliContext } from '../context';
import { CliError } from '../errors';
import { ExitCode } from '../exit-codes';
import { evaluateGates } from '../families/gates';
import type { RunSession } from '../families/session';
import { printOutcome } from '../output';
import { commitPhase, createProgress } from './progress';
import { formatOf, openRows } from './readers';
import { reportText } from './report';

export interface ImportOptions {
  dryRun?: boolean;
  continueOnError?: boolean;
  batch?: string;
  format?: string;
  json?: boolean;
}

export const DEFAULT_BATCH = 1000;
/** The stream is written in pieces of about this many bytes of NDJSON. */
export const CHUNK_BYTES = 64 * 1024;
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
 * `lintel users import FILE`: reads the file row by row and sends it as one NDJSON stream (user.import_stream,
 * checked and staged by the server in batches of --batch rows as it arrives) that commits too, in the same
 * request: all or nothing, or every valid row with --continue-on-error, or nothing with --dry-run. An import
 * that is not committed is cancelled on the server. Exit 0 when every row went in (or a dry run found none
 * invalid), 1 when rows were rejected, 2 for a bad file or option.
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
    // the rows go as one NDJSON stream: read, sent and checked as they come, with backpressure all the way
    // (the reader is pulled only as fast as the server takes the body); nothing is held but a chunk
    let sent = 0;
    let next = first;
    const chunks = async function* () {
      while (!next.done) {
        if (interrupted.signal.aborted) throw new CliError('cancelled', ExitCode.cancelled);
        let chunk = '';
        while (!next.done && chunk.length < CHUNK_BYTES) {
          const { line, cells } = next.value;
          chunk += JSON.stringify({ line, ...cells }) + '\n';
          sent++;
          next = await source.rows.next();
        }
        progress.update({
          rows: sent,
          invalid: 0,
          fraction: source.size ? Math.min(1, source.position() / source.size) : null,
        });
        yield chunk;
      }
    };
    // no decision is asked between the stream and the commit: the stream commits too, in one request and one
    // transaction on the server (a server that does not know `commit` answers no report: then it is committed
    // as a second request)
    const options = { continue_on_error: Boolean(opts.continueOnError), dry_run: Boolean(opts.dryRun) };
    const staged = await streamRows(api, id, chunks(), size, options);
    progress.update({ rows: staged.rows, invalid: staged.invalid, fraction: 1 });
    if (interrupted.signal.aborted) throw new CliError('cancelled', ExitCode.cancelled);

    progress.update(commitPhase(staged, opts));
    const report =
      staged.report ??
      ImportReport.parse(
        await withRetry(() => getCommand('user.import_commit').run({ api }, { id, ...options })),
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

/**
 * Posts the stream to `user.import_stream` with `commit`: one request, its body the file's rows as NDJSON,
 * piped with node:http so that backpressure holds and nothing sent is kept (fetch with a ReadableStream body
 * kept every chunk it sent: the CLI's memory grew with the file).
 */
async function streamRows(
  api: ApiClient,
  id: string,
  chunks: AsyncIterable<string>,
  batch: number,
  commit: { continue_on_error: boolean; dry_run: boolean },
) {
  return userImportStream.result.parse(
    await postStream(api, `users/import/${id}/stream`, { batch, commit: JSON.stringify(commit) }, chunks),
  );
}

/**
 * Posts an NDJSON stream to a route of the API (the users' import stream, the identifiers' import attempt)
 * and answers its parsed JSON reply; a refusal is the ApiError it names.
 */
export async function postStream(
  api: ApiClient,
  route: string,
  query: Record<string, string | number>,
  chunks: AsyncIterable<string>,
): Promise<unknown> {
  const url = new URL(api.url(route, query));
  const token = api.store.get()?.token;
  const request = (url.protocol === 'https:' ? https : http).request(url, {
    method: 'POST',
    headers: {
      accept: 'application/json',
      'content-type': 'application/x-ndjson',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
  });
  const response = new Promise<http.IncomingMessage>((resolve, reject) => {
    request.once('response', resolve);
    request.once('error', reject);
  });
  response.catch(() => undefined);
  // a server refusing the body early answers before it is all sent: its answer counts, not the broken pipe
  const sent = await pipeline(Readable.from(chunks), request).then(
    () => null,
    (err: unknown) => err,
  );
  if (sent instanceof CliError) throw sent;
  let res: http.IncomingMessage;
  let text = '';
  try {
    res = await response;
    for await (const c of res) text += String(c);
  } catch (err) {
    throw new ApiError(0, 'network_error', 'network_error', {
      cause: String((err as Error)?.message ?? err),
    });
  }
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = text;
  }
  const status = res.statusCode ?? 0;
  if (status < 200 || status >= 300) {
    const e = (parsed && typeof parsed === 'object' ? parsed : {}) as {
      message?: string;
      error_code?: string;
      data?: Record<string, unknown> | null;
    };
    throw new ApiError(
      status,
      e.message ?? 'internal_error',
      e.error_code ?? 'internal_error',
      e.data ?? null,
    );
  }
  return parsed;
}

async function cancel(api: ApiClient, id: string): Promise<void> {
  try {
    await getCommand('user.import_cancel').run({ api }, { id });
  } catch {
    // the server drops it after a day anyway
  }
}
