/**
 * Group commit (issue 26 item 1): work submitted while a batch is being written waits for the next one, and
 * each batch is written by `run` in ONE transaction — the device events of many pushes, from different
 * devices, with one outbox insert and one NOTIFY. On PostgreSQL a transaction that sends a NOTIFY holds a
 * lock from its commit's start to its end (the notification queue's), so such commits run one after another;
 * one push per transaction made each push wait for every other push's commit and flush (~100 events/s in
 * bench/device-events). A batch takes at most one item per key (a device's pushes stay in their order, one
 * after another), at most `maxItems` items and about `maxWeight` of weight; at most `concurrency` batches are
 * written at once, each on one connection. A batch that fails is written again item by item, each in a
 * transaction of its own, so one bad push fails alone, as it did.
 */
export class GroupCommit<I, R> {
  private pending: Array<{
    key: string | number;
    item: I;
    resolve: (r: R) => void;
    reject: (err: unknown) => void;
  }> = [];
  private running = 0;
  /** the keys of the batches being written */
  private readonly busy = new Set<string | number>();
  /** batches written, and items in them (tests and diagnostics) */
  readonly stats = { batches: 0, items: 0 };

  constructor(
    private readonly run: (items: I[]) => Promise<R[]>,
    private readonly opts: {
      concurrency: number;
      maxItems: number;
      maxWeight: number;
      weight: (item: I) => number;
    },
  ) {}

  submit(key: string | number, item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.pending.push({ key, item, resolve, reject });
      this.kick();
    });
  }

  private kick(): void {
    if (this.running >= this.opts.concurrency || !this.pending.length) return;
    this.running++;
    // what arrives in the same turn of the event loop joins this batch
    setImmediate(() => void this.next());
  }

  private async next(): Promise<void> {
    const batch: typeof this.pending = [];
    const rest: typeof this.pending = [];
    const keys = new Set<string | number>();
    let weight = 0;
    for (const p of this.pending) {
      const w = this.opts.weight(p.item);
      if (
        this.busy.has(p.key) ||
        keys.has(p.key) ||
        batch.length >= this.opts.maxItems ||
        (batch.length > 0 && weight + w > this.opts.maxWeight)
      )
        rest.push(p);
      else {
        batch.push(p);
        keys.add(p.key);
        weight += w;
      }
    }
    this.pending = rest;
    for (const k of keys) this.busy.add(k);
    try {
      if (!batch.length) return;
      this.stats.batches++;
      this.stats.items += batch.length;
      let results: R[] | null = null;
      try {
        results = await this.run(batch.map((p) => p.item));
      } catch (err) {
        if (batch.length === 1) batch[0]!.reject(err);
      }
      if (results) batch.forEach((p, i) => p.resolve(results[i]!));
      else if (batch.length > 1)
        for (const p of batch) {
          try {
            const [r] = await this.run([p.item]);
            p.resolve(r!);
          } catch (err) {
            p.reject(err);
          }
        }
    } finally {
      for (const k of keys) this.busy.delete(k);
      this.running--;
      // an empty batch (every key waiting was busy) leaves the next kick to the batch that holds them
      if (batch.length) while (this.running < this.opts.concurrency && this.pending.length) this.kick();
    }
  }
}
