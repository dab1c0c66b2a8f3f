import {
  useCallback,
  useEffect,
  useMemo,
  useRef,
  useState,
  useSyncExternalStore,
  type Dispatch,
  type SetStateAction,
} from 'react';
import { useTranslation } from 'react-i18next';
import type { SortingState, Updater } from '@tanstack/react-table';
import { formatCount, roundEstimate } from './format';
import { runList } from './list-call';
import { useLiveRows } from './live-rows';
import { PageLoader, PAGE_SIZE, type LoaderSummary } from './page-loader';
import { writeView } from './table-url';
import { buildListQuery, emptyQuery, queryKey, type TableQuery, type TableResource } from './table-query';

const SEARCH_DEBOUNCE_MS = 250;

export interface TableQueryState {
  query: TableQuery;
  setQuery: Dispatch<SetStateAction<TableQuery>>;
  /** the search box as typed; the query follows it after a pause */
  searchText: string;
  setSearchText: Dispatch<SetStateAction<string>>;
  /** the search as typed goes into the query now (Enter) */
  commitSearch: () => void;
  /** the search box and the query's search emptied */
  clearSearch: () => void;
  sorting: SortingState;
  onSortingChange: (updater: Updater<SortingState>) => void;
}

/**
 * The table's query: the search (debounced), the filter chips and the sort, and the address that follows
 * them (issue 13 point 9) when `urlState`.
 */
