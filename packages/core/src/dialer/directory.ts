/**
 * The dialer's contacts and recents (spec part 1 §2.5), pure: contacts grouped by the first letter of their
 * name ("?" when it has none that is a letter), recents seen from the user's own number and grouped by the
 * day in his time zone, and a call's duration as the card shows it.
 */

export interface ContactGroup<C> {
  /** the first letter, upper case, or `?` */
  letter: string;
  contacts: C[];
}

/** The first letter of a name (any script), upper case; `?` for a name that starts with none. */
export function contactLetter(name: string | null | undefined): string {
  const first = (name ?? '').trim().charAt(0);
  return /\p{L}/u.test(first) ? first.toLocaleUpperCase() : '?';
}

/** Contacts by first letter, letters in the locale's order and `?` last; each group sorted by name. */
export function groupContacts<C extends { name: string | null }>(
  contacts: readonly C[],
  locale = 'en',
): ContactGroup<C>[] {
  const collator = new Intl.Collator(locale, { sensitivity: 'base' });
  const groups = new Map<string, C[]>();
  for (const c of contacts) {
    const letter = contactLetter(c.name);
    groups.set(letter, [...(groups.get(letter) ?? []), c]);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => (a === '?' ? 1 : b === '?' ? -1 : collator.compare(a, b)))
    .map(([letter, list]) => ({
      letter,
      contacts: [...list].sort((x, y) => collator.compare(x.name ?? '', y.name ?? '')),
    }));
}

export interface HistoryLike {
  from: { number: string; user: { name: string } | null };
  to: { number: string; user: { name: string } | null };
  created_at: string;
}

/** A history row seen from `own`: which way it went for him, and the other party. */
export function recentOf<H extends HistoryLike>(
  row: H,
  own: string,
): H & { way: 'incoming' | 'outgoing'; other: { number: string; name: string | null } } {
  const outgoing = row.from.number === own;
  const other = outgoing ? row.to : row.from;
  return {
    ...row,
    way: outgoing ? 'outgoing' : 'incoming',
    other: { number: other.number, name: other.user?.name ?? null },
  };
}

/** The calendar day of an instant in a time zone, `YYYY-MM-DD`: the key recents are grouped by. */
export function dayKey(iso: string, timeZone?: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).formatToParts(new Date(iso));
  const part = (t: string) => parts.find((p) => p.type === t)?.value ?? '';
  return `${part('year')}-${part('month')}-${part('day')}`;
}

/** Rows (newest first) grouped by their day, in the order they come. */
export function groupByDay<H extends { created_at: string }>(
  rows: readonly H[],
  timeZone?: string,
): { day: string; rows: H[] }[] {
  const out: { day: string; rows: H[] }[] = [];
  for (const r of rows) {
    const day = dayKey(r.created_at, timeZone);
    const last = out.at(-1);
    if (last?.day === day) last.rows.push(r);
    else out.push({ day, rows: [r] });
  }
  return out;
}

/** Seconds of talk as `m:ss`, or `h:mm:ss` from an hour. */
export function callDuration(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

/**
 * The groups of the interception panel whose name holds `query` (spec part 1 §2.5, searched as the spec's
 * pickers are): any case, any script (the locale's lower case), spaces at the ends ignored; all of them for an
 * empty query. The order is kept.
 */
export function searchByName<G extends { name: string | null }>(groups: readonly G[], query: string): G[] {
  const q = query.trim().toLocaleLowerCase();
  if (!q) return [...groups];
  return groups.filter((g) => (g.name ?? '').toLocaleLowerCase().includes(q));
}
