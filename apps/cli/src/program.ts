import { Command, CommanderError, Help } from 'commander';
import pkg from '../package.json';
import { addExports, addIdentifierBulk, addUserBulk } from './bulk';
import { addCompletion, runComplete } from './completion';
import type { CliContext } from './context';
import { addContext } from './contexts/context';
import { ExitCode } from './exit-codes';
import { RunSession } from './families/session';
import { addFamilies, familyWords, focusOf, type FamilyOptions } from './families/tree';
import { t } from './i18n';
import { printFailure } from './output';
import { isClosedPipe } from './pipe';
import { addApi } from './raw/api';
import { addLicenceTools } from './licences';
import { addBackupTools } from './backups';
import { addIdentifierFiles } from './identifiers';
import { addLogTools } from './logs';
import { addLogin } from './session/login';
import { addLogout } from './session/logout';
import { addEvents } from './events/watch';
import { addCalls } from './calls/calls';
import { addDeviceSearch } from './devices/search';
import { addWhoami } from './session/whoami';

/** The verbs, each in its own file; every one that prints a result declares `--json`. */
const verbs = [addLogin, addLogout, addWhoami, addContext];

export function createProgram(
  ctx: CliContext,
  families: FamilyOptions = { session: new RunSession(ctx), profile: null },
): Command {
  const titles: Record<string, string> = {
    'Usage:': t('help.usage'),
    'Arguments:': t('help.arguments'),
    'Options:': t('help.options'),
    'Commands:': t('help.commands'),
    'Global Options:': t('help.global_options'),
  };
  const placeholders = (usage: string) =>
    usage
      .replace('[options]', t('help.options_placeholder'))
      .replace('[command]', t('help.command_placeholder'));
  const program = new Command('lintel')
    .description(t('program.description'))
    .version(pkg.version, '-V, --version', t('program.version'))
    .helpOption('-h, --help', t('program.help'))
    .helpCommand('help [command]', t('program.help_command'))
    .configureHelp({
      styleTitle: (title) => titles[title] ?? title,
      commandUsage: (cmd) => placeholders(Help.prototype.commandUsage.call(new Help(), cmd)),
      subcommandTerm: (cmd) => placeholders(Help.prototype.subcommandTerm.call(new Help(), cmd)),
    })
    // errors are translated and printed by `run`, not by commander
    .configureOutput({
      writeOut: (s) => ctx.stdout.write(s),
      writeErr: (s) => ctx.stderr.write(s),
      outputError: () => undefined,
    })
    .exitOverride()
    .addHelpText(
      'after',
      `\n${t('help.epilogue', { exitCodes: ExitCode })}\n\n${t('help.epilogue_palette')}`,
    );
  for (const add of verbs) add(program, ctx);
  addFamilies(program, ctx, families);
  // `lintel users import`, handwritten, beside the generated verbs of `users`
  addUserBulk(program, ctx, families);
  addIdentifierBulk(program, ctx, families);
  // `lintel identifiers qr|wallet-pass ID`: a QR identifier's image and wallet pass written to a file
  addIdentifierFiles(program, ctx, families);
  // `lintel <nouns> export` for every family and journal with an export
  addExports(program, ctx, families);
  // `lintel licences keygen|issue|add`, handwritten, beside the generated verbs of `licences`
  addLicenceTools(program, ctx, families);
  // `lintel backups make|apply|download|last`, handwritten in place of the generated make and apply
  addBackupTools(program, ctx, families);
  // `lintel logs list|show|download`, handwritten in place of the generated available and get
  addLogTools(program, ctx, families);
  // `lintel devices search|add-found`, handwritten in place of their generated forms
  addDeviceSearch(program, ctx, families);
  addApi(program, ctx, families.session);
  addEvents(program, ctx);
  // `lintel calls history|watch`, beside the generated `lintel calls list|stop`
  addCalls(program, ctx);
  addCompletion(program, ctx);
  return program;
}

/**
 * Whether the command line asks for the help of a generated family or one of its verbs (`lintel users`,
 * `lintel users --help`, `lintel help roles`, `lintel roles help create`, `lintel roles create -h`): that help marks what the
 * signed-in user may not run, so it needs the profile first.
 */
export function wantsFamilyHelp(argv: readonly string[]): boolean {
  const own = argv.includes('--') ? argv.slice(0, argv.indexOf('--')) : argv;
  const words = own.filter((a) => !a.startsWith('-'));
  const known = familyWords();
  if (words[0] === 'help') return known.has(words[1] ?? '');
  if (!known.has(words[0] ?? '')) return false;
  return words.length === 1 || words[1] === 'help' || own.includes('--help') || own.includes('-h');
}

/**
 * Parses and runs one command line; resolves to the exit code. `lintel` alone at a terminal opens the
 * palette; `lintel __complete -- WORDS` answers the completion scripts without asking the server anything.
 */
export async function run(
  argv: readonly string[],
  ctx: CliContext,
  session = new RunSession(ctx),
): Promise<number> {
  if (argv[0] === '__complete')
    return runComplete(createProgram(ctx, { session, profile: null }), ctx, argv.slice(1));
  if (!argv.length) {
    const { canOpenPalette, interactive } = await import('./interactive');
    if (canOpenPalette(ctx)) return interactive(ctx);
  }
  const profile = wantsFamilyHelp(argv) ? await session.profileForHelp() : null;
  const program = createProgram(ctx, { session, profile, focus: focusOf(argv) });
  const ownArgs = argv.includes('--') ? argv.slice(0, argv.indexOf('--')) : argv;
  let json = ownArgs.includes('--json');
  // `lintel api` is a raw call: an error reply is printed as the server sent it
  let raw = false;
  program.hook('preAction', (_root, action) => {
    json = Boolean(action.opts().json);
    raw = action.name() === 'api';
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return ExitCode.ok;
  } catch (err) {
    // help and version were printed; help shown for a missing command is a usage error
    if (
      err instanceof CommanderError &&
      ['commander.helpDisplayed', 'commander.version', 'commander.help'].includes(err.code)
    ) {
      return err.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
    }
    // the reader of the output has gone (`| head`): nothing is wrong, nothing more to show
    if (isClosedPipe(err)) return ExitCode.ok;
    return printFailure(ctx, json, err, raw);
  }
}
