import { Argument, Option, type Command as Commander } from 'commander';
import { JournalQuery, pathParams, refFamilyOf, registry, type CommandId } from '@lintel/commands';
import { ListQuery, type Profile } from '@lintel/core';
import type { CliContext } from '../context';
import { t } from '../i18n';
import { offer, setHint, type Ask, type ValueHint } from '../meta';
import { isDeletion } from './confirm';
import { deriveFlags, type FlagSpec } from './flags';
import { evaluateGates, type GateResult } from './gates';
import { commandTitle, familyDescription, fieldLabel } from './labels';
import { rowsOf } from './render';
import { runVerb, type VerbPlan } from './run';
import type { RunSession } from './session';
import { families, kebab, plural, type Family, type Verb } from './words';

export interface FamilyOptions {
  session: RunSession;
  /** the signed-in user's profile when help is shown, to mark what they may not run; null: mark nothing */
  profile: Profile | null;
  /**
   * The one command word the command line runs (`users` in `lintel users list`): only that family's verbs are
   * built, the others' groups stay (their names, aliases and descriptions) without them. Building every
   * family's verbs, their flags and translated texts cost most of a start's CPU. Absent: every verb (the
   * palette, completion, a line whose first word is an option).
   */
  focus?: string;
}

/**
 * The command word a command line runs, for `FamilyOptions.focus`: its first word, or help's subject; none
 * (`''`) for the program's own help or version; undefined when an option comes first (everything is built).
 */
export function focusOf(argv: readonly string[]): string | undefined {
  const first = argv[0];
  if (first === undefined) return undefined;
  if (['-h', '--help', '-V', '--version'].includes(first)) return '';
  if (first.startsWith('-')) return undefined;
  if (first !== 'help') return first;
  const next = argv[1];
  if (next === undefined) return '';
  return next.startsWith('-') ? undefined : next;
}

/**
 * Whether a family's verbs are built for this command line: none is set, or the focus is one of the words of
 * these families — its word, its alias, or the plural of its noun (a family without `list` is singular, `log`,
 * and the handwritten tools may name it as people say it: `lintel logs`).
 */
export const inFocus = (opts: FamilyOptions, ...of: (Family | undefined)[]): boolean =>
  opts.focus === undefined ||
  of.some((f) => f && [f.word, f.alias, plural(kebab(f.noun))].includes(opts.focus));

function placeholder(f: FlagSpec): string {
  switch (f.kind) {
    case 'number':
      return t('placeholders.number');
    case 'choice':
      return t('placeholders.choice');
    case 'list':
      return f.item === 'number' ? t('placeholders.numbers') : t('placeholders.texts');
    case 'json':
      return t('placeholders.json');
    case 'file':
      return t('placeholders.file');
    default:
      return t('placeholders.text');
  }
}

const shown = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

/** The help line of a flag: its label, then what it takes and whether it must be given. */
function describeFlag(noun: string, f: FlagSpec): string {
  const notes: string[] = [];
  if (f.required) notes.push(t('flags.required'));
  if (f.choices?.length) notes.push(t('flags.choices', { values: f.choices.join(', ') }));
  if (f.kind === 'list') notes.push(t('flags.list'));
  if (f.kind === 'json') notes.push(t('flags.json'));
  if (f.nullable) notes.push(t('flags.nullable'));
  if (f.hasDefault && (f.defaultValue === null || typeof f.defaultValue !== 'object'))
    notes.push(t('flags.default', { value: shown(f.defaultValue) }));
  return notes.length ? `${fieldLabel(noun, f.path)} (${notes.join('; ')})` : fieldLabel(noun, f.path);
}

/** The values a flag takes, for shell completion and the palette's choice lists. */
function hintOfFlag(f: FlagSpec): ValueHint | null {
  if (f.kind === 'file') return { files: true };
  if (f.kind === 'boolean') return { values: ['true', 'false'] };
  if (f.choices?.length) return { values: f.choices, list: f.kind === 'list' };
  return null;
}

function noteOf(f: FlagSpec): string | undefined {
  if (f.kind === 'list') return t('flags.list');
  if (f.kind === 'number') return t('placeholders.number');
  if (f.kind === 'json') return t('flags.json');
  if (f.kind === 'file') return t('placeholders.file');
  return undefined;
}

