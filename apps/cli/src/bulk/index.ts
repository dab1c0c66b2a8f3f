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

/** The file formats of import and export, and how export writes references. */
const FORMATS = ['csv', 'xlsx', 'json', 'ndjson'];
const REFS = ['id', 'name'];

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
    .addOption(new Option(`--format <${t('placeholders.choice')}>`, t('bulk.import.format')).choices(FORMATS))
    .option('--json', t('options.json'))
    .addHelpText('after', `\n${t('bulk.import.help')}`)
    .action((file: string, o: ImportOptions) => importUsers(ctx, opts.session, file, o));
  offer(importing, {
    gate: 'user.import_start',
    titleKey: 'cli:bulk.import.description',
    asks: [{ label: t('bulk.import.file_label'), note: t('bulk.import.file') }],
    options: [
      { label: t('bulk.import.dry_run_label'), flag: '--dry-run', switch: true },
      { label: t('bulk.import.continue_label'), flag: '--continue-on-error', switch: true },
      { label: t('bulk.import.format_label'), flag: '--format', choices: FORMATS },
      { label: t('bulk.import.batch_label'), flag: '--batch', note: t('placeholders.number') },
    ],
  });
  const exporting = users
    .command('export')
    .description(t('bulk.export.description') + mark(opts, 'user.list'))
    .option(`--where <${t('placeholders.filter')}>`, t('list.where'))
    .addOption(new Option(`--format <${t('placeholders.choice')}>`, t('bulk.export.format')).choices(FORMATS))
    .addOption(
      setHint(new Option(`-o, --output <${t('placeholders.file')}>`, t('bulk.export.output')), {
        files: true,
      }),
    )
    .addOption(
      new Option(`--refs <${t('placeholders.choice')}>`, t('bulk.export.refs')).choices(REFS).default('id'),
    )
    .option('--json', t('bulk.export.json'))
    .action((o: ExportOptions) => exportUsers(ctx, opts.session, o));
  offer(exporting, {
    gate: 'user.list',
    titleKey: 'cli:bulk.export.description',
    asks: [],
    options: [
      { label: t('bulk.export.output_label'), flag: '--output', note: t('placeholders.file') },
      { label: t('list.where_label'), flag: '--where', note: t('list.where_note') },
      { label: t('bulk.export.format_label'), flag: '--format', choices: FORMATS },
      { label: t('bulk.export.refs_label'), flag: '--refs', choices: REFS },
    ],
  });
}
