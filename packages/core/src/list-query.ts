import { z } from 'zod';

/**
 * The list-filter language of spec part 2 §7: entries `(field, rule, value)` joined by match-all or
 * match-any, plus free-text search, sort and paging. The web's filter chips, the CLI's `--where` and the
 * API's query string all write this one structure.
 */
export const FilterRules = [
  'equals',
  'not_equals',
  'contains',
  'has',
  'above',
  'below',
  'begins_with',
] as const;
export type FilterRule = (typeof FilterRules)[number];

/** What a field holds decides which rules apply to it. */
export type FieldKind = 'text' | 'number' | 'boolean' | 'date' | 'enum' | 'ref' | 'refs';

export const RulesByKind: Record<FieldKind, readonly FilterRule[]> = {
  text: ['equals', 'not_equals', 'contains', 'begins_with'],
  enum: ['equals', 'not_equals'],
  number: ['equals', 'not_equals', 'above', 'below'],
  date: ['equals', 'not_equals', 'above', 'below'],
  boolean: ['equals', 'not_equals'],
  ref: ['equals', 'not_equals'],
  // `has`: the row's set holds the id; `equals`: the row's set is exactly the ids given (see relationSetOf)
  refs: ['has', 'equals'],
};

/** The most ids one `equals` filter of a relation names (its value is at most 255 characters anyway). */
export const MAX_RELATION_FILTER_IDS = 50;

/**
 * The ids of an `equals` filter on a many-valued field (`refs`): one id (a number or its digits), or several
 * joined by commas (`"3,5,8"`, the text form `devices equals 3,5,8`); `""` or null is the empty set (the rows
 * related to nothing). Each id once; undefined when the value is none of these.
 */
export function relationSetOf(value: unknown): number[] | undefined {
  if (value === null || value === '') return [];
  if (typeof value === 'number') return Number.isSafeInteger(value) && value > 0 ? [value] : undefined;
  if (typeof value !== 'string' || !/^\s*\d+(\s*,\s*\d+)*\s*$/.test(value)) return undefined;
  const ids = [...new Set(value.split(',').map((v) => Number(v.trim())))];
  if (
    ids.length > MAX_RELATION_FILTER_IDS ||
    ids.some((n) => !Number.isSafeInteger(n) || n < 1 || n > 2_147_483_647)
  )
    return undefined;
  return ids;
}

export const FilterValue = z.union([z.string().max(255), z.number(), z.boolean(), z.null()]);
export const Filter = z
  .object({ field: z.string().min(1).max(64), rule: z.enum(FilterRules), value: FilterValue })
  .strict();
export type Filter = z.infer<typeof Filter>;

const fromJson = (v: unknown) => {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
};

export const MAX_LIST_LIMIT = 1000;
export const DEFAULT_LIST_LIMIT = 50;
/** The most filters one list call takes. */
export const MAX_LIST_FILTERS = 20;

const PAGING = { hidden: 'paging, sorting and filters: the tables and pickers do them, not a form' };

/** The query of every list call. On the wire `filters` is a JSON array; in process it is the array. */
export const ListQuery = z
  .object({
    page: z.coerce.number().int().min(1).max(1_000_000).default(1).meta(PAGING),
    limit: z.coerce.number().int().min(1).max(MAX_LIST_LIMIT).default(DEFAULT_LIST_LIMIT).meta(PAGING),
    sort: z
      .string()
      .regex(/^-?[a-z_][a-z0-9_]*$/, { message: 'invalid_format' })
      .max(65)
      .optional()
      .meta(PAGING),
    search: z.string().max(255).optional(),
    filters: z.preprocess(fromJson, z.array(Filter).max(MAX_LIST_FILTERS)).optional().meta(PAGING),
    match: z.enum(['all', 'any']).default('all').meta(PAGING),
  })
  .strict();
export type ListQuery = z.input<typeof ListQuery>;
export type ParsedListQuery = z.output<typeof ListQuery>;

export const ListMeta = z.object({
  /** rows matching: exact, or with `total_is_estimate` the planner's estimate (docs/decisions.md, issue 14) */
  total: z.number().int(),
  total_is_estimate: z.boolean().default(false),
  page: z.number().int(),
  limit: z.number().int(),
});
export const listReply = <T extends z.ZodType>(item: T) => z.object({ data: z.array(item), meta: ListMeta });

export interface FilterableField {
  kind: FieldKind;
  /** for enums: the allowed values */
  values?: readonly string[];
}