/** The family whose rows an id flag names, when the palette can list them by name. */
function refOf(commandId: string, f: FlagSpec): Ask['ref'] {
  const many = f.kind === 'list' && f.item === 'number';
  if (f.kind !== 'number' && !many) return undefined;
  const family = refFamilyOf(commandId, f.path[f.path.length - 1]!, f.path.length === 1, many);
  return family ? { family, many } : undefined;
}

/**
 * What the palette asks before it runs the verb: the path parameters, then the required flags; then it
 * offers the optional flags. Ids of another family are a list of its rows by name.
 */
function asksOf(
  commandId: string,
  noun: string,
  positionals: readonly FlagSpec[],
  flags: readonly FlagSpec[],
): { asks: Ask[]; options: Ask[] } {
  const ask = (f: FlagSpec, flag?: string): Ask => {
    const base = { label: fieldLabel(noun, f.path), ...(flag ? { flag } : {}) };
    const ref = refOf(commandId, f);
    if (ref) return { ...base, ref };
    const hint = hintOfFlag(f);
    return {
      ...base,
      ...(hint?.values && !hint.list ? { choices: hint.values } : {}),
      ...(noteOf(f) ? { note: noteOf(f) } : {}),
    };
  };
  const needed = (f: FlagSpec) => f.required && !f.hasDefault;
  return {
    asks: [
      ...positionals.filter((p) => p.required).map((p) => ask(p)),
      ...flags.filter(needed).map((f) => ask(f, `--${f.name}`)),
    ],
    options: flags.filter((f) => !needed(f)).map((f) => ask(f, `--${f.name}`)),
  };
}

/** `--sort` takes a sortable field, or `-field` for descending. */
const sortChoices = (sortable: readonly string[]) => [...sortable, ...sortable.map((s) => `-${s}`)];

/**
 * A list's optional arguments in the palette, as its flags: the search, the filter, the sort with its
 * fields, the page size, the page, and every page.
 */
function listOptions(family: Family, flags: readonly FlagSpec[]): Ask[] {
  const byName = new Map(flags.map((f) => [f.name, f]));
  const flag = (name: string, extra: Partial<Ask> = {}): Ask[] => {
    const f = byName.get(name);
    if (!f) return [];
    const note = noteOf(f);
    return [
      { label: fieldLabel(family.noun, f.path), flag: `--${name}`, ...(note ? { note } : {}), ...extra },
    ];
  };
  const sortable = family.resource?.sortable ?? [];
  return [
    ...flag('search'),
    { label: t('list.where_label'), flag: '--where', note: t('list.where_note') },
    ...flag('sort', sortable.length ? { choices: sortChoices(sortable) } : {}),
    ...flag('limit'),
    ...flag('page'),
    { label: t('list.all_label'), flag: '--all', switch: true },
  ];
}

function gateMark(gate: GateResult): string {
  if (gate.can) return '';
  return ` ${gate.reason === 'permission' ? t('gates.no_permission') : t('gates.no_licence')}`;
}

