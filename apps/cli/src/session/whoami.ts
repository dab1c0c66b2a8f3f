import type { Command } from 'commander';
import { execute, signedIn } from '../api';
import type { CliContext } from '../context';
import { t } from '../i18n';
import { offer } from '../meta';
import { keyValues, printOutcome, type Outcome } from '../output';

/** The signed-in user as the server sees them; `--json` prints the profile as the API returns it. */
export async function whoami(ctx: CliContext): Promise<Outcome> {
  const { api, server } = signedIn(ctx);
  const profile = await execute(api, 'profile.get', {});
  return {
    data: profile,
    text: keyValues([
      [t('whoami.login'), profile.login],
      [t('whoami.name'), profile.name],
      [t('whoami.role'), profile.role.name],
      [t('whoami.project'), `${profile.project.name} (${profile.project.uid})`],
      [t('whoami.server'), server],
    ]),
  };
}

export function addWhoami(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('whoami')
    .description(t('whoami.description'))
    .option('--json', t('options.json'))
    .action(async (opts: { json?: boolean }) => printOutcome(ctx, Boolean(opts.json), await whoami(ctx)));
  offer(cmd, { titleKey: 'cli:whoami.description', asks: [] });
}
