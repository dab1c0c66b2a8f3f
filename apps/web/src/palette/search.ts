import { defaultFilter } from 'cmdk';
import type { Family } from '../forms/schema';

export interface Searchable {
  /** the title in the interface language first, then in the other languages */
  titles: readonly string[];
  /** more words that should find it (a command id, a path) */
  keywords?: readonly string[];
}

/**
 * How well an item matches what was typed, 0 for no match: cmdk's fuzzy scoring over the title in the
 * interface language and the other language's title, so `польз` and `user` both find "Users".
 */
export function scoreOf(item: Searchable, query: string): number {
  const q = query.trim();
  if (!q) return 1;
  const [first = '', ...rest] = item.titles;
  let best = defaultFilter(first, q, [...rest, ...(item.keywords ?? [])]);
  // each title on its own too, so a title in one language is not diluted by the other
  for (const title of item.titles) best = Math.max(best, defaultFilter(title, q));
  return best;
}

/** Items that match, best first; ties keep their order (recent before the rest). */
export function rank<T extends Searchable>(items: readonly T[], query: string): T[] {
  if (!query.trim()) return [...items];
  return items
    .map((item, i) => ({ item, i, score: scoreOf(item, query) }))
    .filter((x) => x.score > 0)
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .map((x) => x.item);
}

/** Words that say which family to look in, and "open", in every language (from the locales). */
export interface EntityWords {
  open: readonly string[];
  families: Readonly<Record<Family, readonly string[]>>;
}

/**
 * Reads "open user Anna", "user anna", "открыть группу Дом 3" or just "Anna": the families to search and
 * the text to search for. Null when there is too little to search.
 */
export function parseEntityQuery(
  query: string,
  words: EntityWords,
  families: readonly Family[],
): { families: Family[]; text: string } | null {
  let rest = query.trim().replace(/\s+/g, ' ');
  const lower = () => rest.toLowerCase();
  for (const w of words.open) {
    if (lower().startsWith(`${w.toLowerCase()} `)) {
      rest = rest.slice(w.length + 1);
      break;
    }
  }
  let only: Family | null = null;
  outer: for (const f of families) {
    for (const w of words.families[f] ?? []) {
      const l = lower();
      if (l === w.toLowerCase() || l.startsWith(`${w.toLowerCase()} `)) {
        only = f;
        rest = rest.slice(w.length).trim();
        break outer;
      }
    }
  }
  if (rest.length < 2) return null;
  return { families: only ? [only] : [...families], text: rest };
}
