import fs from 'node:fs';
import type { ApiClient, FieldError } from '@lintel/core';
import { checkFilters, fieldErrors, MAX_LIST_LIMIT, parseWhere, WhereSyntaxError } from '@lintel/core';
import type { Command } from '@lintel/commands';
import type { CliContext } from '../context';
import { CliError } from '../errors';
import { ExitCode } from '../exit-codes';
import { language, t } from '../i18n';
import { printOutcome } from '../output';
import { ask, canPrompt, readStdin } from '../prompt';
import { confirmDeletion } from './confirm';
import { cloneJson, parseFlag, setPath, type FlagSpec } from './flags';
import { evaluateGates } from './gates';
import { fieldLabel } from './labels';
import { namesGiven, resolveNames } from './refs-resolve';
import {
  defaultColumns,
  isOkOnly,
  projectJson,
  renderRecord,
  renderRows,
  totalText,
  type Look,
  type RowsInfo,
} from './render';
import type { RunSession } from './session';
import type { Family, Verb } from './words';

/** What the tree worked out about one verb, for its action. */
export interface VerbPlan {
  family: Family;
  verb: Verb;
  isList: boolean;
  flags: FlagSpec[];
  positionals: FlagSpec[];
  /** commander's attribute name (`profile.timeZone`) → the flag */
  byAttribute: Map<string, FlagSpec>;
  rows: RowsInfo | null;
}

interface ListReply {
  data: Record<string, unknown>[];
  meta: { total: number; total_is_estimate?: boolean; page: number; limit: number };
}

const usage = (fields: FieldError[]) =>
  new CliError('check_fields_data', ExitCode.usage, { fields }, 'errors');

