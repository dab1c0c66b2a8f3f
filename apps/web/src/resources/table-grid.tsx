import {
  memo,
  useCallback,
  useEffect,
  useLayoutEffect,
  useRef,
  useState,
  useSyncExternalStore,
  type MouseEvent as ReactMouseEvent,
  type ReactNode,
  type RefObject,
} from 'react';
import { useVirtualizer, type Range } from '@tanstack/react-virtual';
import { Badge } from '../ui/badge';
import type { PageLoader } from './page-loader';
import { assignSlots, blockWindow, blockWindowSize } from './slots';
import type { CellText, TableColumn } from './table-columns';

/** Fixed geometry: every row is exactly this tall, so nothing is measured while scrolling. */
export const ROW_HEIGHT = 30;
export const HEADER_HEIGHT = 32;
export const SELECT_WIDTH = 36;
const OVERSCAN = 3;
/** Rows drawn move in blocks of this many (slots.ts `blockWindow`): 4 frames of a wheel notch a frame. */
const BLOCK = 16;
/**
 * When the view moves more than this many pixels from one drawn frame to the next, twice running, rows are
 * drawn as placeholders until it slows down: nobody reads rows flying by, and a placeholder row costs the
 * browser next to nothing (react-virtuoso's "scroll seek"). 10 rows a frame is 600 rows a second at 60 Hz.
 */
const SEEK_STEP = 10 * ROW_HEIGHT;

/** What the keyboard (and the table around the grid) can ask of the grid. */
export interface GridHandle {
  move(delta: number): void;
  moveTo(index: number): void;
  /** a screenful down (1) or up (-1) */
  page(direction: 1 | -1): void;
  open(): void;
  toggle(): void;
  toggleRange(): void;
  focus(): void;
  element(): HTMLElement | null;
}

export interface GridProps<Row extends { id: number }> {
  gridId: string;
  label: string;
  loader: PageLoader<Row>;
  total: number | null;
  loading: boolean;
  columns: TableColumn<Row>[];
  /** the header row (built by the table, which owns sorting and sizing) */
  header: ReactNode;
  selected: ReadonlySet<number>;
  /** set these rows' selection */
  onSelect: (ids: number[], on: boolean) => void;
  onOpen?: (row: Row) => void;
  /** the address of a row's page: its name cell is a link (open in a new tab), a click opens it */
  rowHref?: (row: Row) => string;
  /** a new query: focus goes back to the first row */
  resetKey: string;
  handleRef: RefObject<GridHandle | null>;
  /** the rows fully or partly on screen, for the counter */
  onRange: (first: number, last: number) => void;
  selectLabel: (row: Row) => string;
  words: CellText;
  /** a placeholder drawn over the body (empty, error, first load) */
  overlay?: ReactNode;
}

const noop = () => undefined;

interface RowProps<Row extends { id: number }> {
  index: number;
  domId: string;
  row: Row | undefined;
  columns: TableColumn<Row>[];
  focused: boolean;
  selected: boolean;
  selectLabel: (row: Row) => string;
  words: CellText;
  /** draw grey bars in the cells of a row not loaded yet (not while seeking: nothing is drawn then) */
  bars: boolean;
  /** the row's address, drawn as a link in column `linkCol` */
  href?: string;
  linkCol: number;
}

const alignClass = { left: 'text-left', right: 'text-right tabular-nums', center: 'text-center' } as const;

/**
 * A cell whose row has not arrived shows a grey bar: a background of the cell it already has, written as
 * literal values (a value through a CSS variable would be parsed again for every cell drawn).
 */
const BAR = 'bg-[linear-gradient(#e2e8f0,#e2e8f0)] bg-no-repeat bg-[position:8px_50%]';
const BAR_LENGTHS = [
  'bg-[length:55%_8px]',
  'bg-[length:38%_8px]',
  'bg-[length:70%_8px]',
  'bg-[length:46%_8px]',
];

/**
 * One row, moved by transform, painted into the grid's scrolling layer (not a layer of its own: see the
 * grid's background), its cells painted only when its content changes. Zebra stripes are each row's
 * background: one stripe image under 3,000,000 px of rows had the whole surface rastered again on every
 * frame. Tooltips are set on hover (see the grid).
 */
