import { useCallback, useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { describeError } from '../api/errors';
import { matchingIds, PartialBulkError } from './bulk-ids';
import { formatCount } from './format';
import type { PageLoader } from './page-loader';
import type { TableQuery } from './table-query';

export interface BulkAction {
  id: string;
  /** locale key of the button (namespace `web`, or `ns:key`) */
  labelKey: string;
  run: (ids: number[]) => Promise<void>;
  danger?: boolean;
}

const EMPTY_SET: ReadonlySet<number> = new Set();

/**
 * The table's selection: the loaded rows chosen one by one (or all of them), or every row the query
 * matches, loaded or not (issue 13 point 9); and the bulk actions run on it. A new list (`fetchKey`)
 * clears it; any change of it ends "all matching" and stops collecting the matching rows.
 */
export function useTableSelection<Row extends { id: number }>(opts: {
  loader: PageLoader<Row>;
  fetchKey: string;
  listCommand: string;
  query: TableQuery;
  reload: () => void;
}) {
  const { loader, fetchKey, listCommand, query, reload } = opts;
  const { t, i18n } = useTranslation();
  const lang = i18n.resolvedLanguage ?? i18n.language;
  const [selected, setSelected] = useState<ReadonlySet<number>>(EMPTY_SET);
  // every row the query matches, loaded or not (issue 13 point 9); any change of the selection ends it
  const [allMatching, setAllMatching] = useState(false);
  useEffect(() => setSelected(EMPTY_SET), [fetchKey]);
  useEffect(() => setAllMatching(false), [selected]);
  const [busy, setBusy] = useState<string | null>(null);
  const [bulkError, setBulkError] = useState<string | null>(null);
  // the matching rows being collected for a bulk action (issue 25 item 5): Esc, Cancel or any change of the
  // selection stops it, and then nothing is asked or run
  const collecting = useRef<AbortController | null>(null);
  const [isCollecting, setIsCollecting] = useState(false);
  const stopCollecting = useCallback(() => {
    if (!collecting.current) return false;
    collecting.current.abort();
    collecting.current = null;
    setIsCollecting(false);
    setBusy(null);
    return true;
  }, []);
  useEffect(() => void stopCollecting(), [selected, stopCollecting]);
  const onSelect = useCallback((ids: number[], on: boolean) => {
    setSelected((prev) => {
      const next = new Set(prev);
      for (const id of ids) {
        if (on) next.add(id);
        else next.delete(id);
      }
      return next;
    });
  }, []);
  const clearSelection = useCallback(() => setSelected(EMPTY_SET), []);
  const loadedIds = selected.size ? loader.allLoadedRows().map((r) => r.id) : [];
  const selectAll: 'none' | 'some' | 'all' =
    selected.size === 0
      ? 'none'
      : loadedIds.length && loadedIds.every((id) => selected.has(id))
        ? 'all'
        : 'some';
  const onSelectAll = useCallback(() => {
    setSelected((prev) => (prev.size ? EMPTY_SET : new Set(loader.allLoadedRows().map((r) => r.id))));
  }, [loader]);

  const runBulk = async (action: BulkAction) => {
    setBusy(action.id);
    setBulkError(null);
    try {
      let ids = [...selected];
      if (allMatching) {
        const ctrl = new AbortController();
        collecting.current = ctrl;
        setIsCollecting(true);
        try {
          ids = await matchingIds(listCommand, query, ctrl.signal);
        } catch (err) {
          if (ctrl.signal.aborted) return;
          throw err;
        } finally {
          if (collecting.current === ctrl) collecting.current = null;
          setIsCollecting(false);
        }
        // cancelled while the last page came: nothing is asked
        if (ctrl.signal.aborted) return;
      }
      await action.run(ids);
      setSelected(EMPTY_SET);
      reload();
    } catch (err) {
      if (err instanceof PartialBulkError) {
        // some chunks went through: say how far, and show the rows as they are now
        setBulkError(
          t('table.bulk.partial', {
            done: formatCount(err.done, lang),
            total: formatCount(err.total, lang),
            left: formatCount(err.total - err.done, lang),
            error: describeError(err.cause).message,
          }),
        );
        setSelected(EMPTY_SET);
        reload();
      } else setBulkError(describeError(err).message);
    } finally {
      if (!collecting.current) setBusy(null);
    }
  };

  return {
    selected,
    onSelect,
    clearSelection,
    selectAll,
    onSelectAll,
    allMatching,
    selectMatching: () => setAllMatching(true),
    isCollecting,
    stopCollecting,
    busy,
    bulkError,
    dismissBulkError: () => setBulkError(null),
    runBulk,
  };
}