/** `--data '{json}'`, `--data @file.json` or `--data @-` (stdin): an object the flags are set over. */
export async function readData(ctx: CliContext, spec: string): Promise<Record<string, unknown>> {
  let text = spec;
  if (spec === '@-') text = await readStdin(ctx);
  else if (spec.startsWith('@')) {
    try {
      text = fs.readFileSync(spec.slice(1), 'utf8');
    } catch (err) {
      throw new CliError('data_unreadable', ExitCode.usage, {
        file: spec.slice(1),
        detail: String((err as Error)?.message ?? err),
      });
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new CliError('bad_data', ExitCode.usage, { detail: String((err as Error)?.message ?? err) });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new CliError('bad_data', ExitCode.usage, { detail: t('errors.data_not_object') });
  return cloneJson(value as Record<string, unknown>);
}

/** The arguments of the call: --data first, then the positionals and flags over it, then --where. */
async function readArgs(
  ctx: CliContext,
  plan: VerbPlan,
  positional: readonly unknown[],
  opts: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const args = typeof opts.data === 'string' ? await readData(ctx, opts.data) : {};
  const problems: FieldError[] = [];
  const take = (spec: FlagSpec, raw: unknown) => {
    if (raw === undefined) return;
    const parsed = parseFlag(spec, raw);
    if (parsed.ok) setPath(args, spec.path, parsed.value);
    else problems.push(parsed.problem);
  };
  plan.positionals.forEach((spec, i) => take(spec, positional[i]));
  for (const [attribute, raw] of Object.entries(opts)) {
    const spec = plan.byAttribute.get(attribute);
    if (spec) take(spec, raw);
  }
  if (plan.isList && typeof opts.where === 'string') {
    let where: ReturnType<typeof parseWhere>;
    try {
      where = parseWhere(opts.where);
    } catch (err) {
      if (err instanceof WhereSyntaxError) throw new CliError('bad_where', ExitCode.usage, { at: err.at });
      throw err;
    }
    const filterable = plan.family.resource?.filterable;
    if (filterable) problems.push(...checkFilters(where.filters, filterable));
    args.filters = where.filters;
    args.match = where.match;
  }
  if (problems.length) throw usage(problems);
  return args;
}

/**
 * Secrets (passwords) not given as flags: `--<name>-stdin` reads one from stdin; at a terminal a required one
 * is asked without echo. Without either, the argument schema says it is missing (exit 2).
 */
async function readSecrets(
  ctx: CliContext,
  plan: VerbPlan,
  args: Record<string, unknown>,
  opts: Record<string, unknown>,
): Promise<void> {
  const secrets = plan.flags.filter((f) => f.secret);
  const fromStdin = secrets.filter((f) => opts[stdinAttribute(f)] === true);
  if (fromStdin.length > 1 || (fromStdin.length && opts.data === '@-'))
    throw usage(fromStdin.map((f) => ({ field: f.path.join('.'), rule: 'one_stdin' })));
  for (const f of secrets) {
    if (getPath(args, f.path) !== undefined) continue;
    if (fromStdin.includes(f)) setPath(args, f.path, await readStdin(ctx));
    else if (f.required && canPrompt(ctx))
      setPath(args, f.path, await ask(ctx, fieldLabel(plan.family.noun, f.path.join('.')), { hidden: true }));
  }
}

/** commander's attribute of `--new-password-stdin` (its camel case, dots kept): `newPasswordStdin` */
const stdinAttribute = (f: FlagSpec) =>
  `${f.name}-stdin`.split('-').reduce((name, word) => name + word[0]!.toUpperCase() + word.slice(1));

const getPath = (obj: Record<string, unknown>, path: string[]): unknown =>
  path.reduce<unknown>(
    (o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined),
    obj,
  );

/** `--fields a,b`: known fields of the record, in the order given. */
function readFields(plan: VerbPlan, raw: unknown): string[] | undefined {
  if (typeof raw !== 'string' || !plan.rows) return undefined;
  const fields = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = fields.filter((f) => !plan.rows!.keys.includes(f));
  if (unknown.length || !fields.length)
    throw usage([{ field: 'fields', rule: 'one_of', params: { values: plan.rows.keys } }]);
  return fields;
}

/** Every page from `--page` (default 1) on, as one reply: meta is that of a single page holding them all. */
async function fetchAll(api: ApiClient, cmd: Command, args: Record<string, unknown>): Promise<ListReply> {
  const limit = typeof args.limit === 'number' ? args.limit : MAX_LIST_LIMIT;
  const first = typeof args.page === 'number' ? args.page : 1;
  const data: ListReply['data'] = [];
  let total = 0;
  let estimate = false;
  // a journal (meta.next): every row by its keyset cursors, however many millions, never by page number
  let cursor: string | null | undefined;
  for (let page = first; ; page++) {
    const reply = (await cmd.run(
      { api },
      cursor ? { ...args, cursor, limit } : { ...args, page, limit },
    )) as ListReply & { meta: { next?: string | null } };
    data.push(...reply.data);
    total = reply.meta.total;
    estimate = reply.meta.total_is_estimate === true;
    if ('next' in reply.meta) {
      cursor = reply.meta.next;
      if (!cursor) break;
      continue;
    }
    // an estimated total may be short of the rows there are: only a short page ends the list then
    if (reply.data.length < limit) {
      total = (first - 1) * limit + data.length;
      estimate = false;
      break;
    }
    if (!estimate && data.length >= total - (first - 1) * limit) break;
  }
  if (cursor !== undefined) {
    total = data.length;
    estimate = false;
  }
  const journal = cursor !== undefined ? { next: null, prev: null } : {};
  return cmd.result.parse({
    data,
    meta: { total, total_is_estimate: estimate, page: first, limit: data.length, ...journal },
  }) as ListReply;
}

function look(ctx: CliContext, noun: string): Look {
  return {
    tty: Boolean(ctx.stdout.isTTY),
    width: ctx.stdout.columns || 100,
    label: (key) => fieldLabel(noun, key),
    yes: t('output.yes'),
    no: t('output.no'),
    color: Boolean(ctx.stdout.isTTY) && !ctx.env.NO_COLOR && ctx.env.TERM !== 'dumb',
  };
}

/**
 * A command whose reply a person reads better another way than the generic record (the licences' list with
 * what is in force, their usage against the counts): its own text for a person or a pipe. `--json` is
 * unchanged.
 */
export type TextView = (result: unknown, look: Look) => string;
const textViews = new Map<string, TextView>();
export function registerTextView(commandId: string, view: TextView): void {
  textViews.set(commandId, view);
}

/**
 * The result for a person or a pipe: lists as tables or tab-separated rows, records as label/value lines.
 * `note` (on stderr, for a person and for a pipe alike) says how to see the rest of a list: a script that
 * reads a page must not take it for the whole list.
 */
function resultText(
  ctx: CliContext,
  plan: VerbPlan,
  result: unknown,
  fields: string[] | undefined,
  all: boolean,
): { text: string; note?: string } {
  const l = look(ctx, plan.family.noun);
  const view = textViews.get(plan.verb.command.id);
  if (view) return { text: view(result, l) };
  const { rows } = plan;
  const value = result as Record<string, unknown>;
  if (rows && (rows.mode === 'list' || rows.mode === 'rows')) {
    const list = value.data as Record<string, unknown>[];
    if (l.tty && !list.length) return { text: t('output.empty') };
    const text = renderRows(list, fields ?? defaultColumns(rows, plan.family.resource), l);
    const meta = (value as Partial<ListReply>).meta;
    if (meta && !all) {
      const to = (meta.page - 1) * meta.limit + list.length;
      if (to < meta.total)
        return {
          text,
          note: t('output.more', {
            from: to - list.length + 1,
            to,
            total: totalText(meta, language, (total) => t('output.about_total', { total })),
            next: meta.page + 1,
          }),
        };
    }
    return { text };
  }
  if (rows?.mode === 'saved') return { text: renderRecord(value.data as Record<string, unknown>, l, fields) };
  if (rows?.mode === 'record') return { text: renderRecord(value, l, fields) };
  if (isOkOnly(plan.verb.command.result)) return { text: t('output.done') };
  if (value && typeof value === 'object' && !Array.isArray(value)) return { text: renderRecord(value, l) };
  return { text: JSON.stringify(result, null, 2) };
}

/**
 * One generated command, in the order the server itself checks: the command line (2), signed in (3), the
 * gates against the profile (4, nothing sent), the command's own argument schema (2), then the call.
 */
export async function runVerb(
  ctx: CliContext,
  session: RunSession,
  plan: VerbPlan,
  positional: readonly unknown[],
  opts: Record<string, unknown>,
): Promise<void> {
  const cmd = plan.verb.command;
  const json = Boolean(opts.json);
  // references given by name (`--role Concierge`, `users get concierge.b1`) become ids first
  const given = namesGiven(plan, positional, opts)
    ? await resolveNames(session.signedIn().api, plan, positional, opts)
    : { positional, opts };
  const args = await readArgs(ctx, plan, given.positional, given.opts);
  await readSecrets(ctx, plan, args, opts);
  const fields = readFields(plan, opts.fields);

  const { api } = session.signedIn();
  const gate = evaluateGates(cmd, await session.profile());
  if (!gate.can) {
    if (gate.reason === 'permission')
      throw new CliError(
        'method_prohibited',
        ExitCode.refused,
        { command: cmd.id, permissions: [...gate.permissions] },
        'errors',
      );
    throw new CliError('feature_not_licensed', ExitCode.refused, { command: cmd.id, licence: gate.licence });
  }

  const checked = cmd.args.safeParse(args);
  if (!checked.success) throw usage(fieldErrors(checked.error, args));

  await confirmDeletion(ctx, api, cmd, args, Boolean(opts.yes));
  const all = plan.isList && Boolean(opts.all);
  const result = all ? await fetchAll(api, cmd, args) : await cmd.run({ api }, args);
  if (json) {
    printOutcome(ctx, true, {
      data: fields && plan.rows ? projectJson(result, plan.rows, fields) : result,
      text: '',
    });
    return;
  }
  const { text, note } = resultText(ctx, plan, result, fields, all);
  printOutcome(ctx, false, { data: null, text });
  if (note) ctx.stderr.write(`${note}\n`);
}