function GridRowInner<Row extends { id: number }>({
  index,
  domId,
  row,
  columns,
  focused,
  selected,
  selectLabel,
  words,
  bars,
  href,
  linkCol,
}: RowProps<Row>) {
  const tone = selected
    ? 'bg-blue-50 hover:bg-blue-100'
    : focused
      ? 'bg-slate-100'
      : index % 2
        ? 'bg-slate-50 hover:bg-slate-100'
        : 'bg-white hover:bg-slate-100';
  return (
    <div
      role="row"
      id={domId}
      aria-rowindex={index + 2}
      aria-selected={row ? selected : undefined}
      aria-busy={row ? undefined : true}
      data-index={index}
      className={`absolute left-0 flex h-[30px] w-full border-b border-slate-100 text-[13px] leading-[29px] top-0 text-slate-800 [contain:strict] ${tone} ${
        focused ? 'group-focus:outline-2 group-focus:-outline-offset-2 group-focus:outline-blue-600' : ''
      }`}
      style={{ transform: `translateY(${index * ROW_HEIGHT}px)` }}
    >
      <div role="gridcell" className="flex w-9 shrink-0 items-center justify-center">
        {row && (
          <input
            type="checkbox"
            data-select=""
            tabIndex={-1}
            checked={selected}
            onChange={noop}
            aria-label={selectLabel(row)}
            className="size-3.5 cursor-pointer accent-blue-700"
          />
        )}
      </div>
      {columns.map((c, ci) => {
        // cells take the widths the table publishes as CSS variables: resizing re-renders no row
        const place = { width: `var(--lt-w${ci})` };
        let content: ReactNode = null;
        let tone = !row
          ? bars
            ? `${BAR} ${BAR_LENGTHS[(index + ci * 3) % BAR_LENGTHS.length]}`
            : ''
          : c.id === 'id'
            ? 'text-slate-600'
            : '';
        let name: string | undefined;
        if (row) {
          if (c.render) content = c.render(row);
          else if (c.kind === 'boolean') {
            // the mark for the eye, the word for a screen reader
            const v = c.value(row);
            content = v === true ? '✓' : v === false ? '—' : '';
            tone = v === true ? 'font-semibold text-emerald-700' : 'text-slate-500';
            name = v === true ? words.yes : v === false ? words.no : undefined;
          } else if (c.tones) {
            // a state people scan for: a badge of its tone, its words inside
            const v = c.value(row);
            const text = c.text(row);
            content = text ? <Badge tone={c.tones[String(v)] ?? 'neutral'}>{text}</Badge> : '—';
          } else {
            content = c.text(row);
            if (content === '') {
              content = '—';
              tone = 'text-slate-500';
            }
          }
        }
        if (row && href && ci === linkCol)
          content = (
            <a href={href} tabIndex={-1} data-row-link="" className="text-inherit hover:underline">
              {content}
            </a>
          );
        return (
          <div
            key={c.id}
            role="gridcell"
            aria-label={name}
            // cut by a clip, not `overflow: hidden`: a hidden box is a scroll container, with a scrollable
            // area of its own to build, pre-paint and layerize in every cell of every row coming in
            className={`shrink-0 overflow-clip px-2 text-ellipsis whitespace-nowrap ${alignClass[c.align]} ${tone}`}
            style={place}
            data-col={ci}
          >
            {content}
          </div>
        );
      })}
    </div>
  );
}

const GridRow = memo(GridRowInner) as typeof GridRowInner;

const rowDomId = (gridId: string, index: number) => `${gridId}-r${index}`;

interface GridRowsProps<Row extends { id: number }> {
  /** the rows drawn, first to last (a block window: slots.ts) */
  first: number;
  last: number;
  scrolling: boolean;
  seeking: boolean;
  /** the loader's version: rows came */
  version: number;
  gridId: string;
  loader: PageLoader<Row>;
  columns: TableColumn<Row>[];
  focusedIndex: number;
  selected: ReadonlySet<number>;
  selectLabel: (row: Row) => string;
  words: CellText;
  rowHref?: (row: Row) => string;
  linkCol: number;
}

/**
 * The rows drawn, by slot. A component of its own, memoised on the window and what the rows show: the grid
 * renders at every frame of a scroll (the rows on screen changed), these only when the window moved.
 */
