import { i18next } from '../i18n';

/**
 * An enum value in words of the interface language: `web:values.<field>.<value>` (the key the forms use, and
 * the locale test asks of every family's enum values), else the value itself.
 */
export function enumWord(field: string, value: string): string {
  const key = `web:values.${field}.${value}`;
  return i18next.exists(key) ? (i18next.t as unknown as (k: string) => string)(key) : value;
}
