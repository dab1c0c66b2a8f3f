/**
 * Timers a component schedules with, injected so a test moves time instead of sleeping (the server's
 * equivalent is its Clock). Production passes nothing and gets the platform's timers.
 */
export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemTimers: Timers = {
  setTimeout: (fn, ms) => globalThis.setTimeout(fn, ms),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof globalThis.setTimeout>),
};

interface Pending {
  id: number;
  at: number;
  ms: number;
  fn: () => void;
}

/** Timers that fire only when a test advances them. */
export class ManualTimers implements Timers {
  private now = 0;
  private next = 1;
  private pending: Pending[] = [];

  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.next++;
    this.pending.push({ id, at: this.now + ms, ms, fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.pending = this.pending.filter((p) => p.id !== handle);
  }

  /** The delays of the timers waiting now, in the order they would fire. */
  delays(): number[] {
    return [...this.pending].sort((a, b) => a.at - b.at).map((p) => p.ms);
  }

  /** Moves time on by `ms`, firing every timer due by then in order. */
  advance(ms: number): void {
    const until = this.now + ms;
    for (;;) {
      const due = this.pending.filter((p) => p.at <= until).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.pending = this.pending.filter((p) => p !== due);
      this.now = due.at;
      due.fn();
    }
    this.now = until;
  }
}
