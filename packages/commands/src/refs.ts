import { z } from 'zod';

/** `{id, name}`: how a record names a related entity. */
export const Ref = z.object({ id: z.number().int(), name: z.string() });
export type Ref = z.infer<typeof Ref>;
export const Id = z.number().int().min(1).max(2_147_483_647);
export const Ids = (max = 1000) => z.array(Id).max(max);
/** Letters (and emoji) a zero-width joiner or non-joiner may stand between: scripts that need them, not Latin, Cyrillic or Greek. */
const JOINABLE = /[\p{L}\p{M}\p{Extended_Pictographic}]/u;
const NO_JOINERS = /[\p{Script=Latin}\p{Script=Cyrillic}\p{Script=Greek}]/u;
const FORMAT_CHARACTER = /\p{Cf}/u;

/**
 * Whether a text holds characters that show nothing (Unicode's format characters: zero-width space, word
 * joiner, direction marks and overrides, soft hyphen, BOM, tags): "Administrator" with a zero-width space
 * looks like the real one (issue 20, item 10). The zero-width joiner and non-joiner pass only between two
 * characters of scripts (or emoji) that use them.
 */
export function hasInvisible(text: string): boolean {
  // almost every text holds no format character at all: one test of the whole text says so
  if (!FORMAT_CHARACTER.test(text)) return false;
  const chars = [...text];
  return chars.some((c, i) => {
    if (!FORMAT_CHARACTER.test(c)) return false;
    if (c !== '\u200c' && c !== '\u200d') return true;
    const joinable = (x = '') => JOINABLE.test(x) && !NO_JOINERS.test(x);
    return !(joinable(chars[i - 1]) && joinable(chars[i + 1]));
  });
}

/** 1 to 31 characters without the special characters of names (spec part 2 §5 "name-like field") */
export const NameLike = z
  .string()
  .trim()
  .min(1)
  .max(31)
  .regex(/^[^<>{}[\]\\/|`~^"';:=+*?!@#$%&]*$/, { message: 'name_chars' })
  .refine((s) => !hasInvisible(s), { message: 'invisible_chars' });
/** A name: 1 to `max` characters, none of them invisible */
export const Text = (max = 255) =>
  z
    .string()
    .trim()
    .min(1)
    .max(max)
    .refine((s) => !hasInvisible(s), { message: 'invisible_chars' });
export const Description = z.string().trim().max(2000).meta({ multiline: true });
export const Color = z.string().regex(/^#[0-9a-fA-F]{6}$/, { message: 'color' });
export const Timestamp = z.string();

/**
 * The noun of a family whose rows a picker lists by name: every family declared with pages (`ui`), known from
 * the registry (`refFamilyOf`, packages/commands/src/index.ts), so a new family is one with nothing to add.
 */
export type PickerFamily = string;

/**
 * Argument fields that hold another family's ids, wherever they appear (spec part 1 §2.4 "Pickers"), and
 * whether they hold one id or a list: the web forms draw a picker for them and the CLI palette lists the
 * family's rows by name. A field of the same name and another shape (`users` as a count) is no reference.
 */
export const REF_FIELDS: Record<string, { family: PickerFamily; many: boolean }> = {
  // the families' own reference fields come from their declarations (`defineResource({refs})`)
  users: { family: 'user', many: true },
  user_id: { family: 'user', many: false },
  // a device's Axxon One camera names its integration (device_settings.integration_axxon)
  integration_id: { family: 'integration', many: false },
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

/** A family's picker line, declared with the family (`defineResource({picker})`): dotted paths into a row. */
export interface PickerHints {
  /** the secondary line: `login`, `parent.name`; a list of `{name}` (a group's `path`) reads "A › B" */
  hint?: string;
  /** a code after the secondary line: a group's logical address */
  code?: string;
  /** a colour swatch */
  color?: string;
}

const pickerHints = new Map<string, PickerHints>();

/** Called by `defineResource`: the family's picker line and the reference fields it declares. */
export function declarePicker(
  family: string,
  hints: PickerHints | undefined,
  refs: Readonly<Record<string, { family: string; many: unknown }>> | undefined,
): void {
  if (hints) pickerHints.set(family, hints);
  for (const [field, ref] of Object.entries(refs ?? {}))
    REF_FIELDS[field] ??= { family: ref.family as PickerFamily, many: !!ref.many };
}

const at = (r: Record<string, unknown>, path: string): unknown =>
  path
    .split('.')
    .reduce<unknown>(
      (v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined),
      r,
    );

/** A row of a family's list reply as a picker shows it. */
export function pickerRow(family: string, r: Record<string, unknown>): PickerRow {
  const row: PickerRow = { id: Number(r.id), name: String(r.name ?? r.id) };
  const hints = pickerHints.get(family);
  const raw = hints?.hint ? at(r, hints.hint) : undefined;
  const hint = Array.isArray(raw)
    ? raw
        .map((x) => (x && typeof x === 'object' ? (x as { name?: unknown }).name : x))
        .filter((x): x is string => typeof x === 'string' && x !== '')
        .join(' › ')
    : raw;
  const code = hints?.code ? at(r, hints.code) : undefined;
  const color = hints?.color ? at(r, hints.color) : undefined;
  const parts = [hint, code].filter((x): x is string => typeof x === 'string' && x !== '');
  if (parts.length) row.hint = parts.join(' · ');
  if (typeof color === 'string') row.color = color;
  return row;
}
