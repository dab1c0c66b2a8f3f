import type { Command } from '@lintel/commands';
import { hasText, tr } from '../i18n';
import { splitId } from './words';

/** `send_registration_link` → `Send registration link`: the last resort for a field without a label. */
export const humanize = (key: string) => {
  const s = key.replace(/[_.-]+/g, ' ').trim();
  return s.charAt(0).toUpperCase() + s.slice(1);
};

const lookup = (key: string): string | null => (hasText(key) ? tr(key) : null);

/** A command's title: `commands:<id>.label`. */
export function commandTitle(cmd: Pick<Command, 'id'>): string {
  return lookup(`commands:${cmd.id}.label`) ?? humanize(splitId(cmd.id).verb);
}

/**
 * A field's label: `commands:fields.<noun>.<field>`, else the CLI's generic word (`cli:fields.<field>`:
 * page, limit, id...), else the name itself. Nested fields read `Parent: leaf` (`Profile: Phone`).
 */
export function fieldLabel(noun: string, path: readonly string[] | string): string {
  const parts = typeof path === 'string' ? path.split('.') : [...path];
  const one = (key: string) =>
    lookup(`commands:fields.${noun}.${key}`) ?? lookup(`cli:fields.${key}`) ?? humanize(key);
  return parts.map(one).join(': ');
}

/** A family's line in `lintel --help`: `cli:families.<word>`, else its verbs. */
export function familyDescription(word: string, verbs: readonly string[]): string {
  return lookup(`cli:families.${word}`) ?? verbs.join(', ');
}
