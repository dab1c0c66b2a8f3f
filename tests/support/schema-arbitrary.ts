/**
 * Values drawn from an argument schema (fast-check): what the schema allows, within bounds kept small.
 * The fuzz suite draws a field's values from here unless it has hand-written generators (real ids of other
 * rows, plausible names), so a field added to a family is fuzzed with values of its own type at once.
 */
import fc from 'fast-check';
import type { ZodType } from 'zod';
import { defOf, unwrapArg } from '@lintel/commands';

type Bag = Record<string, unknown>;
const num = (v: unknown, fallback: number) => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);

export function arbitraryOf(schema: ZodType, depth = 0): fc.Arbitrary<unknown> {
  const u = unwrapArg(schema);
  const b = u.core as unknown as Bag;
  const def = u.def;
  let base: fc.Arbitrary<unknown>;
  switch (def.type) {
    case 'string': {
      const min = num(b.minLength, 0);
      const max = Math.max(min, Math.min(num(b.maxLength, 40), 40));
      // (fc.emailAddress draws RFC addresses such as `!@a.aa` that zod's stricter pattern refuses)
      base =
        b.format === 'email'
          ? fc
              .tuple(
                fc.stringMatching(/^[a-z0-9]{1,12}$/),
                fc.constantFrom('example.test', 'mail.example.org'),
              )
              .map(([local, domain]) => `${local}@${domain}`)
          : fc.string({ minLength: min, maxLength: max });
      break;
    }
    case 'number':
    case 'int': {
      const min = Math.max(num(b.minValue, -1_000_000), -1_000_000);
      const max = Math.min(num(b.maxValue, 1_000_000), 1_000_000);
      base = b.isInt ? fc.integer({ min, max }) : fc.double({ min, max, noNaN: true });
      break;
    }
    case 'boolean':
      base = fc.boolean();
      break;
    case 'enum':
      base = fc.constantFrom(...Object.values(def.entries ?? {}));
      break;
    case 'literal':
      base = fc.constantFrom(...(def.values ?? [null]));
      break;
    case 'array':
      base = depth > 3 ? fc.constant([]) : fc.array(arbitraryOf(def.element!, depth + 1), { maxLength: 3 });
      break;
    case 'object': {
      const shape = def.shape ?? {};
      const model = Object.fromEntries(Object.entries(shape).map(([k, s]) => [k, arbitraryOf(s, depth + 1)]));
      const requiredKeys = Object.entries(shape)
        .filter(([, s]) => !unwrapArg(s).optional)
        .map(([k]) => k);
      base = depth > 3 ? fc.constant({}) : fc.record(model, { requiredKeys });
      break;
    }
    case 'union':
      base = fc.oneof(...(def.options ?? []).map((o) => arbitraryOf(o, depth + 1)));
      break;
    case 'null':
      base = fc.constant(null);
      break;
    default:
      // what a schema cannot describe to us (a file, a custom check): JSON of any kind
      base = fc.jsonValue({ maxDepth: 1 });
  }
  return u.nullable && defOf(u.core).type !== 'null' ? fc.option(base, { nil: null }) : base;
}
