import { z, type ZodObject, type ZodType } from 'zod';

type Loose<T> = T extends z.ZodDefault<infer I> ? I : T;
type WithoutDefaults<S extends Record<string, ZodType>> = {
  [K in keyof S]: z.ZodOptional<Loose<S[K]>>;
};

/**
 * The update of a create schema: every field optional and none defaulted. zod's `.partial()` keeps the
 * defaults (zod 4 applies a default inside an optional), so a PATCH of one field would reset the others to
 * their defaults — an access rule's users and groups emptied by a change of its name.
 */
export function withoutDefaults<S extends Record<string, ZodType>>(
  schema: ZodObject<S>,
): ZodObject<WithoutDefaults<S>> {
  const shape: Record<string, ZodType> = {};
  for (const [k, s] of Object.entries(schema.shape))
    shape[k] = (s instanceof z.ZodDefault ? (s.unwrap() as ZodType) : s).optional();
  return z.object(shape) as unknown as ZodObject<WithoutDefaults<S>>;
}
