import { globalRegistry, type GlobalMeta, type ZodType } from 'zod';

/** The traits declared on a field's schema (`.meta({secret, multiline, hidden})`, see core field-traits.ts). */
export interface FieldTraits {
  secret: boolean;
  multiline: boolean;
  /** a day (`YYYY-MM-DD`): forms draw a date input */
  date: boolean;
  /** seconds after local midnight: forms draw a time input, the CLI takes `09:00` */
  timeOfDay: boolean;
  /** why no form shows the field, or undefined */
  hidden?: string;
}

/** The parts of zod 4's `schema._zod.def` the readers use. */
export interface SchemaDef {
  type: string;
  innerType?: ZodType;
  defaultValue?: unknown;
  in?: ZodType;
  out?: ZodType;
  options?: ZodType[];
  entries?: Record<string, string | number>;
  values?: unknown[];
  element?: ZodType;
  shape?: Record<string, ZodType>;
  getter?: () => ZodType;
  checks?: { _zod: { def: Record<string, unknown> } }[];
}
export const defOf = (s: ZodType): SchemaDef => (s as unknown as { _zod: { def: SchemaDef } })._zod.def;

/** A field's schema without its wrappers, and what the wrappers said. */
export interface UnwrappedArg {
  core: ZodType;
  def: SchemaDef;
  /** may be left out (optional, or a default fills it in) */
  optional: boolean;
  nullable: boolean;
  hasDefault: boolean;
  defaultValue?: unknown;
  /** constraints picked up on the way (a pipe's input keeps the length, its output the format) */
  also: ZodType[];
}

const emptyLiteral = (m: ZodType) =>
  defOf(m).type === 'literal' && (defOf(m).values ?? []).every((v) => v === '');

/**
 * The one reader of argument schemas' wrappers, for the web's forms and the CLI's flags: strips optional,
 * default, nullable, readonly, catch, lazy, pipes (a preprocess or transform: the side the user writes)
 * and `X | ''` (a text that may be empty: `Email | ''`, `Phone | ''`).
 */
export function unwrapArg(schema: ZodType): UnwrappedArg {
  const out: UnwrappedArg = {
    core: schema,
    def: defOf(schema),
    optional: false,
    nullable: false,
    hasDefault: false,
    also: [],
  };
  for (let depth = 0; depth < 20; depth++) {
    const def = defOf(out.core);
    let next: ZodType | undefined;
    switch (def.type) {
      case 'optional':
        out.optional = true;
        next = def.innerType;
        break;
      case 'nullable':
        out.nullable = true;
        next = def.innerType;
        break;
      case 'default':
      case 'prefault':
        out.optional = true;
        if (!out.hasDefault) {
          out.hasDefault = true;
          const v = def.defaultValue;
          out.defaultValue = typeof v === 'function' ? (v as () => unknown)() : v;
        }
        next = def.innerType;
        break;
      case 'readonly':
      case 'catch':
      case 'nonoptional':
        next = def.innerType;
        break;
      case 'lazy':
        next = def.getter?.();
        break;
      case 'pipe': {
        const inType = def.in && defOf(def.in).type;
        const outType = def.out && defOf(def.out).type;
        if (outType === 'transform') next = def.in;
        else if (inType === 'transform') next = def.out;
        else {
          if (def.out) out.also.push(def.out);
          next = def.in;
        }
        break;
      }
      case 'union': {
        const members = def.options ?? [];
        const rest = members.filter((m) => !emptyLiteral(m));
        if (rest.length === 1 && rest.length < members.length) next = rest[0];
        break;
      }
    }
    if (!next) break;
    out.core = next;
  }
  out.def = defOf(out.core);
  return out;
}

/**
 * The traits of one field: the meta of its schema and of every schema it wraps (optional, nullable,
 * default, readonly, catch, lazy, both ends of a pipe), so `Password.optional()` is as secret as `Password`.
 */
export function traitsOf(schema: ZodType): FieldTraits {
  const meta: GlobalMeta = {};
  const seen = new Set<ZodType>();
  const walk = (s: ZodType | undefined) => {
    if (!s || seen.has(s) || seen.size > 40) return;
    seen.add(s);
    const m = globalRegistry.get(s);
    if (m) for (const [k, v] of Object.entries(m)) if (!(k in meta)) (meta as Record<string, unknown>)[k] = v;
    const def = defOf(s);
    switch (def.type) {
      case 'optional':
      case 'nullable':
      case 'default':
      case 'prefault':
      case 'readonly':
      case 'catch':
      case 'nonoptional':
        walk(def.innerType);
        break;
      case 'pipe':
        walk(def.in);
        walk(def.out);
        break;
      case 'lazy':
        walk(def.getter?.());
        break;
    }
  };
  walk(schema);
  return {
    secret: meta.secret === true,
    multiline: meta.multiline === true,
    date: meta.date === true,
    timeOfDay: meta.timeOfDay === true,
    ...(typeof meta.hidden === 'string' ? { hidden: meta.hidden } : {}),
  };
}
