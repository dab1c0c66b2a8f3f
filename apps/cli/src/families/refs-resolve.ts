import { getCommand, pickerQuery, pickerRow, refFamilyOf, type PickerFamily } from '@lintel/commands';
import type { ApiClient, Filter } from '@lintel/core';
import { CliError } from '../errors';
import { ExitCode } from '../exit-codes';
import type { FlagSpec } from './flags';
import type { VerbPlan } from './run';

/** How many rows of one name an ambiguity names. */
const AMBIGUOUS_SHOWN = 10;

/** The family whose ids a flag (or the positional id) holds, as the web's pickers and the palette see it. */
export function refFamily(commandId: string, f: FlagSpec): PickerFamily | undefined {
  const many = f.kind === 'list' && f.item === 'number';
  if (f.kind !== 'number' && !many) return undefined;
  return refFamilyOf(commandId, f.path[f.path.length - 1]!, f.path.length === 1, many);
}

const isId = (s: string) => /^\s*\d+\s*$/.test(s);

/**
 * The id of the row that `text` names: its name, or for a user the login too, exactly. The lookup is the
 * family's own list (what the pickers ask, with an exact filter in place of the search): one row is the
 * answer; none is "not found"; several are an ambiguity that names them, to pick by id.
 */
async function idOfName(
  api: ApiClient,
  family: PickerFamily,
  text: string,
  field: string,
  positional: boolean,
): Promise<number> {
  const value = text.trim();
  const filters: Filter[] = [{ field: 'name', rule: 'equals', value }];
  if (family === 'user') filters.push({ field: 'login', rule: 'equals', value });
  const cmd = getCommand(`${family}.list` as 'user.list');
  const reply = await cmd.run({ api }, { ...pickerQuery('', 1, AMBIGUOUS_SHOWN + 1), filters, match: 'any' });
  const rows = reply.data.map((r) => pickerRow(family, r as Record<string, unknown>));
  // `equals` may ignore case; a row spelled exactly as typed wins over others that differ in case only
  const exact = rows.filter((r) => r.name === value || r.hint === value);
  const found = exact.length === 1 ? exact : rows;
  if (found.length === 1) return found[0]!.id;
  if (!found.length)
    throw new CliError('ref_not_found', positional ? ExitCode.notFound : ExitCode.usage, {
      field,
      value,
      family,
    });
  const more = reply.meta.total > AMBIGUOUS_SHOWN ? reply.meta.total - AMBIGUOUS_SHOWN : 0;
  throw new CliError('ref_ambiguous', ExitCode.usage, {
    field,
    value,
    family,
    count: reply.meta.total,
    rows: [...found]
      .sort((x, y) => x.id - y.id)
      .slice(0, AMBIGUOUS_SHOWN)
      .map((r) => (r.hint ? `${r.id} (${r.hint})` : String(r.id))),
    ...(more ? { more } : {}),
  });
}

/** One flag's text (or the texts of a repeated list flag) with every name replaced by its id. */
async function resolveValue(
  api: ApiClient,
  family: PickerFamily,
  spec: FlagSpec,
  raw: unknown,
  positional: boolean,
): Promise<unknown> {
  const field = spec.path.join('.');
  if (spec.kind === 'number') {
    if (typeof raw !== 'string' || isId(raw) || raw === 'null') return raw;
    return String(await idOfName(api, family, raw, field, positional));
  }
  // a list: `--domains 3,Building A` or `--domains 3 --domains 'Building A'`
  const items = (Array.isArray(raw) ? raw : [raw]).flatMap((r) => String(r).split(','));
  const ids: string[] = [];
  for (const item of items) {
    if (!item.trim() || isId(item)) ids.push(item);
    else ids.push(String(await idOfName(api, family, item, field, positional)));
  }
  return ids;
}

/** Whether any reference on the command line is given by name (then the names need the server). */
export function namesGiven(plan: VerbPlan, positional: readonly unknown[], opts: Record<string, unknown>) {
  const named = (spec: FlagSpec, raw: unknown) =>
    refFamily(plan.verb.command.id, spec) !== undefined &&
    raw !== undefined &&
    (Array.isArray(raw) ? raw : [raw])
      .flatMap((r) => String(r).split(spec.kind === 'list' ? ',' : /$^/))
      .some((s) => s.trim() && !isId(s) && s !== 'null');
  return (
    plan.positionals.some((spec, i) => named(spec, positional[i])) ||
    Object.entries(opts).some(([attr, raw]) => {
      const spec = plan.byAttribute.get(attr);
      return spec ? named(spec, raw) : false;
    })
  );
}

/**
 * The command line with references given by name (`--role Concierge`, `users get concierge.b1`,
 * `--domains 'Building A'`) turned into ids, wherever the web's pickers take the same references.
 */
export async function resolveNames(
  api: ApiClient,
  plan: VerbPlan,
  positional: readonly unknown[],
  opts: Record<string, unknown>,
): Promise<{ positional: unknown[]; opts: Record<string, unknown> }> {
  const cmdId = plan.verb.command.id;
  const outPositional = [...positional];
  for (const [i, spec] of plan.positionals.entries()) {
    const family = refFamily(cmdId, spec);
    if (family && outPositional[i] !== undefined)
      outPositional[i] = await resolveValue(api, family, spec, outPositional[i], true);
  }
  const outOpts = { ...opts };
  for (const [attr, raw] of Object.entries(opts)) {
    const spec = plan.byAttribute.get(attr);
    const family = spec && refFamily(cmdId, spec);
    if (spec && family && raw !== undefined)
      outOpts[attr] = await resolveValue(api, family, spec, raw, false);
  }
  return { positional: outPositional, opts: outOpts };
}
