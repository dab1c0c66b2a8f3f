import { AsyncLocalStorage } from 'node:async_hooks';

/** The slot of the fair queue's task running now, if any (what `parkSlot` gives back). */
const slots = new AsyncLocalStorage<{ park(): boolean }>();

/**
 * Gives the running task's place in its fair queue back while it waits on work that holds no database place
 * of its own — a push waiting for the group commit of device events (handlers/device-event), which writes
 * many pushes in one transaction on one connection. Bounded: once the queue's parked tasks reach their
 * maximum the task keeps its place (false). Outside a queued task it does nothing (false).
 */
export function parkSlot(): boolean {
  return slots.getStore()?.park() ?? false;
}

/**
 * Device work between people's requests (issue 20 item 4): what devices push runs through one queue per
 * instance with at most `concurrency` messages handled at once — fewer than the database's places, so people's
 * requests always find one — one at a time and in order per device, round-robin across devices, so one
 * device's burst waits behind its own messages and not in front of another device's. A device's next message
 * starts when its last one has ended (parked or not): two pushes sent back to back are taken in the order
 * sent, as their quotas and answers assume (a second push that overtook the first took the room the first's
 * pictures needed). The queue is bounded, in all and per device:
 * a message that finds it full is refused at once (the caller answers the device on its own topic).
 */
export class FairQueue {
  /** the tasks waiting of the keys with none running or parked, in round-robin order */
  private readonly queues = new Map<string, Array<() => Promise<void>>>();
  /** the keys with a task running or parked, with the tasks that wait for it (back in line when it ends) */
  private readonly busy = new Map<string, Array<() => Promise<void>>>();
  private running = 0;
  private waiting = 0;
  /** tasks that gave their place back (`parkSlot`) and have not ended yet */
  private parked = 0;
  private readonly drained: Array<() => void> = [];

  constructor(
    private readonly concurrency: number,
    private readonly max: number,
    private readonly perKeyMax: number,
    /** tasks that may wait parked at once, beside the `concurrency` running (0: none park) */
    private readonly parkedMax = 0,
  ) {}

  /** Queues `task` under `key`; false (and nothing queued) when the queue or the key's share is full. */
  push(key: string, task: () => Promise<void>): boolean {
    const held = this.busy.get(key);
    const q = held ?? this.queues.get(key);
    if (this.waiting >= this.max || (q?.length ?? 0) >= this.perKeyMax) return false;
    if (q) q.push(task);
    else this.queues.set(key, [task]);
    this.waiting++;
    this.pump();
    return true;
  }

  /** messages waiting, running and parked now */
  get size(): { waiting: number; running: number; parked: number } {
    return { waiting: this.waiting, running: this.running, parked: this.parked };
  }

  /** Resolves once nothing waits, runs or is parked. */
  idle(): Promise<void> {
    if (!this.waiting && !this.running && !this.parked) return Promise.resolve();
    return new Promise((resolve) => this.drained.push(resolve));
  }

  private pump(): void {
    // `waiting` counts the tasks held behind their key's running one too; only `queues` holds tasks that may start
    while (this.running < this.concurrency && this.queues.size > 0) {
      // the key first in line gives one task; its others wait until that one ends, then go to the back of
      // the line: round-robin across devices
      const [key, q] = this.queues.entries().next().value as [string, Array<() => Promise<void>>];
      const task = q.shift()!;
      this.queues.delete(key);
      this.busy.set(key, q);
      this.waiting--;
      this.running++;
      let parked = false;
      const slot = {
        park: () => {
          if (parked || this.parked >= this.parkedMax) return parked;
          parked = true;
          this.running--;
          this.parked++;
          // the place given back goes to the next in line
          queueMicrotask(() => this.pump());
          return true;
        },
      };
      void slots
        .run(slot, task)
        .catch(() => undefined)
        .finally(() => {
          if (parked) this.parked--;
          else this.running--;
          const held = this.busy.get(key)!;
          this.busy.delete(key);
          if (held.length) this.queues.set(key, held);
          this.pump();
          if (!this.waiting && !this.running && !this.parked)
            for (const done of this.drained.splice(0)) done();
        });
    }
  }
}

/**
 * A fixed-window counter per key in memory (what one device may push): no database write per message, so a
 * flood costs the server nothing but this map. Windows by the server's clock.
 */
export class WindowCounter {
  private readonly counts = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  /** Counts one hit; the seconds to wait when it is over the limit, else 0. */
  hit(key: string, now: number): number {
    let c = this.counts.get(key);
    if (!c || now - c.start >= this.windowMs) {
      if (this.counts.size > 10_000) this.prune(now);
      c = { start: now, count: 0 };
      this.counts.set(key, c);
    }
    c.count++;
    return c.count > this.limit ? Math.max(1, Math.ceil((c.start + this.windowMs - now) / 1000)) : 0;
  }

  private prune(now: number): void {
    for (const [k, c] of this.counts) if (now - c.start >= this.windowMs) this.counts.delete(k);
  }
}
