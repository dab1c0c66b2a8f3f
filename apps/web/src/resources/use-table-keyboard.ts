import { useCallback, useRef, type RefObject } from 'react';
import type { FilterBarHandle } from './filter-bar';
import type { GridHandle } from './table-grid';
import type { TableActions } from './table-keys';

/**
 * What the table's keys act on (`TableKeys`): the section, the grid, the search box and the filter bar,
 * and Esc's order — stop collecting the matching rows, else clear the selection, else the search, else
 * leave the search box for the grid. Read through a ref, so the bindings never change while the table lives.
 */
export function useTableKeyboard(opts: {
  gridRef: RefObject<GridHandle | null>;
  stopCollecting: () => boolean;
  selectedCount: number;
  clearSelection: () => void;
  searching: boolean;
  clearSearch: () => void;
}) {
  const { gridRef } = opts;
  const rootRef = useRef<HTMLElement>(null);
  const searchRef = useRef<HTMLInputElement>(null);
  const filterBarRef = useRef<FilterBarHandle>(null);
  const focusGrid = useCallback(() => gridRef.current?.focus(), [gridRef]);
  const actions = useRef<TableActions>(null as unknown as TableActions);
  actions.current = {
    get root() {
      return rootRef.current;
    },
    get grid() {
      return gridRef.current;
    },
    get search() {
      return searchRef.current;
    },
    addFilter: () => filterBarRef.current?.add(),
    editFilterText: () => filterBarRef.current?.editText(),
    escape: () => {
      if (opts.stopCollecting()) return true;
      if (opts.selectedCount) {
        opts.clearSelection();
        return true;
      }
      if (opts.searching) {
        opts.clearSearch();
        return true;
      }
      if (document.activeElement === searchRef.current) {
        focusGrid();
        return true;
      }
      return false;
    },
  };
  return { rootRef, searchRef, filterBarRef, focusGrid, actions };
}
