import { Argument, Option, type Command as Commander } from 'commander';
import { getCommand, MAX_IMPORT_BATCH } from '@lintel/commands';
import type { CliContext } from '../context';
import { evaluateGates, type GateResult } from '../families/gates';
import type { FamilyOptions } from '../families/tree';
import { t } from '../i18n';
import { offer, setHint } from '../meta';
import { exportUsers, type ExportOptions } from './export';
import { DEFAULT_BATCH, importUsers, type ImportOptions } from './import';

const mark = (opts: FamilyOptions, id: 'user.import_start' | 'user.list') => {
  const gate: GateResult = opts.profile ? evaluateGates(getCommand(id), opts.profile) : { can: true };
  if (gate.can) return '';
  return ` ${gate.reason === 'permission' ? t('gates.no_permission') : t('gates.no_licence')}`;
};

/** `lintel users import FILE` and `lintel users export`, beside the generated `lintel users list` and the others. */
export function addUserBulk(program: Commander, ctx: CliContext, opts: FamilyOptions): void {
  const users = program.commands.find((c) => c.name() === 'users');
  if (!users) return;
  const importing = users
    .command('import')
    .description(t('bulk.import.description') + mark(opts, 'user.import_start'))
    .addArgument(setHint(new Argument('<file>', t('bulk.import.file')), { files: true }))
    .option('--dry-run', t('bulk.import.dry_run'))
    .option('--continue-on-error', t('bulk.import.continue_on_error'))
    .option(
      `--batch <${t('placeholders.number')}>`,
      t('bulk.import.batch', { default: DEFAULT_BATCH, max: MAX_IMPORT_BATCH }),
    )
    .addOption(
      new Option(`--format <${t('placeholders.choice')}>`, t('bulk.import.format')).choices([
        'csv',
        'xlsx',
        'json',
        'ndjson',
      ]),
    )
    .option('--json', t('options.json'))
    .addHelpText('after', `\n${t('bulk.import.help')}`)
    .action((file: string, o: ImportOptions) => importUsers(ctx, opts.session, file, o));
  offer(importing, {
    gate: 'user.import_start',
    titleKey: 'cli:bulk.import.description',
    asks: [{ label: t('bulk.import.file_label'), note: t('bulk.import.file') }],
  });
  const exporting = users
    .command('export')
    .description(t('bulk.export.description') + mark(opts, 'user.list'))
    .option(`--where <${t('placeholders.filter')}>`, t('list.where'))
    .addOption(
      new Option(`--format <${t('placeholders.choice')}>`, t('bulk.export.format')).choices([
        'csv',
        'xlsx',
        'json',
        'ndjson',
      ]),
    )
    .addOption(
      setHint(new Option(`-o, --output <${t('placeholders.file')}>`, t('bulk.export.output')), {
        files: true,
      }),
    )
    .addOption(
      new Option(`--refs <${t('placeholders.choice')}>`, t('bulk.export.refs'))
        .choices(['id', 'name'])
        .default('id'),
    )
    .option('--json', t('bulk.export.json'))
    .action((o: ExportOptions) => exportUsers(ctx, opts.session, o));
  offer(exporting, { gate: 'user.list', titleKey: 'cli:bulk.export.description', asks: [] });
}
