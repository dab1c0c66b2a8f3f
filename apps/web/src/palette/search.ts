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

const words = (text: string) =>
  text
    .toLowerCase()
    .split(/[\s.,:;/()\-_·›]+/)
    .filter(Boolean);

/**
 * 2 when every word typed starts a word of a title or keyword (`anna k` in "Anna Kowalska", `cre us` in
 * "Create user"), 1 for a match by scattered letters only. Scattered letters find commands from few keys,
 * but must never put "Change role permissions" above the person named what was typed (issue 13 point 6).
 */
export function tierOf(item: Searchable, query: string): number {
  const typed = words(query);
  if (!typed.length) return 1;
  for (const text of [...item.titles, ...(item.keywords ?? [])]) {
    const have = words(text);
    if (typed.every((w) => have.some((h) => h.startsWith(w)))) return 2;
  }
  return 1;
}

/**
 * Items that match, best first: whole-word matches before scattered-letter ones, then by score; ties keep
 * their order (recent before the rest, the screen's and the pages before commands before rows found).
 */
export function rank<T extends Searchable>(items: readonly T[], query: string): T[] {
  if (!query.trim()) return [...items];
  return items
    .map((item, i) => ({ item, i, score: scoreOf(item, query), tier: tierOf(item, query) }))
    .filter((x) => x.score > 0)
    .sort((a, b) => b.tier - a.tier || b.score - a.score || a.i - b.i)
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

/**
 * What the palette lists for a query: the screen's actions, the recent items, pages, commands and the rows
 * found by name on the server, ranked together, so that typing a person's name puts the person first and
 * Enter opens them (issue 13 point 6). A row the server found by another field (a login, an e-mail) that
 * the name does not match follows, in `more`.
 */
export function rankWithFound<T extends Searchable & { key: string }>(
  listed: readonly T[],
  found: readonly T[],
  query: string,
  max = 40,
): { best: T[]; more: T[] } {
  const listedKeys = new Set(listed.map((e) => e.key));
  const rows = found.filter((f) => !listedKeys.has(f.key));
  const best = rank([...listed, ...rows], query).slice(0, max);
  const shown = new Set(best.map((e) => e.key));
  return { best, more: rows.filter((f) => !shown.has(f.key)) };
}
