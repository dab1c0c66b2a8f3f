import type { ZodType } from 'zod';
import { defOf, traitsOf, unwrapArg, type PickerFamily } from '@lintel/commands';

/**
 * What a form field holds, read from a command's zod 4 argument schema. The widgets are chosen from this
 * plus per-field overrides (forms/fields.ts); the data shaping (forms/shape.ts) reads it back.
 */
export type FieldType =
  | 'text'
  | 'number'
  | 'boolean'
  | 'enum'
  /** one id of another family (a picker) */
  | 'id'
  /** ids of another family (a multiple picker) */
  | 'ids'
  /** numbers typed as a list: `1, 5, 7` */
  | 'numbers'
  /** a list of codes (e.g. a role's permissions) */
  | 'strings'
  | 'object'
  /** a list of nested records */
  | 'list'
  /** an uploaded file (a custom Blob check in the schema): sent as multipart */
  | 'file'
  /** nothing a form can edit (records, lazy schemas): left out */
  | 'unknown';

export interface FieldSpec {
  key: string;
  /** dotted path from the root of the arguments: `profile.phone` */
  path: string;
  type: FieldType;
  /** may be left out */
  optional: boolean;
  /** may be sent as null */
  nullable: boolean;
  hasDefault: boolean;
  defaultValue?: unknown;
  minLength?: number;
  maxLength?: number;
  min?: number;
  max?: number;
  integer?: boolean;
  email?: boolean;
  options?: readonly string[];
  /** object: its fields; list: the fields of one item */
  fields?: FieldSpec[];
  /** id and ids: the family the ids name (forms/fields.ts sets it) */
  family?: Family;
  /** a password: shown masked, and a stored one stands as the dummy placeholder until changed */
  secret?: boolean;
  /** a long text: a textarea */
  multiline?: boolean;
  /** a day (`YYYY-MM-DD`): a date input */
  date?: boolean;
  /** a number of seconds after midnight: a time input (`09:00`) */
  timeOfDay?: boolean;
  /** no form shows it (declared on the schema: `.meta({hidden: why})`) */
  hidden?: string;
}

/** The families a picker can list (declared once in packages/commands). */
export type Family = PickerFamily;

// the wrappers are read by the one walker of argument schemas, shared with the CLI's flags
const unwrap = unwrapArg;

function typeOf(core: ZodType): FieldType {
  const def = defOf(core);
  switch (def.type) {
    case 'string':
      return 'text';
    case 'number':
    case 'int':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'enum':
      return 'enum';
    case 'object':
      return 'object';
    case 'custom':
      // the registry's only custom argument is an uploaded file (`FileArg`)
      return 'file';
    case 'union':
      return (def.options ?? []).every((m) => defOf(m).type === 'literal') ? 'enum' : 'unknown';
    case 'array': {
      const element = unwrap(def.element!).core;
      const t = typeOf(element);
      if (t === 'number') return 'numbers';
      if (t === 'text' || t === 'enum') return 'strings';
      if (t === 'object') return 'list';
      return 'unknown';
    }
    default:
      return 'unknown';
  }
}

type Bag = Record<string, unknown>;

function constraints(spec: FieldSpec, schemas: ZodType[]) {
  for (const s of schemas) {
    const b = s as unknown as Bag;
    if (typeof b.minLength === 'number' && spec.minLength === undefined) spec.minLength = b.minLength;
    if (
      typeof b.maxLength === 'number' &&
      b.maxLength < Number.MAX_SAFE_INTEGER &&
      spec.maxLength === undefined
    )
      spec.maxLength = b.maxLength;
    if (typeof b.minValue === 'number' && Number.isFinite(b.minValue) && b.minValue > Number.MIN_SAFE_INTEGER)
      spec.min = b.minValue;
    if (typeof b.maxValue === 'number' && Number.isFinite(b.maxValue) && b.maxValue < Number.MAX_SAFE_INTEGER)
      spec.max = b.maxValue;
    if (b.isInt === true) spec.integer = true;
    if (b.format === 'email') spec.email = true;
  }
}

/** One field of an argument schema. */
export function describeField(key: string, schema: ZodType, parent = ''): FieldSpec {
  const u = unwrap(schema);
  const path = parent ? `${parent}.${key}` : key;
  const type = typeOf(u.core);
  const spec: FieldSpec = {
    key,
    path,
    type,
    optional: u.optional || u.hasDefault,
    nullable: u.nullable,
    hasDefault: u.hasDefault,
    ...(u.hasDefault ? { defaultValue: u.defaultValue } : {}),
  };
  constraints(spec, [u.core, ...u.also]);
  // traits are declared on the schema (`.meta({secret, multiline, hidden})`), not guessed from the name
  const traits = traitsOf(schema);
  if (traits.secret && type === 'text') spec.secret = true;
  if (traits.multiline && type === 'text') spec.multiline = true;
  if (traits.date && type === 'text') spec.date = true;
  if (traits.timeOfDay && type === 'number') spec.timeOfDay = true;
  if (traits.hidden) spec.hidden = traits.hidden;
  const def = defOf(u.core);
  if (type === 'enum') {
    spec.options =
      def.type === 'enum'
        ? ((u.core as unknown as { options: string[] }).options ?? [])
        : (def.options ?? []).flatMap((m) => (defOf(m).values ?? []).map(String));
  }
  if (type === 'object') spec.fields = describeArgs(u.core, path);
  if (type === 'list') spec.fields = describeArgs(unwrap(def.element!).core, '');
  if (type === 'numbers' || type === 'strings') {
    const element = unwrap(def.element!).core;
    if (typeOf(element) === 'enum') spec.options = (element as unknown as { options?: string[] }).options;
    const arr = u.core as unknown as Bag;
    // arrays keep their bounds in checks; zod exposes none on the instance, so read the checks
    for (const c of ((arr as { def?: { checks?: { _zod: { def: Bag } }[] } }).def?.checks ?? []).map(
      (x) => x._zod.def,
    )) {
      if (c.check === 'min_length' && typeof c.minimum === 'number') spec.minLength = c.minimum;
      if (c.check === 'max_length' && typeof c.maximum === 'number') spec.maxLength = c.maximum;
    }
  }
  return spec;
}

/** The fields of an object schema, in declaration order (a non-object schema has none). */
export function describeArgs(schema: ZodType, parent = ''): FieldSpec[] {
  const core = unwrap(schema).core;
  if (defOf(core).type !== 'object') return [];
  const shape = (core as unknown as { shape: Record<string, ZodType> }).shape;
  return Object.entries(shape).map(([key, s]) => describeField(key, s, parent));
}
