/**
 * Server-side paging for a virtual table: rows are fetched a page at a time around what is on screen, the
 * total of the first reply sizes the scrollbar, and every request of an older query is aborted.
 */

export const PAGE_SIZE = 100;
/** Pages kept in memory; the farthest from the view are dropped first (100 pages = 10,000 rows). */
export const MAX_CACHED_PAGES = 100;
/** How close to a page's edge (in rows) the view may come before the neighbouring page is fetched too. */
export const PREFETCH_ROWS = 30;
const MAX_IN_FLIGHT = 3;
/** Pages are asked for at most this often while the range keeps changing (a fast scroll). */
const PUMP_INTERVAL_MS = 80;

export interface PageReply<Row> {
  data: Row[];
  /** `total_is_estimate`: the server estimated the total (issue 14); later pages correct it */
  meta: { total: number; total_is_estimate?: boolean };
}

export type FetchPage<Row> = (page: number, limit: number, signal: AbortSignal) => Promise<PageReply<Row>>;

export interface PlanInput {
  /** first and last row index on screen (inclusive, 0-based) */
  first: number;
  last: number;
  /** rows in the list; null before the first reply */
  total: number | null;
  pageSize: number;
  prefetchRows?: number;
}

/** 1-based page number of a 0-based row index. */
export const pageOf = (index: number, pageSize: number) => Math.floor(index / pageSize) + 1;

/**
 * The pages a view needs, most urgent first: the pages under the visible rows (from the middle of the view
 * outwards), then the neighbour page when the view is within `prefetchRows` of its edge. Before the total
 * is known, page 1 is what is needed.
 */
export function planPages({
  first,
  last,
  total,
  pageSize,
  prefetchRows = PREFETCH_ROWS,
}: PlanInput): number[] {
  if (total === null) return [1];
  if (total <= 0) return [];
  const maxPage = Math.ceil(total / pageSize);
  const lo = Math.max(0, Math.min(first, total - 1));
  const hi = Math.max(lo, Math.min(last, total - 1));
  const from = pageOf(lo, pageSize);
  const to = pageOf(hi, pageSize);
  // the page holding the middle of the view first, then outwards
  const mid = (lo + hi) / 2;
  const distance = (p: number) => Math.abs((p - 0.5) * pageSize - mid);
  const visible: number[] = [];
  for (let p = from; p <= to; p++) visible.push(p);
  visible.sort((a, b) => distance(a) - distance(b) || a - b);
  const out = [...visible];
  if (lo - (from - 1) * pageSize < prefetchRows && from > 1) out.push(from - 1);
  if (to * pageSize - 1 - hi < prefetchRows && to < maxPage) out.push(to + 1);
  return out;
}

/** Pages worth keeping in flight: what the plan wants, plus one page either side (a small scroll back). */
export function pagesToKeep(plan: readonly number[]): Set<number> {
  const keep = new Set<number>();
  for (const p of plan) for (const q of [p - 1, p, p + 1]) if (q >= 1) keep.add(q);
  return keep;
}

/** Which cached pages to drop so that at most `max` remain: the farthest from `center` first. */
export function pagesToEvict(cached: Iterable<number>, center: number, max: number): number[] {
  const pages = [...cached];
  if (pages.length <= max) return [];
  pages.sort((a, b) => Math.abs(b - center) - Math.abs(a - center) || b - a);
  return pages.slice(0, pages.length - max);
}

interface CachedPage<Row> {
  rows: Row[];
  /** from before a reload: shown until the fresh page arrives */
  stale: boolean;
}

export interface LoaderSummary {
  total: number | null;
  /** the total is the server's estimate ("about 12,300") */
  estimate: boolean;
  /** a request is under way */
  loading: boolean;
  /** the last failure, until retry() */
  error: unknown;
}

interface LoaderOptions<Row> {
  fetchPage: FetchPage<Row>;
  pageSize?: number;
  maxPages?: number;
  pumpIntervalMs?: number;
}

