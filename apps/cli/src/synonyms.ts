import { registry } from '@lintel/commands';
import { families } from './families/words';

/**
 * Words people type for a verb that is spelled otherwise here (`users edit` is `users update`): too far
 * apart for commander's edit distance, so an unknown command suggests them by meaning.
 */
const SYNONYMS: Record<string, string> = {
  edit: 'update',
  modify: 'update',
  change: 'update',
  set: 'update',
  rm: 'delete',
  remove: 'delete',
  del: 'delete',
  destroy: 'delete',
  show: 'get',
  view: 'get',
  info: 'get',
  describe: 'get',
  ls: 'list',
  find: 'list',
  new: 'create',
  add: 'create',
  make: 'create',
};

/** The verb an unknown word means, when some family has it. */
export function synonymOf(word: string): string | undefined {
  const verb = SYNONYMS[word.toLowerCase()];
  if (!verb) return undefined;
  const known = families(registry).some((f) => f.verbs.some((v) => v.word === verb));
  return known ? verb : undefined;
}
