import type { Command } from 'commander';
import { execute, signedIn } from '../api';
import { ConfigStore } from '../config-store';
import type { CliContext } from '../context';
import { describeFailure } from '../errors';
import { ExitCode } from '../exit-codes';
import { t } from '../i18n';
import { offer } from '../meta';
import { printOutcome, type Outcome } from '../output';

/**
 * Ends the session on the server and forgets the current context. A session the server no longer knows
 * (401) or a context without tokens is still forgotten; with LINTEL_TOKEN only that token's session ends.
 */
export async function logout(ctx: CliContext): Promise<Outcome> {
  const config = new ConfigStore(ctx.env);
  const context = ctx.env.LINTEL_TOKEN ? null : (config.current()?.name ?? null);
  try {
    await execute(signedIn(ctx, config).api, 'session.logout', {});
  } catch (err) {
    if (!context || describeFailure(err).exitCode !== ExitCode.signedOut) throw err;
  }
  if (context) config.remove(context);
  return {
    data: { ok: true, context },
    text: context ? t('logout.done', { name: context }) : t('logout.done_token'),
  };
}

export function addLogout(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('logout')
    .description(t('logout.description'))
    .option('--json', t('options.json'))
    .action(async (opts: { json?: boolean }) => printOutcome(ctx, Boolean(opts.json), await logout(ctx)));
  offer(cmd, { titleKey: 'cli:logout.description', asks: [] });
}