function addVerb(
  parent: Commander,
  ctx: CliContext,
  family: Family,
  verb: Verb,
  opts: FamilyOptions,
  /** a second place of the same verb (`lintel devices events list`): the palette offers it once */
  again = false,
): void {
  const cmd = verb.command;
  const isList = cmd.args === ListQuery || cmd.args === JournalQuery;
  const { flags, positionals } = deriveFlags(cmd.args, {
    positional: pathParams(cmd.http.path),
    skip: isList ? ['filters', 'match'] : [],
  });
  const rows = rowsOf(cmd.result);
  const gate: GateResult = opts.profile ? evaluateGates(cmd, opts.profile) : { can: true };
  const sub = parent.command(verb.word).description(commandTitle(cmd) + gateMark(gate));
  if (!again)
    offer(sub, {
      gate: cmd.id as CommandId,
      titleKey: `commands:${cmd.id}.label`,
      ...(isList
        ? { asks: [], options: listOptions(family, flags) }
        : asksOf(cmd.id, family.noun, positionals, flags)),
    });

  for (const p of positionals) {
    const arg = new Argument(p.required ? `<${p.name}>` : `[${p.name}]`, fieldLabel(family.noun, p.path));
    const hint = hintOfFlag(p);
    sub.addArgument(hint ? setHint(arg, hint) : arg);
  }

  const byAttribute = new Map<string, FlagSpec>();
  for (const f of flags) {
    let description = describeFlag(family.noun, f);
    const sortable = isList && f.name === 'sort' ? (family.resource?.sortable ?? []) : [];
    if (sortable.length) description += ` ${t('list.sort_fields', { fields: sortable.join(', ') })}`;
    if (f.kind === 'boolean') {
      const on = new Option(`--${f.name} [${t('placeholders.boolean')}]`, description);
      sub.addOption(setHint(on, { values: ['true', 'false'] }));
      sub.addOption(new Option(`--no-${f.name}`, t('flags.negate', { flag: `--${f.name}` })));
      byAttribute.set(on.attributeName(), f);
    } else {
      const option = new Option(`--${f.name} <${placeholder(f)}>`, description);
      if (f.kind === 'list')
        option.argParser((v: string, prev: unknown) => [...(Array.isArray(prev) ? prev : []), v]);
      const hint = sortable.length ? { values: sortChoices(sortable) } : hintOfFlag(f);
      sub.addOption(hint ? setHint(option, hint) : option);
      byAttribute.set(option.attributeName(), f);
      if (f.secret)
        sub.addOption(new Option(`--${f.name}-stdin`, t('flags.secret_stdin', { flag: `--${f.name}` })));
    }
  }
  if (isList) {
    const filterable = Object.keys(family.resource?.filterable ?? {});
    sub.addOption(
      new Option(
        `--where <${t('placeholders.filter')}>`,
        [t('list.where'), filterable.length ? t('list.where_fields', { fields: filterable.join(', ') }) : '']
          .filter(Boolean)
          .join(' '),
      ),
    );
    sub.addOption(new Option('--all', t('list.all')));
  }
  if (flags.length || positionals.length)
    sub.addOption(new Option(`--data <${t('placeholders.data')}>`, t('options.data')));
  if (rows) {
    sub.addOption(
      setHint(
        new Option(
          `--fields <${t('placeholders.texts')}>`,
          t('options.fields', { fields: rows.keys.join(', ') }),
        ),
        { values: rows.keys, list: true },
      ),
    );
  }
  if (isDeletion(cmd)) sub.addOption(new Option('-y, --yes', t('options.yes')));
  sub.option('--json', t('options.json'));

  const plan: VerbPlan = { family, verb, isList, flags, positionals, byAttribute, rows };
  sub.action(async (...received: unknown[]) => {
    const self = received[received.length - 1] as Commander;
    await runVerb(ctx, opts.session, plan, self.processedArgs as unknown[], self.opts());
  });
}

/**
 * `lintel <family> <verb> [id]` for every command of the registry a person may run from a terminal: flags
 * from the argument schema, `--where`/`--all` on lists, `--fields`, `--data` and `--json` everywhere.
 */
export function addFamilies(program: Commander, ctx: CliContext, opts: FamilyOptions): void {
  for (const family of families(registry)) {
    const group = program.command(family.word).description(
      familyDescription(
        family.word,
        family.verbs.map((v) => v.word),
      ),
    );
    if (family.alias) group.alias(family.alias);
    if (inFocus(opts, family)) for (const verb of family.verbs) addVerb(group, ctx, family, verb, opts);
  }
  // a family whose noun is another's followed by a word (`device_event` after `device`) is also found under
  // it: `lintel devices events list` is `lintel device-events list`
  const all = families(registry);
  for (const family of all) {
    const parent = all.find((f) => family.noun.startsWith(`${f.noun}_`) && f.noun !== family.noun);
    if (!parent) continue;
    const host = program.commands.find((c) => c.name() === parent.word);
    const word = family.word.slice(kebab(parent.noun).length + 1);
    if (!host || !word || host.commands.some((c) => c.name() === word)) continue;
    if (!inFocus(opts, parent)) continue;
    const group = host.command(word).description(
      familyDescription(
        family.word,
        family.verbs.map((v) => v.word),
      ),
    );
    for (const verb of family.verbs) addVerb(group, ctx, family, verb, opts, true);
  }
}

/** The words of the generated families (and their aliases), to tell when help for one is asked. */
export function familyWords(): Set<string> {
  return new Set(families(registry).flatMap((f) => (f.alias ? [f.word, f.alias] : [f.word])));
}
