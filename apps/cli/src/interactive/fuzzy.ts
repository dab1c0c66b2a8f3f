/**
 * The palette's fuzzy match: every word typed must be found in one of an item's texts (its title in each
 * language, its command words), as a substring or as the starts of words in order. Substrings beat
 * word starts, and a word's start beats its middle, so `us li` finds "List users" (`users list`) first.
 */

const isWordChar = (c: string | undefined) => !!c && /[\p{L}\p{N}]/u.test(c);

/** How well one typed word matches one text; 0 when it does not. */
export function termScore(text: string, term: string): number {
  const s = text.toLocaleLowerCase();
  const q = term.toLocaleLowerCase();
  if (!q) return 1;
  const at = s.indexOf(q);
  if (at >= 0) {
    // the earliest match at a word start, if any
    let start = at;
    while (start >= 0 && start > 0 && isWordChar(s[start - 1])) start = s.indexOf(q, start + 1);
    if (start === 0) return 300;
    if (start > 0) return 250 - Math.min(start, 50);
    return 150 - Math.min(at, 50);
  }
  // letters in order, as chunks that each begin a word (`lu` for "List users", `crus` for "Create user"):
  // a letter goes on the chunk before it, or starts the next word that has it
  let score = 0;
  let from = 0;
  let last = -2;
  for (const ch of q) {
    let i = -1;
    if (last >= 0 && s[last + 1] === ch) i = last + 1;
    else {
      for (let j = s.indexOf(ch, from); j >= 0; j = s.indexOf(ch, j + 1)) {
        if (!isWordChar(s[j - 1])) {
          i = j;
          break;
        }
      }
    }
    if (i < 0) return 0;
    score += i === last + 1 ? 8 : 6;
    last = i;
    from = i + 1;
  }
  return Math.max(1, Math.min(100, score));
}

/** The score of an item's texts for a query of one or more words; 0 when a word matches none of them. */
export function scoreOf(texts: readonly string[], query: string): number {
  const terms = query.trim().split(/\s+/).filter(Boolean);
  let total = 0;
  for (const term of terms) {
    const best = Math.max(0, ...texts.map((t) => termScore(t, term)));
    if (!best) return 0;
    total += best;
  }
  return terms.length ? total : 1;
}

/** Items that match, best first; ties keep their order. */
export function rank<T>(items: readonly T[], query: string, texts: (item: T) => readonly string[]): T[] {
  if (!query.trim()) return [...items];
  return items
    .map((item, i) => ({ item, i, score: scoreOf(texts(item), query) }))
    .filter((x) => x.score > 0)
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .map((x) => x.item);
}