export class PageLoader<Row> {
  readonly pageSize: number;
  private readonly maxPages: number;
  private readonly pumpIntervalMs: number;
  private fetchPage: FetchPage<Row>;
  private generation = 0;
  private pages = new Map<number, CachedPage<Row>>();
  private inFlight = new Map<number, AbortController>();
  private failed = new Set<number>();
  private total: number | null = null;
  private estimate = false;
  /** a reply of this query (since the last reload) gave the exact total */
  private exactKnown = false;
  private error: unknown = null;
  private range = { first: 0, last: 0 };
  private listeners = new Set<() => void>();
  private version = 0;
  private summary: LoaderSummary = { total: null, estimate: false, loading: false, error: null };
  private timer: ReturnType<typeof setTimeout> | null = null;
  private lastPump = -Infinity;
  private disposed = false;

  constructor(options: LoaderOptions<Row>) {
    this.fetchPage = options.fetchPage;
    this.pageSize = options.pageSize ?? PAGE_SIZE;
    this.maxPages = options.maxPages ?? MAX_CACHED_PAGES;
    this.pumpIntervalMs = options.pumpIntervalMs ?? PUMP_INTERVAL_MS;
  }

  // ----- for React (useSyncExternalStore) -----------------------------------------------------------------

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  /** Changes whenever any row, the total or the status changes. */
  getVersion = (): number => this.version;

  /** Changes only when the total or the status changes (not when rows arrive). */
  getSummary = (): LoaderSummary => this.summary;

  private emit() {
    this.version++;
    const loading = this.inFlight.size > 0;
    const s = this.summary;
    if (
      s.total !== this.total ||
      s.estimate !== this.estimate ||
      s.loading !== loading ||
      s.error !== this.error
    )
      this.summary = { total: this.total, estimate: this.estimate, loading, error: this.error };
    for (const l of this.listeners) l();
  }

  // ----- reading ------------------------------------------------------------------------------------------

  rowAt(index: number): Row | undefined {
    const page = this.pages.get(pageOf(index, this.pageSize));
    return page?.rows[index % this.pageSize];
  }

  /** The rows in memory between two indexes (inclusive), with their index; unloaded ones are skipped. */
  loadedRows(first: number, last: number): Array<{ index: number; row: Row }> {
    const out: Array<{ index: number; row: Row }> = [];
    for (let i = Math.max(0, first); i <= last; i++) {
      const row = this.rowAt(i);
      if (row !== undefined) out.push({ index: i, row });
    }
    return out;
  }

  /** Every row in memory (for "select what is loaded"). */
  allLoadedRows(): Row[] {
    return [...this.pages.entries()].sort((a, b) => a[0] - b[0]).flatMap(([, p]) => p.rows);
  }

  getTotal(): number | null {
    return this.total;
  }

  /** Whether the total is an estimate. */
  isEstimate(): boolean {
    return this.estimate;
  }

  // ----- driving ------------------------------------------------------------------------------------------

  /**
   * A row changed on the server and the change came with an event (a live list): every copy of the row in
   * memory takes the patch, without a request. Answers whether a row was there.
   */
  patchRow(matches: (row: Row) => boolean, patch: Partial<Row>): boolean {
    let changed = false;
    for (const page of this.pages.values())
      page.rows = page.rows.map((row) => {
        if (!matches(row)) return row;
        changed = true;
        return { ...row, ...patch };
      });
    if (changed) this.emit();
    return changed;
  }

  /** A new query: everything cached or under way belongs to the old one and goes. */
  setFetcher(fetchPage: FetchPage<Row>): void {
    // a remount (React's StrictMode mounts twice) brings a disposed loader back
    this.disposed = false;
    this.fetchPage = fetchPage;
    this.generation++;
    this.abortAll();
    this.pages.clear();
    this.failed.clear();
    this.total = null;
    this.estimate = false;
    this.exactKnown = false;
    this.error = null;
    this.range = { first: 0, last: 0 };
    this.emit();
    this.pump();
  }

