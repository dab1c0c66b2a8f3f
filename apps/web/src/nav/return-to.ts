import { useCallback } from 'react';
import { useLocation, useNavigate, useSearchParams } from 'react-router';

const KEY = 'lintel.pages';
const MAX = 30;

type Stored = Record<string, { path: string; at: number }>;

function read(): Stored {
  try {
    return JSON.parse(window.sessionStorage.getItem(KEY) ?? '{}') as Stored;
  } catch {
    return {};
  }
}

/** Remembers where the person was and returns the pageId that names it. */
export function rememberPage(path: string): string {
  const id = Math.random().toString(36).slice(2, 10);
  const all = read();
  all[id] = { path, at: Date.now() };
  const kept = Object.entries(all)
    .sort((a, b) => b[1].at - a[1].at)
    .slice(0, MAX);
  try {
    window.sessionStorage.setItem(KEY, JSON.stringify(Object.fromEntries(kept)));
  } catch {
    // not remembered: "back" goes to the parent page
  }
  return id;
}

export function storedPage(id: string | null): string | null {
  if (!id) return null;
  const path = read()[id]?.path;
  return path && path.startsWith('/') && !path.startsWith('//') ? path : null;
}

/**
 * Add and edit screens are opened with a `pageId` naming the page they came from (spec part 1 §2.2), and
 * go back there when done; without one they go to `fallback` (the list).
 */
export function useOpenWithReturn() {
  const navigate = useNavigate();
  const location = useLocation();
  return useCallback(
    (to: string) => {
      // the address as it is now: a table writes its view into it without the router (table-url.ts)
      const pageId = rememberPage(window.location.pathname + window.location.search);
      navigate(`${to}${to.includes('?') ? '&' : '?'}pageId=${pageId}`);
    },
    [navigate, location.pathname, location.search],
  );
}

export function useGoBack(fallback: string) {
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const target = storedPage(params.get('pageId')) ?? fallback;
  return useCallback(() => navigate(target), [navigate, target]);
}
