import type { Command } from 'commander';
import { RealtimeTopics } from '@lintel/core';
import { execute, signedIn } from '../api';
import type { CliContext } from '../context';
import { CliError } from '../errors';
import { ExitCode } from '../exit-codes';
import { t } from '../i18n';
import { watchEvents } from '../events/watch';

const collect = (v: string, prev: string[] | undefined) => [...(prev ?? []), v];

interface HistoryOptions {
  number?: string;
  limit?: string;
  cursor?: string;
  json?: boolean;
}

/**
 * `lintel calls history`: the call history, newest first — a page (`--limit`, default the spec's 50; the
 * next page's cursor on stderr), optionally only the calls from or to `--number`. `--json`: one row a line.
 */
async function history(ctx: CliContext, opts: HistoryOptions): Promise<void> {
  const { api } = signedIn(ctx);
  const limit = opts.limit === undefined ? 50 : Number(opts.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
    throw new CliError('invalid_limit', ExitCode.usage, { value: opts.limit });
  const page = await execute(api, 'call_history.list', {
    limit,
    ...(opts.cursor ? { cursor: opts.cursor } : {}),
    ...(opts.number
      ? {
          match: 'any' as const,
          filters: [
            { field: 'from_number', rule: 'equals' as const, value: opts.number },
            { field: 'to_number', rule: 'equals' as const, value: opts.number },
          ],
        }
      : {}),
  });
  for (const r of page.data)
    ctx.stdout.write(
      opts.json
        ? `${JSON.stringify(r)}\n`
        : `${r.created_at}  ${r.from.number} → ${r.to.number}  ${t(`calls.results.${r.status}`)}  ${t(
            `calls.directions.${r.direction}`,
          )}${r.reason ? ` (${t(`calls.reasons.${r.reason}`)})` : ''}${r.trunk ? `  ${r.trunk.name}` : ''}  ${r.duration} s\n`,
    );
  if (page.meta.next) ctx.stderr.write(`${t('calls.next_page', { cursor: page.meta.next })}\n`);
}

/**
 * `lintel calls watch`: the calls of numbers as they change (CallUpdated on `private-calls.{number}`), by
 * default the signed-in user's own number; `--json`: NDJSON, the server's messages as sent.
 */
async function watch(ctx: CliContext, opts: { number?: string[]; json?: boolean }): Promise<void> {
  const { api } = signedIn(ctx);
  let numbers = opts.number ?? [];
  if (!numbers.length) {
    const own = (await execute(api, 'profile.get', {})).profile.sip_number;
    if (!own) throw new CliError('calls_no_number', ExitCode.usage);
    numbers = [String(own)];
  }
  await watchEvents(ctx, {
    json: opts.json,
    topic: numbers.map(RealtimeTopics.calls),
    types: ['CallUpdated'],
  });
}

/** `lintel calls history|watch`, beside the generated `lintel calls list|stop`. */
export function addCalls(program: Command, ctx: CliContext): void {
  const calls = program.commands.find((c) => c.name() === 'calls') ?? program.command('calls');
  calls
    .command('history')
    .description(t('calls.history_description'))
    .option('--number <number>', t('calls.number_option'))
    .option('--limit <n>', t('calls.limit_option'))
    .option('--cursor <cursor>', t('calls.cursor_option'))
    .option('--json', t('events.json_option'))
    .action((opts: HistoryOptions) => history(ctx, opts));
  calls
    .command('watch')
    .description(t('calls.watch_description'))
    .option('--number <number>', t('calls.watch_number_option'), collect)
    .option('--json', t('events.json_option'))
    .action((opts: { number?: string[]; json?: boolean }) => watch(ctx, opts));
}
