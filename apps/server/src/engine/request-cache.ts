/**
 * What requests pay before their own work, remembered between requests (issue 14 item 5). Two instances:
 *
 * `authCache` — the caller behind an access token (session, user, role, permissions), and a user's groups,
 * their subtree and the roles their role may assign: one to three statements a request, about as many as a
 * list page's own.
 *
 * Correctness first — a revoked session or a role taken away must stop working at once:
 * - Everything is forgotten at once (one epoch) on any change that may touch it: locally, after every command
 *   that is not a read (`dispatch`; not what devices push); from the database (PGlite's own notifications, PostgreSQL's LISTEN), through PostgreSQL triggers on the
 *   tables these facts come from (sessions, users, roles, accounts, user_domains, domains: migration 0028)
 *   that NOTIFY `lintel_auth` — so a change made on another instance, or by hand in SQL, reaches every
 *   instance's cache.
 * - A read that began before a change is never stored after it: entries carry the epoch their read began in,
 *   and a store into a newer epoch is dropped.
 * - On PostgreSQL the cache is used only while the instance listens for those notifications; while its
 *   listener is down (reconnecting) every request reads afresh, as without a cache.
 * - Entries live at most `ttlMs` (LINTEL_AUTH_CACHE_MS, default 10 s; 0 turns the cache off) and the number of
 *   entries is bounded (the oldest go first). Refusals (unknown or revoked tokens) are never stored, so a
 *   flood of invented tokens cannot fill it.
 *
 * `estimates` — the planner's estimate of how many rows a list's filter matches (engine/list.ts), for the
 * same statement and parameters (project and scope included): an estimate is approximate by contract, so it
 * is kept its time-to-live with no invalidation; exact counts are never kept.
 */
export class RequestCache {
  private epoch = 0;
  private readonly entries = new Map<string, { value: unknown; at: number; epoch: number }>();
  /** whether the cache may be used now (PostgreSQL: while the invalidation listener is connected) */
  private live: boolean;

  constructor(
    private readonly opts: {
      ttlMs: number;
      maxEntries?: number;
      /** PostgreSQL: invalidations come from other instances too, so wait for the listener */
      needsListener: boolean;
      now?: () => number;
    },
  ) {
    this.live = !opts.needsListener;
  }

  get enabled(): boolean {
    return this.opts.ttlMs > 0 && this.live;
  }

  private readonly clearListeners = new Set<() => void>();

  /** Forgets everything; reads in flight will not store what they read. */
  clear(): void {
    this.epoch++;
    this.entries.clear();
    for (const listener of this.clearListeners) listener();
  }

  /**
   * The epoch: what is read now is valid until it changes. A copy kept elsewhere (the SIP server's routes)
   * carries the epoch its read began in, and is forgotten when `onClear` says the epoch moved.
   */
  get generation(): number {
    return this.epoch;
  }

  /** `listener` runs at each `clear` (after the epoch moved); the returned function removes it. */
  onClear(listener: () => void): () => void {
    this.clearListeners.add(listener);
    return () => this.clearListeners.delete(listener);
  }

  /** The invalidation listener is (dis)connected: the cache is used only while it is. */
  setListening(on: boolean): void {
    if (!this.opts.needsListener) return;
    this.clear();
    this.live = on;
  }

  /** The value under `key`, read by `read` when it is not held (or is too old); `keep` says whether to store it. */
  async get<T>(key: string, read: () => Promise<T>, keep: (v: T) => boolean = () => true): Promise<T> {
    if (!this.enabled) return read();
    const now = this.now();
    const hit = this.entries.get(key);
    if (hit && hit.epoch === this.epoch && now - hit.at < this.opts.ttlMs) return hit.value as T;
    const epoch = this.epoch;
    const value = await read();
    if (epoch === this.epoch && this.enabled && keep(value)) {
      this.entries.delete(key);
      this.entries.set(key, { value, at: now, epoch });
      const max = this.opts.maxEntries ?? 10_000;
      while (this.entries.size > max) this.entries.delete(this.entries.keys().next().value!);
    }
    return value;
  }

  /** entries held (tests, diagnostics) */
  get size(): number {
    return this.entries.size;
  }

  private now(): number {
    return this.opts.now ? this.opts.now() : performance.now();
  }
}

/** The channel the triggers of migration 0028 notify on. */
export const AUTH_CHANGED_CHANNEL = 'lintel_auth';

/** The channel the triggers of migration 0079 notify on: the facts the routing of calls reads changed. */
export const ROUTES_CHANGED_CHANNEL = 'lintel_sip_routes';
