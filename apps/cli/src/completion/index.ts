import { Argument, type Command } from 'commander';
import type { CliContext } from '../context';
import { CliError } from '../errors';
import { ExitCode } from '../exit-codes';
import { t } from '../i18n';
import { setHint } from '../meta';
import { complete, completionText } from './complete';
import { completionScript, SHELLS, type Shell } from './scripts';

/** `lintel completion bash|zsh|fish`: prints the script that completes lintel in that shell. */
export function addCompletion(program: Command, ctx: CliContext): void {
  program
    .command('completion')
    .description(t('completion.description'))
    .addArgument(setHint(new Argument('<shell>', t('completion.shell')), { values: SHELLS }))
    .addHelpText('after', `\n${t('completion.help')}`)
    .action((shell: string) => {
      if (!(SHELLS as readonly string[]).includes(shell))
        throw new CliError('unknown_shell', ExitCode.usage, { shell, shells: [...SHELLS] });
      ctx.stdout.write(completionScript(shell as Shell));
    });
}

/**
 * The hidden `lintel __complete -- WORD... CURRENT` the scripts call: the candidates for the last word, read
 * from the tree `program` (built without asking the server anything).
 */
export function runComplete(program: Command, ctx: CliContext, words: readonly string[]): number {
  const own = words[0] === '--' ? words.slice(1) : words;
  ctx.stdout.write(completionText(complete(program, own.length ? own : [''])));
  return ExitCode.ok;
}