function GridRowsInner<Row extends { id: number }>({
  first,
  last,
  scrolling,
  seeking,
  gridId,
  loader,
  columns,
  focusedIndex,
  selected,
  selectLabel,
  words,
  rowHref,
  linkCol,
}: GridRowsProps<Row>) {
  const indices: number[] = [];
  for (let i = first; i <= last; i++) indices.push(i);
  const slotsRef = useRef<Map<number, number>>(new Map());
  const slots = assignSlots(indices, slotsRef.current);
  slotsRef.current = slots;
  // While the view moves, rows stay in slot order in the DOM, so a recycled row is not moved (a move
  // rebuilds its layout); at rest they are put back in row order, as screen readers read them.
  if (scrolling) indices.sort((a, b) => slots.get(a)! - slots.get(b)!);
  const rows = indices.map((index) => {
    const row = seeking ? undefined : loader.rowAt(index);
    return (
      <GridRow
        key={slots.get(index)}
        index={index}
        domId={rowDomId(gridId, index)}
        row={row}
        columns={columns}
        focused={index === focusedIndex}
        selected={row ? selected.has(row.id) : false}
        selectLabel={selectLabel}
        words={words}
        bars={!seeking}
        href={row && rowHref ? rowHref(row) : undefined}
        linkCol={linkCol}
      />
    );
  });
  return <>{rows}</>;
}

const GridRows = memo(GridRowsInner) as typeof GridRowsInner;

/** True while the view jumps more than SEEK_STEP per frame (entered after two such frames, left below half). */
function useScrollSeek(offset: number, scrolling: boolean): boolean {
  const last = useRef({ offset, fast: 0, seeking: false });
  const s = last.current;
  if (!scrolling) {
    s.fast = 0;
    s.seeking = false;
  } else if (offset !== s.offset) {
    const step = Math.abs(offset - s.offset);
    s.fast = step > SEEK_STEP ? s.fast + 1 : 0;
    if (s.fast >= 2) s.seeking = true;
    else if (step < SEEK_STEP / 2) s.seeking = false;
  }
  s.offset = offset;
  return s.seeking;
}

