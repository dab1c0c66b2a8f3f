import { Realtime, systemTimers, type NotificationRecord, type Timers } from '@lintel/core';

export interface UnreadState {
  data: NotificationRecord[];
  total: number;
  /** the unread important ones, newest first, and how many there are: the popups */
  important: NotificationRecord[];
  importantTotal: number;
  loaded: boolean;
}

const EMPTY: UnreadState = { data: [], total: 0, important: [], importantTotal: 0, loaded: false };

/** The order of `notification.unread`: the newest (highest id) first. */
const newestFirst = (list: NotificationRecord[]) => [...list].sort((a, b) => b.id - a.id);

export interface FeedDeps {
  /** reads the unread list (`notification.unread`) */
  load(): Promise<{
    data: NotificationRecord[];
    important: NotificationRecord[];
    meta: { total: number; important: number };
  }>;
  /** marks one read (`notification.read`) */
  markRead(id: number): Promise<unknown>;
  timers?: Timers;
}

/**
 * The bell's unread list (spec part 1 §4 "Notifications", part 2 §7): read again 1 s after a notification
 * arrives (several arrivals in that second: one read), and the items the bell showed marked read 1 s after it
 * opened. Timers are injected, so a test moves time instead of waiting.
 */
export class UnreadFeed {
  private state: UnreadState = EMPTY;
  private readonly listeners = new Set<(s: UnreadState) => void>();
  private refreshTimer: unknown = null;
  private readTimer: unknown = null;
  private readonly timers: Timers;
  private loading: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(private readonly deps: FeedDeps) {
    this.timers = deps.timers ?? systemTimers;
  }

  get current(): UnreadState {
    return this.state;
  }

  subscribe(fn: (s: UnreadState) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Reads the unread list now (one read at a time; asked again while reading: once more after). */
  reload(): Promise<void> {
    if (this.loading) {
      this.again = true;
      return this.loading;
    }
    this.loading = (async () => {
      try {
        do {
          this.again = false;
          const r = await this.deps.load();
          if (this.stopped) return;
          this.set({
            data: r.data,
            total: r.meta.total,
            important: r.important,
            importantTotal: r.meta.important,
            loaded: true,
          });
        } while (this.again && !this.stopped);
      } finally {
        this.loading = null;
      }
    })();
    return this.loading;
  }

  /** A notification arrived on the websocket: the list is read again 1 s later. */
  arrived(n?: NotificationRecord): void {
    if (n && !this.state.data.some((x) => x.id === n.id)) {
      // shown at once, in the server's order (newest id first) whatever order the events came in: the bell
      // marks read what it shows, so an early arrival must not push a newer one out of the first five; the
      // count is settled by the read that follows
      const important = n.significance === 'important';
      this.set({
        ...this.state,
        data: newestFirst([n, ...this.state.data]),
        total: this.state.total + 1,
        important: important ? newestFirst([n, ...this.state.important]) : this.state.important,
        importantTotal: this.state.importantTotal + (important ? 1 : 0),
      });
    }
    if (this.refreshTimer !== null) return;
    this.refreshTimer = this.timers.setTimeout(() => {
      this.refreshTimer = null;
      void this.reload().catch(() => undefined);
    }, Realtime.unreadRefreshDebounceMs);
  }

  /**
   * Marks these read now (a popup dismissed or followed): they leave the lists at once, and the list is read
   * again once the server has them.
   */
  async read(ids: readonly number[]): Promise<void> {
    const gone = new Set(ids);
    const unread = new Set([...this.state.data, ...this.state.important].map((n) => n.id));
    const keep = (list: NotificationRecord[]) => list.filter((n) => !gone.has(n.id));
    const important = keep(this.state.important);
    this.set({
      ...this.state,
      data: keep(this.state.data),
      total: Math.max(0, this.state.total - ids.filter((id) => unread.has(id)).length),
      important,
      importantTotal: Math.max(
        0,
        this.state.importantTotal - (this.state.important.length - important.length),
      ),
    });
    await Promise.allSettled(ids.map((id) => this.deps.markRead(id)));
    await this.reload();
  }

  /** The bell opened showing these: they are marked read 1 s later, unless it closed before. */
  opened(ids: readonly number[]): void {
    this.closed();
    if (!ids.length) return;
    this.readTimer = this.timers.setTimeout(() => {
      this.readTimer = null;
      void Promise.allSettled(ids.map((id) => this.deps.markRead(id))).then(() => this.reload());
    }, Realtime.markReadDelayMs);
  }

  /** The bell closed: what was not yet marked stays unread. */
  closed(): void {
    if (this.readTimer !== null) this.timers.clearTimeout(this.readTimer);
    this.readTimer = null;
  }

  stop(): void {
    this.stopped = true;
    this.closed();
    if (this.refreshTimer !== null) this.timers.clearTimeout(this.refreshTimer);
    this.refreshTimer = null;
  }

  private set(s: UnreadState) {
    this.state = s;
    for (const fn of this.listeners) fn(s);
  }
}
