import {
  useCallback,
  useEffect,
  useId,
  useMemo,
  useRef,
  useState,
  type CSSProperties,
  type ReactNode,
} from 'react';
import { useAtomValue } from 'jotai';
import { useLocation } from 'react-router';
import { useTranslation } from 'react-i18next';
import {
  getCoreRowModel,
  useReactTable,
  type ColumnDef,
  type ColumnSizingState,
} from '@tanstack/react-table';
import type { Filter, ListQuery } from '@lintel/core';
import { describeError } from '../api/errors';
import { usePageAction } from '../palette/page-actions';
import { profileAtom } from '../session/session';
import { focusRing } from '../ui/button';
import { Icon, Spinner } from '../ui/icon';
import { ColumnChooser } from './column-chooser';
import {
  defaultWidth,
  fitWidths,
  loadPrefs,
  MAX_WIDTH,
  MIN_WIDTH,
  savePrefs,
  setWidths,
  toggleColumn,
  visibleColumns,
  type ColumnPrefs,
} from './column-prefs';
import { FilterBar } from './filter-bar';
import { defaultDateStyle, formatCount, roundEstimate, type DateStyle } from './format';
import { enumWord } from './enum-word';
import { buildColumns, type CellText, type ColumnOverride, type TableColumn } from './table-columns';
import { Grid, SELECT_WIDTH, type GridHandle } from './table-grid';
import { hasView, readView } from './table-url';
import { HeaderRow } from './table-header';
import { TableKeys } from './table-keys';
import {
  buildListQuery,
  filterableFields,
  filtersToWhere,
  refFamilies,
  sortableFields,
  type Match,
  type TableResource,
} from './table-query';
import { useTableKeyboard } from './use-table-keyboard';
import { useTableCount, useTableQuery, useTableRows } from './use-table-query';
import { useTableSelection, type BulkAction } from './use-table-selection';

export type { BulkAction } from './use-table-selection';

export interface ResourceTableProps<Row extends { id: number }> {
  /** the family, e.g. `userResource` from @lintel/commands (any object with `noun` and `fields` will do) */
  resource: TableResource;
  /** list command id; default `${resource.noun}.list` */
  listCommand?: string;
  /**
   * Per-field cell renderers and extra columns; the default draws by kind: refs as names, booleans as ✓/—,
   * dates in the user's format. Pass a stable object (module constant or useMemo): a new one redraws every row.
   */
  columns?: Partial<Record<string, ColumnOverride<Row>>>;
  /** Enter / click */
  onOpen?: (row: Row) => void;
  /** the address of a row's page: its name is a link that opens in a new tab (issue 13 point 10) */
  rowHref?: (row: Row) => string;
  bulkActions?: BulkAction[];
  /** e.g. an Add button */
  toolbar?: ReactNode;
  /** column choice and widths remembered in localStorage under `lintel.table.<storageKey>` */
  storageKey?: string;
  /** change to reload (rows stay on screen until the fresh ones arrive) */
  refreshKey?: unknown;
  /** shows an Export button; gets the current search, filters and sort (no paging) */
  onExport?: (query: ListQuery) => void;
  /** the grid's accessible name; default the list command's title */
  label?: string;
  /** the table's keys (j/k, Enter, x, /, Esc, g g, G); off for a second table on the same screen */
  keyboard?: boolean;
  pageSize?: number;
  /** fixed arguments of every list call, e.g. a journal's `to` (the table starts at that time) */
  listArgs?: Record<string, unknown>;
  /** the search, filters, sort and chosen columns in the address (default: with `keyboard`, the page's table) */
  urlState?: boolean;
}

const NO_ROWS: never[] = [];

function browserStorage(): Storage | null {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}

/**
 * The dense table of every family (DESIGN "Generic views"): server-side pages loaded around what is on
 * screen, sort by header, filter chips that read like the CLI's `--where`, chosen and resized columns,
 * selection with bulk actions, and the keyboard.
 *
 * The view is read from the address when the table is made and written back as it changes, by
 * `history.replaceState`, which the router does not see. So a navigation of the router's own to the page it
 * is on — a link with another filter, the side menu's item for the page, Back or Forward — makes the table
 * again from the address (a new key): it once kept its view while the address said another.
 */
