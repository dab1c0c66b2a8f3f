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

/** Is `piece` a subsequence of `word` that starts at the word's first letter (`grps` in "groups")? */
function startsWithin(piece: string, word: string): boolean {
  if (!piece || word[0] !== piece[0]) return false;
  let at = 1;
  for (const ch of piece.slice(1)) {
    at = word.indexOf(ch, at) + 1;
    if (at === 0) return false;
  }
  return true;
}

/**
 * Does a typed word abbreviate the words of a text, in order: cut into pieces, each piece the letters of one
 * word from its first letter on (`crus`: "CReate USer", `grps`: "GRouPS", `rstdev`: "ReSTart DEVice")?
 */
function abbreviates(typed: string, have: readonly string[], from = 0, wordFrom = 0): boolean {
  if (from === typed.length) return true;
  for (let w = wordFrom; w < have.length; w++)
    for (let end = typed.length; end > from; end--) {
      // a single letter stands for a word only at the end (`devt`: DEVice Tasks); in the middle it lets
      // any word through ("dial": Device, Activity, Last)
      if (end - from === 1 && end < typed.length) continue;
      if (startsWithin(typed.slice(from, end), have[w]!) && abbreviates(typed, have, end, w + 1)) return true;
    }
  return false;
}

/**
 * Scattered letters find commands from few keys (`usr`, `grps`, `crus`), but a word typed whole must not
 * bring up what merely holds its letters somewhere ("call" found "Cancel an import of users", "dial" "Show
 * the device's credentials", "door" "Issue the device a new password": issue 25 item 10). Beyond three keys
 * a scattered match counts only when each typed word abbreviates words of one title (not of a keyword: a
 * command id's words, `device.delete_all`, would let "dial" through).
 */
function abbreviated(item: Searchable, query: string): boolean {
  const typed = words(query);
  return item.titles.some((text) => {
    const have = words(text);
    return typed.every((w) => abbreviates(w, have));
  });
}
const keys = (query: string) => query.replace(/\s+/g, '').length;

/**
 * Items that match, best first: whole-word matches before scattered-letter ones, then by score; ties keep
 * their order (recent before the rest, the screen's and the pages before commands before rows found).
 */
export function rank<T extends Searchable>(items: readonly T[], query: string): T[] {
  if (!query.trim()) return [...items];
  const short = keys(query) <= 3;
  return items
    .map((item, i) => ({ item, i, score: scoreOf(item, query), tier: tierOf(item, query) }))
    .filter((x) => x.score > 0 && (x.tier === 2 || short || abbreviated(x.item, query)))
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

/** Deletions after the other commands, each part in the registry's order. */
export function byRisk<C extends { id: string; http: { method: string } }>(commands: readonly C[]): C[] {
  const risky = (c: C) => c.http.method === 'DELETE' || /\.delete(_|$)/.test(c.id);
  return [...commands.filter((c) => !risky(c)), ...commands.filter(risky)];
}
