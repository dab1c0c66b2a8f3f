import type { Family } from '../forms/schema';

/** What the palette shows first: recently run commands, opened pages and opened rows (localStorage). */
export type RecentItem =
  | { kind: 'command'; id: string }
  | { kind: 'page'; path: string }
  | { kind: 'entity'; family: Family; id: number; name: string };

const KEY = 'lintel.palette.recent';
const MAX = 8;

const same = (a: RecentItem, b: RecentItem) =>
  a.kind === b.kind &&
  (a.kind === 'command'
    ? a.id === (b as typeof a).id
    : a.kind === 'page'
      ? a.path === (b as typeof a).path
      : a.family === (b as typeof a).family && a.id === (b as typeof a).id);

export function recentItems(): RecentItem[] {
  try {
    const raw = JSON.parse(window.localStorage.getItem(KEY) ?? '[]') as unknown;
    return Array.isArray(raw)
      ? (raw as RecentItem[]).filter((r) => r && typeof r === 'object' && 'kind' in r)
      : [];
  } catch (err) {
    // an unparsable stored setting is logged and read as empty (spec part 2 §8)
    console.warn('lintel: recent items unreadable', err);
    return [];
  }
}

export function rememberRecent(item: RecentItem): void {
  try {
    const next = [item, ...recentItems().filter((r) => !same(r, item))].slice(0, MAX);
    window.localStorage.setItem(KEY, JSON.stringify(next));
  } catch {
    // storage blocked: nothing remembered
  }
}