export function ResourceTable<Row extends { id: number }>(props: ResourceTableProps<Row>) {
  const location = useLocation();
  const urlState = props.urlState ?? props.keyboard ?? true;
  return <TableOfView<Row> key={urlState ? location.key : 'view'} {...props} />;
}

function TableOfView<Row extends { id: number }>(props: ResourceTableProps<Row>) {
  const { resource, onOpen, bulkActions, toolbar, storageKey, refreshKey, onExport, keyboard = true } = props;
  const urlState = props.urlState ?? keyboard;
  const listCommand = props.listCommand ?? `${resource.noun}.list`;
  const { t, i18n } = useTranslation();
  const lang = i18n.resolvedLanguage ?? i18n.language;
  // keys built at run time (field titles, the screen's label keys) go through an untyped t
  const tx = useMemo(() => {
    void lang;
    return (key: string, options?: Record<string, unknown>) =>
      (i18n.t as unknown as (k: string, o?: Record<string, unknown>) => string)(key, options);
  }, [i18n, lang]);
  const gridId = useId().replace(/:/g, '');

  const fields = useMemo(() => filterableFields(resource), [resource]);
  const sortable = useMemo(() => sortableFields(resource), [resource]);
  const families = useMemo(() => refFamilies(resource), [resource]);
  const profile = useAtomValue(profileAtom);
  const timeFormat = profile?.profile.time_format ?? defaultDateStyle.timeFormat;
  const timeZone = profile?.profile.time_zone ?? defaultDateStyle.timeZone;
  const dateStyle = useMemo<DateStyle>(() => ({ timeFormat, timeZone }), [timeFormat, timeZone]);
  const words = useMemo<CellText>(() => {
    // enum values in words, as the forms show them (issue 25 item 6); looked up once per language, not for
    // every cell a scroll draws
    const known = new Map<string, string>();
    return {
      yes: t('table.value.yes'),
      no: t('table.value.no'),
      value: (field, value) => {
        const key = `${field}\u0000${value}`;
        let word = known.get(key);
        if (word === undefined) {
          word = enumWord(field, value);
          // a value without words yet (its namespace still loading) is asked again next time
          if (word !== value) known.set(key, word);
        }
        return word;
      },
    };
  }, [t]);

  const allColumns = useMemo(
    () => buildColumns<Row>(resource, props.columns, sortable, tx, dateStyle, words),
    [resource, props.columns, sortable, tx, dateStyle, words],
  );
  const byId = useMemo(() => new Map(allColumns.map((c) => [c.id, c])), [allColumns]);
  const labelOf = useCallback((field: string) => byId.get(field)?.label ?? field, [byId]);

  // ----- the view the address asks for (issue 13 point 9): read once, written back on every change ----------
  const [fromUrl] = useState(() => {
    if (!urlState) return null;
    const params = new URLSearchParams(window.location.search);
    if (!hasView(params)) return null;
    return readView(
      params,
      fields,
      sortable,
      allColumns.map((c) => c.id),
    );
  });

  // ----- column choice and widths ---------------------------------------------------------------------------
  const [prefs, setPrefs] = useState<ColumnPrefs>(() => {
    const stored = loadPrefs(
      browserStorage(),
      storageKey,
      allColumns.map((c) => c.id),
    );
    return fromUrl?.columns ? { ...stored, columns: fromUrl.columns } : stored;
  });
  const [sizing, setSizing] = useState<ColumnSizingState>(() => prefs.widths);
  const visibleIds = useMemo(() => visibleColumns(prefs, allColumns), [prefs, allColumns]);

  // ----- the query ------------------------------------------------------------------------------------------
  const { query, setQuery, searchText, setSearchText, commitSearch, clearSearch, sorting, onSortingChange } =
    useTableQuery(fromUrl?.query, urlState, prefs.columns);

  // ----- TanStack Table: the column model (the rows live in the page loader) --------------------------------
  const columnDefs = useMemo<ColumnDef<Row>[]>(
    () =>
      allColumns.map((c) => ({
        id: c.id,
        // TanStack sorts (and lets a header toggle sorting) only for columns with an accessor
        accessorFn: (row: Row) => c.value(row),
        header: c.label,
        size: defaultWidth(c),
        minSize: MIN_WIDTH,
        maxSize: MAX_WIDTH,
        enableSorting: c.sortable,
        enableResizing: true,
      })),
    [allColumns],
  );
  const columnVisibility = useMemo(
    () => Object.fromEntries(allColumns.map((c) => [c.id, visibleIds.includes(c.id)])),
    [allColumns, visibleIds],
  );
  const table = useReactTable<Row>({
    data: NO_ROWS,
    columns: columnDefs,
    getCoreRowModel: getCoreRowModel(),
    state: { sorting, columnVisibility, columnSizing: sizing },
    onSortingChange,
    onColumnSizingChange: setSizing,
    manualSorting: true,
    enableMultiSort: false,
    enableSortingRemoval: true,
    sortDescFirst: false,
    enableColumnResizing: true,
    columnResizeMode: 'onChange',
  });
  const resizing = table.getState().columnSizingInfo.isResizingColumn;

  // widths are remembered when a drag ends, not on every pixel
  useEffect(() => {
    if (!resizing)
      setPrefs((p) => (JSON.stringify(p.widths) === JSON.stringify(sizing) ? p : setWidths(p, sizing)));
  }, [resizing, sizing]);
  const prefsLoaded = useRef(false);
  useEffect(() => {
    if (!prefsLoaded.current) {
      prefsLoaded.current = true;
      return;
    }
    savePrefs(browserStorage(), storageKey, prefs);
  }, [prefs, storageKey]);

  const visibleCols = useMemo(
    () => visibleIds.map((id) => byId.get(id)!).filter(Boolean),
    [visibleIds, byId],
  );
  const gridRef = useRef<GridHandle | null>(null);
  // the grid's inner width, to fit the columns into it
  const [boxWidth, setBoxWidth] = useState(0);
  useEffect(() => {
    const el = gridRef.current?.element();
    if (!el || typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(() => setBoxWidth(el.clientWidth));
    observer.observe(el);
    setBoxWidth(el.clientWidth);
    return () => observer.disconnect();
  }, []);
  const widths = fitWidths(
    visibleIds.map((id) => ({
      natural: table.getColumn(id)?.getSize() ?? 120,
      resized: Object.hasOwn(sizing, id),
    })),
    boxWidth - SELECT_WIDTH,
  );
  const tableWidth = SELECT_WIDTH + widths.reduce((a, b) => a + b, 0);
  const cssVars: Record<string, string> = {
    '--lt-cols': `${SELECT_WIDTH}px ${widths.map((w) => `${w}px`).join(' ')} minmax(0,1fr)`,
    '--lt-width': `${tableWidth}px`,
  };
  let x = SELECT_WIDTH;
  widths.forEach((w, i) => {
    cssVars[`--lt-x${i}`] = `${x}px`;
    cssVars[`--lt-w${i}`] = `${w}px`;
    x += w;
  });

  // ----- rows, selection, the counter and the keys ---------------------------------------------------------
  const { loader, summary, fetchKey, reload } = useTableRows<Row>({
    listCommand,
    query,
    listArgs: props.listArgs,
    refreshKey,
    pageSize: props.pageSize,
    live: resource.live,
  });
  const {
    selected,
    onSelect,
    clearSelection,
    selectAll,
    onSelectAll,
    allMatching,
    selectMatching,
    isCollecting,
    stopCollecting,
    busy,
    bulkError,
    dismissBulkError,
    runBulk,
  } = useTableSelection({ loader, fetchKey, listCommand, query, reload });
  const { countRef, onRange } = useTableCount(loader, summary);
  const { rootRef, searchRef, filterBarRef, focusGrid, actions } = useTableKeyboard({
    gridRef,
    stopCollecting,
    selectedCount: selected.size,
    clearSelection,
    searching: !!(searchText || query.search),
    clearSearch,
  });

  // export what the list shows: the search as typed (not waiting for the debounce), the chips and the sort
  const exportRows = () => {
    const { page: _p, limit: _l, ...rest } = buildListQuery({ ...query, search: searchText }, 1, 1);
    onExport?.(rest);
  };
  usePageAction(
    onExport
      ? { id: 'table.export', labelKey: 'table.export_title', icon: 'download', run: exportRows }
      : null,
  );

  const onFilters = useCallback(
    (filters: Filter[], match: Match) => setQuery((q) => ({ ...q, filters, match })),
    [],
  );
  const clearAll = () => {
    setSearchText('');
    setQuery((q) => ({ ...q, search: '', filters: [], match: 'all' }));
  };

  const header = useMemo(
    () => (
      <HeaderRow<Row>
        headers={table.getHeaderGroups()[0]?.headers ?? []}
        byId={byId}
        selectAll={selectAll}
        onSelectAll={onSelectAll}
        selectAllLabel={t('table.select.all')}
        sortLabel={(column, next) => t(`table.sort.${next}`, { column })}
      />
    ),
    // the header objects follow these; the table instance itself never changes
    [table, byId, selectAll, onSelectAll, t, sorting, visibleIds, resizing],
  );

  // "all 5,370 matching": an estimate says so ("about 5,400"); the confirmation counts them exactly
  const matchingCount =
    summary.total === null
      ? ''
      : summary.estimate
        ? t('table.count.about', { total: formatCount(roundEstimate(summary.total), lang) })
        : formatCount(summary.total, lang);
  const selectLabel = useCallback((row: Row) => t('table.select.row', { id: row.id }), [t]);
  const label = props.label ?? tx(`commands:${listCommand}.label`);
  const where = filtersToWhere(query.filters, query.match);
  const filtered = query.filters.length > 0 || query.search.trim() !== '';
  const error = summary.error ? describeError(summary.error).message : null;

  let overlay: ReactNode = null;
  if (summary.total === null && error)
    overlay = (
      <div
        className="absolute inset-x-0 top-8 bottom-0 flex items-start justify-center bg-white p-10"
        data-testid="table-error"
      >
        <div role="alert" className="flex max-w-md flex-col items-center gap-3 text-center">
          <Icon name="error" className="size-6 text-red-600" />
          <p className="text-sm text-slate-800">{error}</p>
          <button
            type="button"
            onClick={() => loader.retry()}
            className={`h-7 rounded-md border border-slate-300 bg-white px-3 text-xs font-medium text-slate-800 hover:bg-slate-50 ${focusRing}`}
          >
            {t('table.retry')}
          </button>
        </div>
      </div>
    );
  else if (summary.total === null)
    overlay = (
      <div
        aria-hidden="true"
        className="pointer-events-none absolute inset-x-0 top-8 bottom-0 overflow-hidden bg-white"
        data-testid="table-skeleton"
      >
        {Array.from({ length: 14 }, (_, i) => (
          <div
            key={i}
            className={`flex h-[30px] items-center gap-4 border-b border-slate-100 pr-4 pl-[36px] ${i % 2 ? 'bg-slate-50/60' : ''}`}
          >
            {visibleCols.map((c, j) => (
              <div key={c.id} className="px-2" style={{ width: widths[j] }}>
                <div
                  className="h-2 rounded-sm bg-slate-200"
                  style={{ width: `${35 + ((i * 37 + j * 53) % 45)}%` }}
                />
              </div>
            ))}
          </div>
        ))}
      </div>
    );
  else if (summary.total === 0)
    overlay = (
      <div
        className="absolute inset-x-0 top-8 bottom-0 flex items-start justify-center p-10"
        data-testid="table-empty"
      >
        <div className="flex max-w-md flex-col items-center gap-2 text-center">
          <Icon name="inbox" className="size-6 text-slate-400" />
          <p className="text-sm font-medium text-slate-800">
            {filtered ? t('table.empty.filtered') : t('table.empty.title')}
          </p>
          {filtered && (
            <button
              type="button"
              onClick={clearAll}
              className={`h-7 rounded-md border border-slate-300 bg-white px-3 text-xs font-medium text-slate-800 hover:bg-slate-50 ${focusRing}`}
            >
              {t('table.empty.clear')}
            </button>
          )}
        </div>
      </div>
    );

  return (
    <section
      ref={rootRef}
      aria-label={label}
      className="flex h-full min-h-0 flex-col overflow-hidden rounded-lg border border-slate-200 bg-white shadow-xs"
      style={cssVars as CSSProperties}
      data-testid="resource-table"
    >
      <TableKeys actions={actions} enabled={keyboard} canOpen={!!onOpen} />
      {/* toolbar: search, filter chips, then the table's own buttons and the screen's */}
      <div className="flex flex-wrap items-center gap-2 border-b border-slate-200 px-2 py-1.5">
        <div className="relative">
          <Icon
            name="search"
            className="pointer-events-none absolute top-1/2 left-2 size-3.5 -translate-y-1/2 text-slate-500"
          />
          <input
            ref={searchRef}
            type="search"
            value={searchText}
            onChange={(e) => setSearchText(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' || e.key === 'ArrowDown') {
                e.preventDefault();
                commitSearch();
                focusGrid();
              }
            }}
            aria-label={t('table.search.label')}
            aria-keyshortcuts="/"
            placeholder={t('table.search.placeholder')}
            autoComplete="off"
            spellCheck={false}
            maxLength={255}
            className="h-7 w-60 rounded-md border border-slate-300 bg-white pr-7 pl-7 text-[13px] text-slate-900 shadow-xs outline-none placeholder:text-slate-500 focus:border-blue-600 focus:ring-2 focus:ring-blue-600/25 [&::-webkit-search-cancel-button]:hidden"
            data-testid="table-search"
          />
          {searchText === '' && (
            <kbd className="pointer-events-none absolute top-1/2 right-1.5 -translate-y-1/2 rounded border border-slate-300 bg-slate-50 px-1 font-mono text-[10px] leading-4 text-slate-500">
              /
            </kbd>
          )}
        </div>
        <FilterBar
          fields={fields}
          labelOf={labelOf}
          filters={query.filters}
          match={query.match}
          onChange={onFilters}
          onDone={focusGrid}
          handleRef={filterBarRef}
          families={families}
        />
        <div className="ml-auto flex items-center gap-1">
          {/* only while the first page of a query loads: later pages show as placeholder rows */}
          {summary.loading && summary.total === null && <Spinner className="size-3.5 text-slate-500" />}
          <button
            type="button"
            onClick={reload}
            aria-label={t('table.reload')}
            title={t('table.reload')}
            className={`inline-flex h-7 items-center rounded-md px-1.5 text-slate-600 hover:bg-slate-100 hover:text-slate-900 ${focusRing}`}
          >
            <Icon name="refresh" className="size-3.5" />
          </button>
          {onExport && (
            <button
              type="button"
              onClick={exportRows}
              aria-haspopup="dialog"
              title={t('table.export_title')}
              data-testid="table-export"
              className={`inline-flex h-7 items-center gap-1.5 rounded-md px-2 text-xs font-medium text-slate-700 hover:bg-slate-100 ${focusRing}`}
            >
              <Icon name="download" className="size-3.5" />
              {t('table.export')}
            </button>
          )}
          <ColumnChooser
            columns={allColumns}
            visible={visibleIds}
            onToggle={(id) => setPrefs((p) => toggleColumn(p, allColumns, id))}
            onReset={() => {
              setPrefs({ columns: null, widths: {} });
              setSizing({});
            }}
          />
          {toolbar}
        </div>
      </div>
      {selected.size > 0 && (
        <div
          className="flex h-9 items-center gap-2 border-b border-blue-200 bg-blue-50 px-3 text-[13px]"
          data-testid="bulk-bar"
        >
          <span role="status" className="font-medium text-blue-950 tabular-nums" data-testid="selected-count">
            {allMatching && summary.total !== null
              ? t('table.bulk.all_matching', { count: matchingCount })
              : t('table.bulk.selected', { count: formatCount(selected.size, lang) })}
          </span>
          {isCollecting && (
            <span
              className="inline-flex items-center gap-2 text-xs text-blue-900"
              data-testid="bulk-collecting"
            >
              <Spinner className="size-3" />
              {t('table.bulk.collecting')}
              <button
                type="button"
                onClick={() => stopCollecting()}
                className={`h-6 rounded-md px-2 text-xs font-medium text-blue-900 underline hover:bg-blue-100 ${focusRing}`}
                data-testid="bulk-collecting-cancel"
              >
                {t('table.bulk.cancel')} <kbd className="ml-1 font-mono text-[10px] text-blue-800">Esc</kbd>
              </button>
            </span>
          )}
          {!allMatching && selectAll === 'all' && summary.total !== null && summary.total > selected.size && (
            <button
              type="button"
              onClick={selectMatching}
              className={`h-7 rounded-md px-2 text-xs font-medium text-blue-800 underline hover:bg-blue-100 ${focusRing}`}
              data-testid="select-matching"
            >
              {t('table.bulk.select_matching', { count: matchingCount })}
            </button>
          )}
          <span className="mx-1 h-4 w-px bg-blue-200" aria-hidden="true" />
          {bulkActions?.map((a) => (
            <button
              key={a.id}
              type="button"
              disabled={busy !== null}
              aria-busy={busy === a.id || undefined}
              onClick={() => void runBulk(a)}
              className={`inline-flex h-7 items-center gap-1.5 rounded-md px-2.5 text-xs font-medium disabled:opacity-60 ${focusRing} ${
                a.danger
                  ? 'border border-red-800/40 bg-red-700 text-white hover:bg-red-800'
                  : 'border border-slate-300 bg-white text-slate-800 hover:bg-slate-50'
              }`}
              data-testid={`bulk-${a.id}`}
            >
              {busy === a.id && <Spinner className="size-3" />}
              {tx(a.labelKey)}
            </button>
          ))}
          <button
            type="button"
            onClick={clearSelection}
            className={`ml-auto h-7 rounded-md px-2 text-xs font-medium text-blue-900 hover:bg-blue-100 ${focusRing}`}
          >
            {t('table.bulk.clear')} <kbd className="ml-1 font-mono text-[10px] text-blue-800">Esc</kbd>
          </button>
        </div>
      )}
      {(bulkError || (error && summary.total !== null)) && (
        <div
          role="alert"
          className="flex items-center gap-2 border-b border-red-200 bg-red-50 px-3 py-1.5 text-[13px] text-red-800"
          data-testid="table-alert"
        >
          <Icon name="error" className="size-3.5 shrink-0" />
          <span className="min-w-0 flex-1 truncate">{bulkError ?? error}</span>
          {!bulkError && (
            <button
              type="button"
              onClick={() => loader.retry()}
              className={`h-6 rounded px-2 text-xs font-medium hover:bg-red-100 ${focusRing}`}
            >
              {t('table.retry')}
            </button>
          )}
          {bulkError && (
            <button
              type="button"
              onClick={dismissBulkError}
              aria-label={t('table.dismiss')}
              className={`rounded p-1 hover:bg-red-100 ${focusRing}`}
            >
              <Icon name="close" className="size-3" />
            </button>
          )}
        </div>
      )}
      <Grid<Row>
        gridId={gridId}
        label={label}
        loader={loader}
        total={summary.total}
        loading={summary.loading}
        columns={visibleCols as TableColumn<Row>[]}
        header={header}
        selected={selected}
        onSelect={onSelect}
        onOpen={onOpen}
        rowHref={props.rowHref}
        resetKey={fetchKey}
        handleRef={gridRef}
        onRange={onRange}
        selectLabel={selectLabel}
        words={words}
        overlay={overlay}
      />
      <footer className="flex h-7 shrink-0 items-center gap-3 border-t border-slate-200 bg-slate-50 px-3 text-xs text-slate-600">
        <span ref={countRef} className="tabular-nums" data-testid="table-count" />
        <span className="sr-only" role="status">
          {summary.total !== null
            ? t('table.count.total', {
                total: summary.estimate
                  ? t('table.count.about', { total: formatCount(roundEstimate(summary.total), lang) })
                  : formatCount(summary.total, lang),
              })
            : ''}
        </span>
        {where && (
          <code
            className="min-w-0 truncate font-mono text-[11px] text-slate-600"
            title={`--where ${JSON.stringify(where)}`}
            data-testid="table-where"
          >
            --where {JSON.stringify(where)}
          </code>
        )}
        <span
          className="ml-auto hidden items-center gap-2 whitespace-nowrap text-slate-500 lg:flex"
          aria-hidden="true"
        >
          <span>
            <Kbd>j</Kbd> <Kbd>k</Kbd> {t('table.hints.move')}
          </span>
          {onOpen && (
            <span>
              <Kbd>↵</Kbd> {t('table.hints.open')}
            </span>
          )}
          <span>
            <Kbd>x</Kbd> {t('table.hints.select')}
          </span>
          <span>
            <Kbd>/</Kbd> {t('table.hints.search')}
          </span>
          <span>
            <Kbd>f</Kbd> {t('table.hints.filter')}
          </span>
          <span>
            <Kbd>?</Kbd> {t('table.hints.keys')}
          </span>
        </span>
      </footer>
    </section>
  );
}

function Kbd({ children }: { children: ReactNode }) {
  return (
    <kbd className="rounded border border-slate-300 bg-white px-1 font-mono text-[10px] leading-4 text-slate-600">
      {children}
    </kbd>
  );
}
