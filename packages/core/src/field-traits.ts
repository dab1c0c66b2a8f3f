/**
 * Field traits, declared on an argument schema with zod's `.meta()` (put last in the chain: zod keeps meta
 * on the one instance that `.meta()` returns). Forms and the CLI read them (`traitsOf` in
 * packages/commands/src/args-schema.ts) instead of guessing from a field's name.
 */
declare module 'zod/v4/core' {
  interface GlobalMeta {
    /** a password or the like: masked, never echoed, never shown back */
    secret?: boolean;
    /** a long text: a textarea in forms */
    multiline?: boolean;
    /** no form shows it; the string says why (paging and filters: tables and pickers do that) */
    hidden?: string;
    /** a day, `YYYY-MM-DD`: a date input in forms */
    date?: boolean;
    /** seconds after local midnight (0 to 86,400): shown and typed as a time of day, `09:00` */
    timeOfDay?: boolean;
  }
}

export type FieldTraitName = 'secret' | 'multiline' | 'hidden' | 'date' | 'timeOfDay';
