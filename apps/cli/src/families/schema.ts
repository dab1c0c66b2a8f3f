import type { ZodType } from 'zod';
import {
  defOf as sharedDefOf,
  FileArg,
  uploadKindOf,
  unwrapArg,
  type SchemaDef,
  type UnwrappedArg,
} from '@lintel/commands';

/**
 * Reading zod 4 schemas (`schema._zod.def`) for what the CLI needs: which flags an argument schema gives,
 * and which columns a result has. Only the parts a command's schemas use are understood; anything else is
 * `json` (given as JSON on the command line).
 */
// the wrappers are read by the one walker of argument schemas, shared with the web's forms
export const defOf = sharedDefOf;
export type Unwrapped = UnwrappedArg;
export const unwrap = unwrapArg;

/** What one value is, as far as the command line cares. */
export type Shape =
  | { kind: 'text' }
  | { kind: 'number' }
  | { kind: 'boolean' }
  | { kind: 'choice'; choices: string[] }
  | { kind: 'list'; item: 'text' | 'number' | 'choice'; choices?: string[] }
  | { kind: 'object'; shape: Record<string, ZodType> }
  | { kind: 'json' }
  /** an uploaded file (`z.instanceof(Blob)`): the flag names a path */
  | { kind: 'file' };

const SCALARS: Record<string, Shape['kind']> = {
  string: 'text',
  number: 'number',
  int: 'number',
  bigint: 'number',
  boolean: 'boolean',
  date: 'text',
  template_literal: 'text',
};

function choicesOf(def: SchemaDef): string[] | null {
  const values =
    def.type === 'enum'
      ? Object.values(def.entries ?? {})
      : def.type === 'literal'
        ? (def.values ?? [])
        : null;
  return values && values.length && values.every((v) => typeof v === 'string') ? (values as string[]) : null;
}

/** The shape of a schema, plus whether a union allowed null (`z.union([X, z.null()])`). */
export function shapeOf(schema: ZodType): { shape: Shape; nullable: boolean } {
  const u = unwrap(schema);
  const { def } = u;
  const scalar = SCALARS[def.type];
  if (scalar) return { shape: { kind: scalar } as Shape, nullable: u.nullable };
  const choices = choicesOf(def);
  if (choices) return { shape: { kind: 'choice', choices }, nullable: u.nullable };
  if (def.type === 'object' && def.shape)
    return { shape: { kind: 'object', shape: def.shape }, nullable: u.nullable };
  if (def.type === 'array' && def.element) {
    const item = shapeOf(def.element).shape;
    if (item.kind === 'text' || item.kind === 'number')
      return { shape: { kind: 'list', item: item.kind }, nullable: u.nullable };
    if (item.kind === 'choice')
      return { shape: { kind: 'list', item: 'choice', choices: item.choices }, nullable: u.nullable };
    return { shape: { kind: 'json' }, nullable: u.nullable };
  }
  if (def.type === 'custom' && (schema === FileArg || uploadKindOf(schema)))
    return { shape: { kind: 'file' }, nullable: u.nullable };
  if (def.type === 'union' && def.options) {
    // `z.union([Email, z.literal('')])` is text; `z.union([X, z.null()])` is a nullable X
    let nullable = u.nullable;
    const parts: Shape[] = [];
    for (const option of def.options) {
      const o = unwrap(option);
      if (o.def.type === 'null' || (o.def.type === 'literal' && o.def.values?.every((v) => v === null)))
        nullable = true;
      else parts.push(shapeOf(option).shape);
      nullable ||= o.nullable;
    }
    const kinds = new Set(parts.map((p) => p.kind));
    if (parts.length && [...kinds].every((k) => k === 'text' || k === 'choice')) {
      if (kinds.has('text')) return { shape: { kind: 'text' }, nullable };
      const all = parts.flatMap((p) => (p.kind === 'choice' ? p.choices : []));
      return { shape: { kind: 'choice', choices: [...new Set(all)] }, nullable };
    }
    if (kinds.size === 1 && parts.length) return { shape: parts[0]!, nullable };
    return { shape: { kind: 'json' }, nullable };
  }
  return { shape: { kind: 'json' }, nullable: u.nullable };
}

/** The fields of an object schema (after unwrapping), or null when it is not one. */
export function objectShape(schema: ZodType): Record<string, ZodType> | null {
  const u = unwrap(schema);
  return u.def.type === 'object' && u.def.shape ? u.def.shape : null;
}

/** `{id, name}` (perhaps with more, like a marker's colour): an object naming a related entity, shown by its name. */
export function isRef(value: unknown): value is { id: unknown; name: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const v = value as { id?: unknown; name?: unknown };
  return typeof v.name === 'string' && (typeof v.id === 'number' || typeof v.id === 'string');
}
