import { allResources, resources, type AnyResource, type Command } from '@lintel/commands';

/** One `lintel <family> <verb>` command: a command of the registry and the words that name it. */
export interface Verb {
  /** `list`, `delete-all`, `send-registration-link` */
  word: string;
  command: Command;
}

/** A family of commands sharing a noun: `users` for `user.*`, `seed` for `seed.*`. */
export interface Family {
  noun: string;
  /** the word on the command line: plural kebab case for nouns that have a list, else singular */
  word: string;
  /** the singular kebab form, accepted too, when it differs (`lintel user get 5`) */
  alias?: string;
  /** the generic family (fields, filters, sort), when the noun is one */
  resource?: AnyResource;
  verbs: Verb[];
}

/**
 * Nouns the CLI does not generate: `session` (login and logout are written by hand, with prompts and the
 * stored contexts). Public and hidden commands are never generated either.
 */
const HANDWRITTEN_NOUNS = new Set(['session']);

export const kebab = (s: string) => s.replace(/[_.]/g, '-');

/** Nouns with a list that name one thing (the access matrix: its list is its cells): `lintel access-matrix list`. */
const ONE_THING = new Set(['access-matrix', 'guest-access']);

/** English plural of a kebab noun: `domain-type` → `domain-types`, `entry` → `entries`, `box` → `boxes`. */
export function plural(word: string): string {
  if (ONE_THING.has(word)) return word;
  if (/(s|x|z|ch|sh)$/.test(word)) return `${word}es`;
  if (/[^aeiou]y$/.test(word)) return `${word.slice(0, -1)}ies`;
  return `${word}s`;
}

export function splitId(id: string): { noun: string; verb: string } {
  const dot = id.indexOf('.');
  return { noun: id.slice(0, dot), verb: id.slice(dot + 1) };
}

/** Whether the CLI generates a command for this registry entry. */
export function isGenerated(cmd: Command): boolean {
  return !cmd.hidden && cmd.access !== 'public' && !HANDWRITTEN_NOUNS.has(splitId(cmd.id).noun);
}

const VERB_ORDER = ['list', 'get', 'create', 'update', 'delete', 'delete_all'];

/** The families of each registry read, while it holds as many commands (a test's fixture family adds some). */
const known = new WeakMap<ReadonlyMap<string, Command>, { size: number; families: readonly Family[] }>();

/**
 * The families, generic ones first in menu order, then the others as the registry lists them. A noun is a
 * collection (plural word) when it has a `list` verb; otherwise it names one thing or a set of actions
 * (`profile`, `server`, `seed`) and stays singular. Worked out once per registry: a start asks it four times.
 */
export function families(registry: ReadonlyMap<string, Command>): readonly Family[] {
  const seen = known.get(registry);
  if (seen?.size === registry.size) return seen.families;
  const out = familiesOf(registry);
  known.set(registry, { size: registry.size, families: out });
  return out;
}

function familiesOf(registry: ReadonlyMap<string, Command>): Family[] {
  const byNoun = new Map<string, Command[]>();
  for (const noun of resources.map((r) => r.noun)) byNoun.set(noun, []);
  for (const cmd of registry.values()) {
    if (!isGenerated(cmd)) continue;
    const { noun } = splitId(cmd.id);
    const of = byNoun.get(noun);
    if (of) of.push(cmd);
    else byNoun.set(noun, [cmd]);
  }
  // the generic family of a noun: the one whose list is `<noun>.list` (a fixture's too)
  const generic = new Map(allResources().map((r) => [r.noun, r]));
  const out: Family[] = [];
  for (const [noun, commands] of byNoun) {
    if (!commands.length) continue;
    const verbOf = (c: Command) => splitId(c.id).verb;
    const rank = (c: Command) => {
      const i = VERB_ORDER.indexOf(verbOf(c));
      return i < 0 ? VERB_ORDER.length : i;
    };
    const sorted = [...commands].sort((a, b) => rank(a) - rank(b));
    const singular = kebab(noun);
    const word = sorted.some((c) => verbOf(c) === 'list') ? plural(singular) : singular;
    out.push({
      noun,
      word,
      alias: word === singular ? undefined : singular,
      resource: generic.get(noun) as AnyResource | undefined,
      verbs: sorted.map((command) => ({ word: kebab(verbOf(command)), command })),
    });
  }
  return out;
}
