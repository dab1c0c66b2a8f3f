import type { FieldOverride } from '../../forms/command-form';

/** What the user screens do differently from the generated form. */
export const userOverrides: Record<string, FieldOverride> = {
  login: { autoFocus: true },
};
