import { Argument, Option, type Command as Commander } from 'commander';
import { getCommand, isStreamCommand, MAX_IMPORT_BATCH, registry, type CommandId } from '@lintel/commands';
import type { CliContext } from '../context';
import { evaluateGates, type GateResult } from '../families/gates';
import { inFocus, type FamilyOptions } from '../families/tree';
import { t } from '../i18n';
import { offer, setHint } from '../meta';
import { commandTitle } from '../families/labels';
import { families, kebab } from '../families/words';
import { exportFamily, type ExportOptions } from './export';
import { DEFAULT_BATCH, importUsers, type ImportOptions } from './import';
import { importIdentifiers, type IdentifierImportOptions } from './import-identifiers';

/** `lintel identifiers import FILE`: the two-step import (attempt, then continue with the action for duplicates). */
export function addIdentifierBulk(program: Commander, ctx: CliContext, opts: FamilyOptions): void {
  const identifiers = program.commands.find((c) => c.name() === 'identifiers');
  if (!identifiers) return;
  const importing = identifiers
    .command('import')
    .description(t('bulk.identifiers.description') + mark(opts, 'identifier.import_attempt'))
    .addArgument(setHint(new Argument('<file>', t('bulk.import.file')), { files: true }))
    .addOption(
      new Option(`--on-duplicate <${t('placeholders.choice')}>`, t('bulk.identifiers.on_duplicate')).choices([
        'skip',
        'overwrite',
        'stop',
      ]),
    )
    .addOption(new Option(`--format <${t('placeholders.choice')}>`, t('bulk.import.format')).choices(FORMATS))
    .option('--json', t('options.json'))
    .addHelpText('after', `\n${t('bulk.identifiers.help')}`)
    .action((file: string, o: IdentifierImportOptions) => importIdentifiers(ctx, opts.session, file, o));
  offer(importing, {
    gate: 'identifier.import_attempt',
    titleKey: 'cli:bulk.identifiers.description',
    asks: [{ label: t('bulk.import.file_label'), note: t('bulk.import.file') }],
    options: [
      {
        label: t('bulk.identifiers.on_duplicate_label'),
        flag: '--on-duplicate',
        choices: ['skip', 'overwrite', 'stop'],
      },
      { label: t('bulk.import.format_label'), flag: '--format', choices: FORMATS },
    ],
  });
}

const mark = (opts: FamilyOptions, id: CommandId) => {
  const gate: GateResult = opts.profile ? evaluateGates(getCommand(id), opts.profile) : { can: true };
  if (gate.can) return '';
  return ` ${gate.reason === 'permission' ? t('gates.no_permission') : t('gates.no_licence')}`;
};

/** The file formats of import and export, and how export writes references. */
const FORMATS = ['csv', 'xlsx', 'json', 'ndjson'];
const REFS = ['id', 'name'];

/** `lintel users import FILE`, beside the generated `lintel users list` and the others. */
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
}

/**
 * `lintel <nouns> export` for every family and journal the registry gives an export (`<noun>.export`): the
 * list's filter (`--where`), search and sort (and a journal's `--from`/`--to`), streamed into a file.
 */
export function addExports(program: Commander, ctx: CliContext, opts: FamilyOptions): void {
  const all = families(registry);
  for (const family of all) {
    const cmd = registry.get(`${family.noun}.export`);
    const top = program.commands.find((c) => c.name() === family.word);
    if (!cmd || !isStreamCommand(cmd) || !top) continue;
    // a family nested under another (`lintel devices events`, families/tree.ts) exports there too
    const parent = all.find((f) => family.noun.startsWith(`${f.noun}_`));
    if (!inFocus(opts, family, parent)) continue;
    const nested = parent
      ? program.commands
          .find((c) => c.name() === parent.word)
          ?.commands.find((c) => c.name() === family.word.slice(kebab(parent.noun).length + 1))
      : undefined;
    for (const group of nested ? [top, nested] : [top]) {
      const users = family.noun === 'user';
      const shape = (cmd.args as unknown as { shape?: Record<string, unknown> }).shape ?? {};
      const sortable = family.resource?.sortable ?? [];
      const sortChoices = [...sortable, ...sortable.map((s) => `-${s}`)];
      const sub = group
        .command('export')
        .description(
          (users
            ? t('bulk.export.description')
            : t('bulk.export.description_rows', { title: commandTitle(cmd) })) +
            mark(opts, cmd.id as CommandId),
        )
        .option(`--where <${t('placeholders.filter')}>`, t('list.where'))
        .option(`--search <${t('placeholders.text')}>`, t('bulk.export.search'));
      const sort = new Option(`--sort <${t('placeholders.choice')}>`, t('bulk.export.sort'));
      sub.addOption(sortChoices.length ? setHint(sort, { values: sortChoices }) : sort);
      if ('from' in shape) {
        sub.option(`--from <${t('placeholders.text')}>`, t('bulk.export.from'));
        sub.option(`--to <${t('placeholders.text')}>`, t('bulk.export.to'));
      }
      sub
        .addOption(
          new Option(`--format <${t('placeholders.choice')}>`, t('bulk.export.format')).choices(FORMATS),
        )
        .addOption(
          setHint(new Option(`-o, --output <${t('placeholders.file')}>`, t('bulk.export.output')), {
            files: true,
          }),
        );
      if (users)
        sub.addOption(
          new Option(`--refs <${t('placeholders.choice')}>`, t('bulk.export.refs'))
            .choices(REFS)
            .default('id'),
        );
      sub
        .option('--json', t('bulk.export.json'))
        .action((o: ExportOptions) => exportFamily(ctx, opts.session, family, cmd, o));
      if (group !== top) continue;
      offer(sub, {
        gate: cmd.id as CommandId,
        titleKey: users ? 'cli:bulk.export.description' : `commands:${cmd.id}.label`,
        asks: [],
        options: [
          { label: t('bulk.export.output_label'), flag: '--output', note: t('placeholders.file') },
          { label: t('list.where_label'), flag: '--where', note: t('list.where_note') },
          { label: t('bulk.export.search_label'), flag: '--search', note: t('placeholders.text') },
          ...(sortChoices.length
            ? [{ label: t('bulk.export.sort_label'), flag: '--sort', choices: sortChoices }]
            : []),
          { label: t('bulk.export.format_label'), flag: '--format', choices: FORMATS },
          ...(users ? [{ label: t('bulk.export.refs_label'), flag: '--refs', choices: REFS }] : []),
        ],
      });
    }
  }
}
