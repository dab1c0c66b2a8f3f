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

/** The families whose rows a picker lists (each has a `<family>.list` command with `search`). */
export const PickerFamilies = ['user', 'group', 'role', 'marker', 'domain_type'] as const;
export type PickerFamily = (typeof PickerFamilies)[number];

/**
 * Argument fields that hold another family's ids, wherever they appear (spec part 1 §2.4 "Pickers"), and
 * whether they hold one id or a list: the web forms draw a picker for them and the CLI palette lists the
 * family's rows by name. A field of the same name and another shape (`users` as a count) is no reference.
 */
export const REF_FIELDS: Readonly<Record<string, { family: PickerFamily; many: boolean }>> = {
  role: { family: 'role', many: false },
  available_roles: { family: 'role', many: true },
  domains: { family: 'group', many: true },
  parent_id: { family: 'group', many: false },
  markers: { family: 'marker', many: true },
  domain_type_id: { family: 'domain_type', many: false },
  users: { family: 'user', many: true },
  user_id: { family: 'user', many: false },
};

/** One row of a picker: the name, and a secondary line per family. */
export interface PickerRow {
  id: number;
  name: string;
  /** a user's login, the group a group sits in, a domain type's type */
  hint?: string;
  /** a marker's colour */
  color?: string;
}

/** What a picker asks `<family>.list` for: the rows whose name has what is typed, by name, a page at a time. */
export const pickerQuery = (search: string, page: number, limit: number) => ({
  search: search.trim() || undefined,
  page,
  limit,
  sort: 'name',
});

/** A row of a family's list reply as a picker shows it. */
export function pickerRow(family: PickerFamily, r: Record<string, unknown>): PickerRow {
  const row: PickerRow = { id: Number(r.id), name: String(r.name ?? r.id) };
  if (family === 'user' && typeof r.login === 'string') row.hint = r.login;
  if (family === 'group') {
    const parent = r.parent as { name?: string } | null | undefined;
    if (parent?.name) row.hint = parent.name;
  }
  if (family === 'domain_type' && typeof r.type === 'string') row.hint = r.type;
  if (family === 'marker' && typeof r.color === 'string') row.color = r.color;
  return row;
}
