import type { CliContext } from './context';
import { describeFailure } from './errors';
import type { ExitCode } from './exit-codes';

/** What a verb hands back: data for `--json`, text for a person. */
export interface Outcome {
  data: unknown;
  text: string;
}

export function printOutcome(ctx: CliContext, json: boolean, outcome: Outcome): void {
  ctx.stdout.write(json ? `${JSON.stringify(outcome.data, null, 2)}\n` : `${outcome.text}\n`);
}

/**
 * Errors go to stderr: the reply-shaped `{message, error_code, data}` with `--json` (the message in words),
 * else the translated text. `raw` (`lintel api`): an error reply's body exactly as the server sent it.
 */
export function printFailure(ctx: CliContext, json: boolean, err: unknown, raw = false): ExitCode {
  const failure = describeFailure(err);
  const body = raw ? (failure.raw ?? failure.body) : failure.body;
  ctx.stderr.write(json ? `${JSON.stringify(body)}\n` : `${failure.text}\n`);
  return failure.exitCode;
}

/** Label and value pairs, labels padded to one column. */
export function keyValues(rows: ReadonlyArray<readonly [string, string]>): string {
  const width = Math.max(...rows.map(([label]) => label.length));
  return rows.map(([label, value]) => `${label.padEnd(width)}  ${value}`).join('\n');
}
