import { z } from 'zod';

/** `{id, name}`: how a record names a related entity. */
export const Ref = z.object({ id: z.number().int(), name: z.string() });
export type Ref = z.infer<typeof Ref>;
export const Id = z.number().int().min(1).max(2_147_483_647);
export const Ids = (max = 1000) => z.array(Id).max(max);
/** 1 to 31 characters without the special characters of names (spec part 2 §5 "name-like field") */
export const NameLike = z
  .string()
  .trim()
  .min(1)
  .max(31)
  .regex(/^[^<>{}[\]\\/|`~^"';:=+*?!@#$%&]*$/, { message: 'name_chars' });
export const Text = (max = 255) => z.string().trim().min(1).max(max);
export const Description = z.string().trim().max(2000);
export const Color = z.string().regex(/^#[0-9a-fA-F]{6}$/, { message: 'color' });
export const Timestamp = z.string();
