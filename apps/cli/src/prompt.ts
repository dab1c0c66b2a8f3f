import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import type { CliContext } from './context';
import { CliError } from './errors';
import { ExitCode } from './exit-codes';
import { t } from './i18n';

/** Questions need a person at a terminal; CI=true or a pipe on either side means none. */
export function canPrompt(ctx: CliContext): boolean {
  const ci = ctx.env.CI && ctx.env.CI !== 'false' && ctx.env.CI !== '0';
  return Boolean(ctx.stdin.isTTY && ctx.stderr.isTTY && !ci);
}

/**
 * Asks on stderr (stdout stays for results) and reads a line. `hidden` echoes nothing (passwords).
 * Ctrl-C or Ctrl-D ends the command as cancelled.
 */
export function ask(
  ctx: CliContext,
  question: string,
  opts: { hidden?: boolean; default?: string } = {},
): Promise<string> {
  let muted = false;
  const output = new Writable({
    write(chunk, encoding, done) {
      if (!muted) ctx.stderr.write(chunk, encoding);
      done();
    },
  });
  const rl = createInterface({ input: ctx.stdin, output, terminal: true });
  const label = opts.default ? `${question} [${opts.default}]: ` : `${question}: `;
  return new Promise((resolve, reject) => {
    let answered = false;
    rl.on('SIGINT', () => rl.close());
    rl.on('close', () => {
      if (opts.hidden) ctx.stderr.write('\n');
      if (!answered) {
        if (!opts.hidden) ctx.stderr.write('\n');
        reject(new CliError('cancelled', ExitCode.cancelled));
      }
    });
    rl.question(label, (answer) => {
      answered = true;
      rl.close();
      resolve(opts.hidden ? answer : answer.trim() || opts.default || '');
    });
    muted = Boolean(opts.hidden);
  });
}

/** A numbered list; returns the index picked. */
export async function choose(ctx: CliContext, question: string, items: readonly string[]): Promise<number> {
  items.forEach((item, i) => ctx.stderr.write(`  ${i + 1}) ${item}\n`));
  for (;;) {
    const n = Number(await ask(ctx, t('prompt.choose', { question, count: items.length })));
    if (Number.isInteger(n) && n >= 1 && n <= items.length) return n - 1;
    ctx.stderr.write(`${t('prompt.choose_again', { count: items.length })}\n`);
  }
}

/** All of stdin, without the one line end a pipe or heredoc adds. */
export async function readStdin(ctx: CliContext): Promise<string> {
  let text = '';
  ctx.stdin.setEncoding('utf8');
  for await (const chunk of ctx.stdin) text += chunk;
  return text.replace(/\r?\n$/, '');
}