function GridInner<Row extends { id: number }>(props: GridProps<Row>) {
  const {
    gridId,
    label,
    loader,
    total,
    loading,
    columns,
    header,
    selected,
    onSelect,
    onOpen,
    rowHref,
    resetKey,
    handleRef,
    onRange,
    selectLabel,
    words,
    overlay,
  } = props;
  const scrollRef = useRef<HTMLDivElement>(null);
  // re-render when rows arrive
  const version = useSyncExternalStore(loader.subscribe, loader.getVersion);
  const count = total ?? 0;
  const [focus, setFocus] = useState(0);
  const focusRef = useRef(0);
  focusRef.current = Math.min(focus, Math.max(0, count - 1));
  const anchorRef = useRef<number | null>(null);
  const scrollOnFocus = useRef(false);

  // the rows drawn: a window that moves by blocks, as large as the view's height asks (measured by the
  // virtualizer; the rows on screen themselves are the floor, should the height be stale). While rows fly by
  // as placeholders (seeking) every row changes each frame anyway: the smallest window, moved row by row.
  const windowSize = useRef(blockWindowSize(Math.ceil(800 / ROW_HEIGHT) + 1, BLOCK, OVERSCAN));
  const seekingRef = useRef(false);
  const rangeExtractor = useCallback((r: Range) => {
    const block = seekingRef.current ? 1 : BLOCK;
    return blockWindow(r.startIndex, r.count, {
      block,
      overscan: OVERSCAN,
      size: Math.max(
        seekingRef.current ? 0 : windowSize.current,
        blockWindowSize(r.endIndex - r.startIndex + 2, block, OVERSCAN),
      ),
    });
  }, []);
  const virtualizer = useVirtualizer({
    count,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: OVERSCAN,
    rangeExtractor,
    paddingStart: HEADER_HEIGHT,
    scrollPaddingStart: HEADER_HEIGHT,
    initialRect: { width: 1200, height: 800 },
  });
  const viewHeight = virtualizer.scrollRect?.height;
  if (viewHeight)
    windowSize.current = blockWindowSize(Math.ceil(viewHeight / ROW_HEIGHT) + 1, BLOCK, OVERSCAN);
  const seeking = useScrollSeek(virtualizer.scrollOffset ?? 0, virtualizer.isScrolling);
  seekingRef.current = seeking;
  const items = virtualizer.getVirtualItems();
  const range = virtualizer.range;
  const firstItem = items[0]?.index ?? 0;
  const lastItem = items[items.length - 1]?.index ?? 0;
  const visibleFirst = range?.startIndex ?? 0;
  const visibleLast = range?.endIndex ?? 0;

  // no page is asked for while rows fly by as placeholders: only where the view comes to rest
  useEffect(() => {
    if (!seeking) loader.setRange(firstItem, lastItem);
  }, [loader, firstItem, lastItem, seeking]);
  useEffect(() => {
    onRange(visibleFirst, visibleLast);
  }, [onRange, visibleFirst, visibleLast]);

  /**
   * The row Enter asked to open before it had come: Enter in the search box applies a search the debounce had
   * not sent yet, and the Enter that follows lands while the new rows are on their way. It opens once they
   * come; moving, another query, or a reply without that row forgets it.
   */
  const pendingOpen = useRef<number | null>(null);

  // a new query starts at the top
  const lastReset = useRef(resetKey);
  useLayoutEffect(() => {
    if (lastReset.current === resetKey) return;
    lastReset.current = resetKey;
    pendingOpen.current = null;
    setFocus(0);
    anchorRef.current = null;
    if (scrollRef.current) scrollRef.current.scrollTop = 0;
  }, [resetKey]);

  const ensureVisible = useCallback((index: number) => {
    const el = scrollRef.current;
    if (!el) return;
    const top = HEADER_HEIGHT + index * ROW_HEIGHT;
    const bottom = top + ROW_HEIGHT;
    if (top < el.scrollTop + HEADER_HEIGHT) el.scrollTop = index * ROW_HEIGHT;
    else if (bottom > el.scrollTop + el.clientHeight) el.scrollTop = bottom - el.clientHeight;
  }, []);

  const focusedIndex = focusRef.current;
  useLayoutEffect(() => {
    if (!scrollOnFocus.current) return;
    scrollOnFocus.current = false;
    ensureVisible(focusedIndex);
  }, [focusedIndex, ensureVisible]);

  const focusGrid = useCallback(() => {
    const el = scrollRef.current;
    if (el && document.activeElement !== el) el.focus({ preventScroll: true });
  }, []);

  const moveTo = useCallback(
    (index: number) => {
      const n = loader.getTotal() ?? 0;
      if (n <= 0) return;
      const next = Math.max(0, Math.min(n - 1, index < 0 ? n - 1 : index));
      pendingOpen.current = null;
      scrollOnFocus.current = true;
      focusGrid();
      setFocus(next);
      // the same index again still brings it into view
      if (next === focusRef.current) ensureVisible(next);
    },
    [loader, focusGrid, ensureVisible],
  );

  const toggleAt = useCallback(
    (index: number, range: boolean) => {
      const anchor = anchorRef.current;
      if (range && anchor !== null && anchor !== index) {
        const from = Math.min(anchor, index);
        const to = Math.max(anchor, index);
        onSelect(
          loader.loadedRows(from, to).map((r) => r.row.id),
          true,
        );
      } else {
        const row = loader.rowAt(index);
        if (!row) return;
        onSelect([row.id], !selected.has(row.id));
      }
      anchorRef.current = index;
    },
    [loader, onSelect, selected],
  );

  useLayoutEffect(() => {
    handleRef.current = {
      move: (delta) => moveTo(focusRef.current + delta),
      moveTo,
      page: (direction) => {
        const el = scrollRef.current;
        const rows = el ? Math.max(1, Math.floor((el.clientHeight - HEADER_HEIGHT) / ROW_HEIGHT) - 1) : 20;
        moveTo(focusRef.current + direction * rows);
      },
      open: () => {
        if (!onOpen) return;
        const row = loader.rowAt(focusRef.current);
        // not come yet: the query's first reply is on its way (no total yet) or a page is
        pendingOpen.current = !row && (loading || total === null) ? focusRef.current : null;
        if (row) onOpen(row);
      },
      toggle: () => toggleAt(focusRef.current, false),
      toggleRange: () => toggleAt(focusRef.current, true),
      focus: focusGrid,
      element: () => scrollRef.current,
    };
  });

  // the rows came (each reply renders the grid): the row Enter asked for opens, or is forgotten when the
  // reply did not bring it
  useEffect(() => {
    const index = pendingOpen.current;
    if (index === null) return;
    const row = loader.rowAt(index);
    if (row) {
      pendingOpen.current = null;
      onOpen?.(row);
    } else if (!loading && total !== null) pendingOpen.current = null;
  });

  const indexOf = (e: ReactMouseEvent) => {
    const rowEl = (e.target as HTMLElement).closest<HTMLElement>('[data-index]');
    return rowEl ? Number(rowEl.dataset.index) : null;
  };
  const onClick = (e: ReactMouseEvent) => {
    const index = indexOf(e);
    if (index === null) return;
    const target = e.target as HTMLElement;
    // Ctrl/Cmd/middle on the link: the browser's own new tab or window
    if (target.closest('a[data-row-link]') && (e.ctrlKey || e.metaKey || e.button !== 0)) return;
    if (target.matches('input[data-select]')) toggleAt(index, e.shiftKey);
    else if (e.shiftKey) {
      e.preventDefault();
      toggleAt(index, true);
    } else if (onOpen && !window.getSelection()?.toString()) {
      // a single click opens the row (not when it ends a text selection)
      e.preventDefault();
      const row = loader.rowAt(index);
      if (row) {
        onOpen(row);
        return;
      }
    } else if (target.closest('a[data-row-link]')) e.preventDefault();
    setFocus(index);
    focusGrid();
  };
  const onDoubleClick = (e: ReactMouseEvent) => {
    const index = indexOf(e);
    if (index === null || (e.target as HTMLElement).matches('input[data-select]')) return;
    const row = loader.rowAt(index);
    if (row && onOpen) onOpen(row);
  };

  // the full text of a cut cell, as its tooltip, set when the pointer comes (not on every row drawn)
  const showTitle = (e: ReactMouseEvent) => {
    const cell = (e.target as HTMLElement).closest<HTMLElement>('[data-col]');
    if (!cell) return;
    const text = cell.textContent ?? '';
    const cut = cell.scrollWidth > cell.clientWidth;
    if (cut && cell.title !== text) cell.title = text;
    else if (!cut && cell.title) cell.removeAttribute('title');
  };

  const rowId = (index: number) => rowDomId(gridId, index);
  // the name (else the first column but the id) carries the row's link
  const named = columns.findIndex((c) => c.id === 'name');
  const linkCol =
    named >= 0
      ? named
      : Math.max(
          0,
          columns.findIndex((c) => c.id !== 'id'),
        );
  const activeRendered = count > 0 && focusedIndex >= firstItem && focusedIndex <= lastItem;

  return (
    <div className="relative min-h-0 flex-1">
      <div
        ref={scrollRef}
        id={gridId}
        role="grid"
        aria-label={label}
        aria-rowcount={total === null ? -1 : count + 1}
        aria-colcount={columns.length + 1}
        aria-multiselectable="true"
        aria-busy={loading || undefined}
        aria-activedescendant={activeRendered ? rowId(focusedIndex) : undefined}
        tabIndex={0}
        data-testid="resource-grid"
        // An opaque background of its own: at a device scale of 1 Chromium scrolls a box on the compositor
        // only when its background is opaque (else it keeps LCD text and repaints the box on every scroll,
        // with every row a layer to move). Scrolled on the compositor, a frame repaints the rows that come in.
        className="group absolute inset-0 overflow-auto overscroll-contain bg-white outline-none [contain:strict]"
      >
        {header}
        {count > 0 && (
          <div
            role="rowgroup"
            className="relative"
            style={{ height: count * ROW_HEIGHT, minWidth: 'var(--lt-width)' }}
            onClick={onClick}
            onDoubleClick={onDoubleClick}
            onMouseOver={showTitle}
          >
            <GridRows
              first={firstItem}
              last={items.length ? lastItem : firstItem - 1}
              scrolling={virtualizer.isScrolling}
              seeking={seeking}
              version={version}
              gridId={gridId}
              loader={loader}
              columns={columns}
              focusedIndex={focusedIndex}
              selected={selected}
              selectLabel={selectLabel}
              words={words}
              rowHref={rowHref}
              linkCol={linkCol}
            />
          </div>
        )}
      </div>
      {overlay}
    </div>
  );
}

export const Grid = memo(GridInner) as typeof GridInner;