  /** The same query again (after a change on the server): rows stay on screen until fresh ones arrive. */
  reload(): void {
    this.disposed = false;
    this.generation++;
    this.abortAll();
    for (const page of this.pages.values()) page.stale = true;
    this.exactKnown = false;
    // an empty list has no page under the view: ask for the first again (a live table that starts empty)
    if (this.total !== null && this.total <= 0) this.total = null;
    this.failed.clear();
    this.error = null;
    this.emit();
    this.pump();
  }

  /** Failed pages are asked for again. */
  retry(): void {
    this.failed.clear();
    this.error = null;
    this.emit();
    this.pump();
  }

  /** The rows on screen changed. */
  setRange(first: number, last: number): void {
    if (first === this.range.first && last === this.range.last) return;
    this.range = { first, last };
    this.schedule();
  }

  /** Stops: requests under way are aborted and their answers ignored (setFetcher starts it again). */
  dispose(): void {
    this.disposed = true;
    this.generation++;
    this.abortAll();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private abortAll() {
    for (const c of this.inFlight.values()) c.abort();
    this.inFlight.clear();
  }

  /** Throttled: at once when the last pump is old enough, else at the end of the interval. */
  private schedule() {
    if (this.timer || this.disposed) return;
    const wait = this.lastPump + this.pumpIntervalMs - Date.now();
    if (wait <= 0) this.pump();
    else
      this.timer = setTimeout(() => {
        this.timer = null;
        this.pump();
      }, wait);
  }

  private pump() {
    if (this.disposed) return;
    this.lastPump = Date.now();
    const plan = planPages({ ...this.range, total: this.total, pageSize: this.pageSize });
    // requests for pages the view has left are not worth their answer
    const keep = pagesToKeep(plan);
    let changed = false;
    for (const [page, controller] of this.inFlight)
      if (!keep.has(page)) {
        controller.abort();
        this.inFlight.delete(page);
        changed = true;
      }
    for (const page of plan) {
      if (this.inFlight.size >= MAX_IN_FLIGHT) break;
      const cached = this.pages.get(page);
      if ((cached && !cached.stale) || this.inFlight.has(page) || this.failed.has(page)) continue;
      this.start(page);
      changed = true;
    }
    if (changed) this.emit();
  }

  private start(page: number) {
    const controller = new AbortController();
    const generation = this.generation;
    this.inFlight.set(page, controller);
    this.fetchPage(page, this.pageSize, controller.signal).then(
      (reply) => {
        if (generation !== this.generation || controller.signal.aborted || this.disposed) return;
        this.inFlight.delete(page);
        this.pages.set(page, { rows: reply.data, stale: false });
        // an estimate sizes the scroll area until a reply knows better: a page near the estimated end says
        // at least how many rows exist, the last page says exactly; an exact total is not undone by a later
        // estimate of the same query
        const estimate = reply.meta.total_is_estimate === true;
        if (!estimate || !this.exactKnown) {
          this.total = reply.meta.total;
          this.estimate = estimate;
          this.exactKnown ||= !estimate;
        }
        // the list may have shrunk under us: pages past its end are gone
        const maxPage = Math.max(1, Math.ceil((this.total ?? 0) / this.pageSize));
        for (const p of this.pages.keys()) if (p > maxPage) this.pages.delete(p);
        const center = pageOf((this.range.first + this.range.last) >> 1, this.pageSize);
        for (const p of pagesToEvict(this.pages.keys(), center, this.maxPages)) this.pages.delete(p);
        this.emit();
        this.pump();
      },
      (err: unknown) => {
        if (generation !== this.generation || controller.signal.aborted || this.disposed) return;
        this.inFlight.delete(page);
        this.failed.add(page);
        this.error = err;
        this.emit();
      },
    );
  }
}
