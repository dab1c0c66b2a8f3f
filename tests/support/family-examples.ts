/**
 * How the registry-wide suites make a row of any family: one example maker per family, derived from its
 * declaration — the create schema's required fields filled with values that pass it (the first of a few
 * plausible shapes of text each field accepts, unique per call), its group column or many-to-many groups set to
 * the group asked for, its other references to a row of the referenced family made the same way — and
 * checked against the schema, so that a family this cannot make fails with its name and the schema's
 * complaint rather than a TypeError in some suite. A family whose valid create the schema alone does not say
 * (a user needs an account that can sign in or be invited) gets an override in OVERRIDES, and only that.
 */
import type { z, ZodType } from 'zod';
import { allResources, unwrapArg, type AnyResource, type Command } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { uid } from './fixtures';
import type { FamilyMaker } from './family-authority';

type Args = Record<string, unknown>;
let counter = 0;
const next = () => `${Date.now() % 1_000_000}${String(counter++).padStart(4, '0')}`;

/** Text in the shapes fields commonly take: a name, a code, digits, a colour, an address, a URL, a long key. */
function textFor(schema: ZodType): string {
  const n = next();
  const candidates = [
    `Ex ${uid()}`,
    `ex${uid()}`,
    `Ex${uid()}`,
    n.slice(-9),
    `#${uid().slice(0, 6)}`,
    `ex${uid()}@example.test`,
    `https://ex${uid()}.example.test/hook`,
    `example-key-${uid()}-${uid()}`,
    // a local date, and a date and time (schedules, holidays, identifiers' periods)
    new Date().toISOString().slice(0, 10),
    new Date().toISOString().slice(0, 19),
  ];
  return candidates.find((c) => schema.safeParse(c).success) ?? candidates[0]!;
}

/** A value the schema accepts (what can be told from the schema itself). */
function valueFor(schema: ZodType): unknown {
  const u = unwrapArg(schema);
  const def = u.def as { type: string; entries?: Record<string, unknown>; values?: unknown[] };
  const core = u.core as unknown as { minValue?: number; minLength?: number };
  switch (def.type) {
    case 'string':
      return textFor(schema);
    case 'number':
    case 'int':
      return Math.max(1, Number.isFinite(core.minValue) ? core.minValue! : 1);
    case 'boolean':
      return false;
    case 'enum':
      return Object.values(def.entries ?? {})[0];
    case 'literal':
      return def.values?.[0];
    case 'array':
      return [];
    case 'union': {
      // the first member whose value the whole schema accepts (a secret: a key, or the placeholder)
      const members = (def as unknown as { options: ZodType[] }).options;
      return members.map(valueFor).find((v) => schema.safeParse(v).success);
    }
    case 'object': {
      const shape = (u.core as unknown as z.ZodObject).shape as Record<string, ZodType>;
      return Object.fromEntries(
        Object.entries(shape)
          .filter(([, s]) => !unwrapArg(s).optional)
          .map(([k, s]) => [k, valueFor(s)]),
      );
    }
    default:
      return u.nullable ? null : undefined;
  }
}

export interface ExampleSource {
  /** the administrator's client, which makes the referenced rows */
  api: () => ApiClient;
}

/**
 * Overrides, for what a family's schema does not say: each returns the fields to set over the derived ones
 * (`ref` makes a row of another family; `group` is the group the row is made in).
 */
const OVERRIDES: Record<string, (ref: (family: string) => Promise<number>, group: number) => Promise<Args>> =
  {
    // an account must be able to sign in or be invited: no link (no e-mail here), and a role made for it
    user: async (ref, group) => ({
      login: `ex${uid()}`,
      role: await ref('role'),
      domains: [group],
      send_registration_link: false,
    }),
    // a provider's URI is a SIP URI, which no derived text is
    sip_trunk: () => Promise.resolve({ termination_uri: `sip:provider-${uid()}.example:5060` }),
    // a card's value is a number its type checks (the schema takes any text): unique digits
    identifier: async () => ({ type: 'card', value: next().slice(-9) }),
  };

/**
 * What a tester needs beyond his permissions to act on a row, for what a declaration does not say: a user
 * is changed only by someone whose role may grant the user's role (engine/grants.ts).
 */
const AUTHORITY: Record<string, (row: Args) => { available?: number[] }> = {
  user: (row) => ({ available: [Number((row.role as { id: number }).id)] }),
};

/** The tester's extra options to act on `row` of this family (see AUTHORITY). */
export const authorityOver = (resource: AnyResource, row: Args) => AUTHORITY[resource.noun]?.(row) ?? {};

const cmd = (r: AnyResource, verb: 'create') => r.commands[verb] as unknown as Command;

/** The example maker of one family (see above); `families` resolves the nouns its references name. */
export function exampleMaker(
  resource: AnyResource,
  source: ExampleSource,
  families: readonly AnyResource[],
): FamilyMaker & { createArgs(groupId: number): Promise<Args> } {
  const shape = resource.createArgs.shape as Record<string, ZodType>;
  const owner = resource.scopes?.owner ?? {};
  /** one row per referenced family, made once */
  const made = new Map<string, Promise<number>>();
  const ref = (family: string, group: number): Promise<number> => {
    if (family === 'group') return Promise.resolve(group);
    let id = made.get(family);
    if (!id) {
      // a family the suite leaves to its hand cases (devices) is still made from its declaration
      const other = families.find((f) => f.noun === family) ?? allResources().find((f) => f.noun === family);
      if (!other) throw new Error(`${resource.noun} refers to ${family}, which is no family of the registry`);
      id = exampleMaker(other, source, families)
        .createArgs(group)
        .then(async (args) => {
          const r = (await cmd(other, 'create').run({ api: source.api() }, args as never)) as {
            data: { id: number };
          };
          return r.data.id;
        });
      made.set(family, id);
    }
    return id;
  };

  async function createArgs(groupId: number): Promise<Args> {
    const args: Args = {};
    for (const [key, schema] of Object.entries(shape)) {
      const u = unwrapArg(schema);
      const declared = resource.refs[key];
      if (key === owner.group) args[key] = groupId;
      else if (key === owner.groups) args[key] = [groupId];
      else if (u.optional) continue;
      else if (declared) {
        const id = await ref(declared.family, groupId);
        args[key] = declared.many ? [id] : id;
      } else args[key] = valueFor(schema);
    }
    Object.assign(args, await OVERRIDES[resource.noun]?.((f) => ref(f, groupId), groupId));
    const checked = resource.createArgs.safeParse(args);
    if (!checked.success)
      throw new Error(
        `no valid example of ${resource.noun} from its declaration (${JSON.stringify(args)}: ${checked.error.message}); give it an override in tests/support/family-examples.ts`,
      );
    return args;
  }

  const updateShape = resource.updateArgs.shape as Record<string, ZodType>;
  const placing = new Set([owner.group, owner.groups, ...Object.keys(resource.refs)]);
  const changeKey =
    'name' in updateShape
      ? 'name'
      : Object.keys(updateShape).find(
          (k) => !placing.has(k) && unwrapArg(updateShape[k]!).def.type === 'string',
        );
  const moveKey = [owner.group, owner.groups].find((k) => k && k in updateShape);

  return {
    createArgs,
    create: createArgs,
    change: () => {
      if (!changeKey) throw new Error(`${resource.noun}: no text field its update may change`);
      return { [changeKey]: valueFor(updateShape[changeKey]!) };
    },
    ...(moveKey ? { move: (g: number) => ({ [moveKey]: moveKey === owner.groups ? [g] : g }) } : {}),
  };
}