export function useTableQuery(
  initial: TableQuery | undefined,
  urlState: boolean,
  columns: string[] | null,
): TableQueryState {
  const [query, setQuery] = useState<TableQuery>(() => initial ?? emptyQuery);
  const [searchText, setSearchText] = useState(() => initial?.search ?? '');
  // the address follows the view, replacing the history entry (a sort is no page to go back to); the
  // router's own state in the entry is kept
  useEffect(() => {
    if (!urlState) return;
    const next = writeView(new URLSearchParams(window.location.search), { query, columns });
    const search = next.toString();
    if (search === window.location.search.replace(/^\?/, '')) return;
    const url = `${window.location.pathname}${search ? `?${search}` : ''}${window.location.hash}`;
    window.history.replaceState(window.history.state, '', url);
  }, [urlState, query, columns]);
  useEffect(() => {
    if (searchText === query.search) return;
    const timer = setTimeout(() => setQuery((q) => ({ ...q, search: searchText })), SEARCH_DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [searchText, query.search]);
  const commitSearch = useCallback(
    () => setQuery((q) => (q.search === searchText ? q : { ...q, search: searchText })),
    [searchText],
  );
  const clearSearch = useCallback(() => {
    setSearchText('');
    setQuery((q) => ({ ...q, search: '' }));
  }, []);

  const sorting = useMemo<SortingState>(() => {
    if (!query.sort) return [];
    return [{ id: query.sort.replace(/^-/, ''), desc: query.sort.startsWith('-') }];
  }, [query.sort]);
  const onSortingChange = useCallback(
    (updater: Updater<SortingState>) => {
      const next = typeof updater === 'function' ? updater(sorting) : updater;
      const first = next[0];
      setQuery((q) => ({ ...q, sort: first ? `${first.desc ? '-' : ''}${first.id}` : null }));
    },
    [sorting],
  );
  return { query, setQuery, searchText, setSearchText, commitSearch, clearSearch, sorting, onSortingChange };
}

export interface TableRows<Row> {
  loader: PageLoader<Row>;
  summary: LoaderSummary;
  /** the list call's identity (command, query, fixed arguments): a new one is a new list */
  fetchKey: string;
  /** reads the list again (the reload button, after a bulk action) */
  reload: () => void;
}

/**
 * The list request: one page loader for the table's life, given a new fetcher when the query changes and
 * reloaded when `refreshKey` changes or `reload` is called; its summary (the total, an estimate or exact,
 * loading, the error) as React state. The rows of a family that declares a live state follow its events.
 */
export function useTableRows<Row extends { id: number }>(opts: {
  listCommand: string;
  query: TableQuery;
  listArgs: Record<string, unknown> | undefined;
  refreshKey: unknown;
  pageSize: number | undefined;
  live: TableResource['live'];
}): TableRows<Row> {
  const { listCommand, query, listArgs, refreshKey } = opts;
  const [loader] = useState(
    () =>
      new PageLoader<Row>({
        fetchPage: () => new Promise(() => undefined),
        pageSize: opts.pageSize ?? PAGE_SIZE,
      }),
  );
  const summary = useSyncExternalStore(loader.subscribe, loader.getSummary);
  // rows whose family declares a live state follow its events (issue 25 item 3)
  useLiveRows(opts.live, loader);
  const [tick, setTick] = useState(0);
  const qKey = queryKey(query);
  const fetchKey = `${listCommand}\n${qKey}\n${JSON.stringify(listArgs ?? {})}`;
  const queryRef = useRef(query);
  queryRef.current = query;
  const driven = useRef<{ key: string; refresh: unknown; tick: number } | null>(null);
  useEffect(() => {
    const prev = driven.current;
    if (!prev || prev.key !== fetchKey) {
      const q = queryRef.current;
      loader.setFetcher((page, limit, signal) =>
        runList<Row>(listCommand, { ...buildListQuery(q, page, limit), ...listArgs }, signal),
      );
    } else if (prev.refresh !== refreshKey || prev.tick !== tick) loader.reload();
    driven.current = { key: fetchKey, refresh: refreshKey, tick };
  }, [loader, fetchKey, listCommand, refreshKey, tick, listArgs]);
  useEffect(
    () => () => {
      loader.dispose();
      driven.current = null;
    },
    [loader],
  );
  const reload = useCallback(() => setTick((n) => n + 1), []);
  return { loader, summary, fetchKey, reload };
}

/**
 * The footer's counter ("1–30 of about 5,400"): written straight into the DOM as the view scrolls (no
 * re-render per frame). `onRange` is the grid's report of the rows on screen.
 */
export function useTableCount<Row>(loader: PageLoader<Row>, summary: LoaderSummary) {
  const { t, i18n } = useTranslation();
  const lang = i18n.resolvedLanguage ?? i18n.language;
  const countRef = useRef<HTMLSpanElement>(null);
  const rangeRef = useRef({ first: 0, last: 0 });
  const paintCount = useCallback(() => {
    const el = countRef.current;
    if (!el) return;
    const total = loader.getTotal();
    const estimate = loader.isEstimate();
    if (total === null) el.textContent = t('table.count.loading');
    else if (total === 0) el.textContent = t('table.count.none');
    else {
      const from = Math.min(rangeRef.current.first + 1, total);
      const to = Math.min(Math.max(rangeRef.current.last + 1, from), total);
      el.textContent = t('table.count.range', {
        from: formatCount(from, lang),
        to: formatCount(to, lang),
        total: estimate
          ? t('table.count.about', { total: formatCount(roundEstimate(total), lang) })
          : formatCount(total, lang),
      });
    }
  }, [loader, t, lang]);
  // at most 4 times a second while scrolling: each text change lays out, paints and layerizes the page around
  // the grid again, in a frame that would otherwise only scroll
  const countTimer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const paintRef = useRef(paintCount);
  paintRef.current = paintCount;
  const onRange = useCallback((first: number, last: number) => {
    rangeRef.current = { first, last };
    countTimer.current ??= setTimeout(() => {
      countTimer.current = null;
      paintRef.current();
    }, 250);
  }, []);
  useEffect(
    () => () => {
      if (countTimer.current) clearTimeout(countTimer.current);
    },
    [],
  );
  useEffect(paintCount, [paintCount, summary.total, summary.estimate]);
  return { countRef, onRange };
}