/** Checks filters against the fields a family declares; each problem names the filter and rule. */
export function checkFilters(
  filters: readonly Filter[],
  fields: Readonly<Record<string, FilterableField>>,
): { field: string; rule: string; params?: Record<string, unknown> }[] {
  const problems: { field: string; rule: string; params?: Record<string, unknown> }[] = [];
  filters.forEach((f, i) => {
    const def = Object.hasOwn(fields, f.field) ? fields[f.field] : undefined;
    if (!def) {
      problems.push({ field: `filters.${i}.field`, rule: 'one_of', params: { values: Object.keys(fields) } });
      return;
    }
    const rules = RulesByKind[def.kind];
    if (!rules.includes(f.rule)) {
      problems.push({ field: `filters.${i}.rule`, rule: 'one_of', params: { values: [...rules] } });
      return;
    }
    const v = f.value;
    if (def.kind === 'refs' && f.rule === 'equals') {
      if (!relationSetOf(v))
        problems.push({ field: `filters.${i}.value`, rule: 'invalid_type', params: { expected: def.kind } });
      return;
    }
    const bad =
      def.kind === 'number' || def.kind === 'ref' || def.kind === 'refs'
        ? !(
            typeof v === 'number' ||
            (typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v)) ||
            (v === null && def.kind === 'ref')
          )
        : def.kind === 'boolean'
          ? !(typeof v === 'boolean' || v === 'true' || v === 'false')
          : def.kind === 'date'
            ? !(typeof v === 'string' && !Number.isNaN(Date.parse(v)))
            : def.kind === 'enum'
              ? !(typeof v === 'string' && (def.values ?? []).includes(v))
              : !(typeof v === 'string' || typeof v === 'number');
    if (bad)
      problems.push(
        def.kind === 'enum'
          ? { field: `filters.${i}.value`, rule: 'one_of', params: { values: [...(def.values ?? [])] } }
          : { field: `filters.${i}.value`, rule: 'invalid_type', params: { expected: def.kind } },
      );
  });
  return problems;
}

// ----- the text form: `--where 'name contains ann'`, chips, saved filters ---------------------------------

const RULE_WORDS: Record<string, FilterRule> = {
  equals: 'equals',
  '=': 'equals',
  '==': 'equals',
  is: 'equals',
  not_equals: 'not_equals',
  '!=': 'not_equals',
  'not equals': 'not_equals',
  'is not': 'not_equals',
  contains: 'contains',
  '~': 'contains',
  has: 'has',
  above: 'above',
  '>': 'above',
  below: 'below',
  '<': 'below',
  begins_with: 'begins_with',
  'begins with': 'begins_with',
  '^=': 'begins_with',
};

export class WhereSyntaxError extends Error {
  constructor(readonly at: string) {
    super(`cannot read the filter at: ${at}`);
  }
}

const unescapeQuoted = (body: string, quote: '"' | "'"): string =>
  body.replace(/\\([\s\S])/g, (all, c: string) => (c === quote || c === '\\' ? c : all));

/**
 * Reads `name contains ann and role equals 3` (or `or`). Values may be quoted ('…' or "…") to hold spaces,
 * the words and/or, or quotes: inside quotes `\"` (or `\'`) is the quote and `\\` a backslash; any other
 * backslash stays as typed (`"C:\dir"`). Numbers stay strings here; the server reads them by the field's kind.
 */
export function parseWhere(text: string): { filters: Filter[]; match: 'all' | 'any' } {
  const filters: Filter[] = [];
  let match: 'all' | 'any' | null = null;
  let rest = text.trim();
  const ruleAlternatives = Object.keys(RULE_WORDS)
    .sort((a, b) => b.length - a.length)
    .map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/ /g, '\\s+'))
    .join('|');
  const clause = new RegExp(
    `^([a-z_][a-z0-9_.]*)\\s*(${ruleAlternatives})\\s*("((?:[^"\\\\]|\\\\[\\s\\S])*)"|'((?:[^'\\\\]|\\\\[\\s\\S])*)'|(\\S+(?:\\s+(?!and\\b|or\\b)\\S+)*))`,
    'i',
  );
  while (rest) {
    const m = clause.exec(rest);
    if (!m) throw new WhereSyntaxError(rest);
    const rule = RULE_WORDS[m[2]!.toLowerCase().replace(/\s+/g, ' ')]!;
    const quoted = m[4] !== undefined || m[5] !== undefined;
    // inside quotes a backslash escapes the quote and itself; any other backslash is kept as typed
    const raw =
      m[4] !== undefined
        ? unescapeQuoted(m[4], '"')
        : m[5] !== undefined
          ? unescapeQuoted(m[5], "'")
          : (m[6] ?? '');
    const value =
      !quoted && /^(true|false)$/i.test(raw)
        ? raw.toLowerCase() === 'true'
        : !quoted && raw === 'null'
          ? null
          : raw;
    filters.push({ field: m[1]!, rule, value });
    rest = rest.slice(m[0].length).trim();
    if (!rest) break;
    const joiner = /^(and|or)\s+/i.exec(rest);
    if (!joiner) throw new WhereSyntaxError(rest);
    const j = joiner[1]!.toLowerCase() === 'and' ? 'all' : 'any';
    if (match && match !== j) throw new WhereSyntaxError(rest);
    match = j;
    rest = rest.slice(joiner[0].length);
  }
  return { filters, match: match ?? 'all' };
}

/** The text form of filters, the inverse of parseWhere. */
export function formatWhere(filters: readonly Filter[], match: 'all' | 'any' = 'all'): string {
  return filters
    .map((f) => {
      const v =
        f.value === null
          ? 'null'
          : typeof f.value === 'string' &&
              (/[\s"'\\]|^(and|or|true|false|null)$/i.test(f.value) || f.value === '')
            ? `"${f.value.replace(/["\\]/g, (c) => `\\${c}`)}"`
            : String(f.value);
      return `${f.field} ${f.rule} ${v}`;
    })
    .join(match === 'all' ? ' and ' : ' or ');
}
