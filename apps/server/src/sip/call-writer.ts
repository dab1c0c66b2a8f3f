import type { Kysely } from 'kysely';
import type { ServerContext } from '../context';
import type { DB } from '../db/schema';
import { outsideRequest } from '../db/pglite-pool';
import { CallUpdatedEvent, WaitingCallUpdatedEvent } from '../events/define';

export type CallUpdate = { projectId: number; number: string; call: Record<string, unknown> };

/**
 * The updates of awaiting calls, once per call (the last of each), for the concierges who may intercept
 * (`private-calls-waiting`).
 */
export function waitingUpdates(
  updates: readonly CallUpdate[],
): { projectId: number; call: Record<string, unknown> }[] {
  const last = new Map<string, CallUpdate>();
  for (const u of updates) if (u.call.type === 'awaiting') last.set(String(u.call.id), u);
  return [...last.values()].map((u) => ({ projectId: u.projectId, call: u.call }));
}

/** Publishes calls' updates: on each number's channel, and the awaiting ones on the waiting calls' channel. */
export async function emitCallUpdates(
  app: Pick<ServerContext, 'outbox'>,
  trx: Kysely<DB>,
  updates: readonly CallUpdate[],
): Promise<void> {
  await app.outbox.emitMany(trx, CallUpdatedEvent, updates);
  await app.outbox.emitMany(trx, WaitingCallUpdatedEvent, waitingUpdates(updates));
}

/** One write of the queue: its statements in `trx`, and the CallUpdated events it publishes handed to `publish`. */
export type Write = (trx: Kysely<DB>, publish: (updates: CallUpdate[]) => void) => Promise<void>;

interface Pending {
  write: Write;
  done: (err?: Error) => void;
  /** when it was queued (performance.now()) */
  at: number;
}

/** at most this many writes in one transaction */
const BATCH = 64;
/** writes wait until no write has been queued for this long: the calls keep coming, their setup goes first */
export const QUIET_MS = 20;
/** …but never longer than this after the oldest of them was queued (the bookkeeping's lag under load) */
export const MAX_LAG_MS = 2000;
/** a transaction of the queue holds the server's one thread (PGlite) this long at most while calls keep coming… */
const BUSY_SLICE_MS = 15;
/** …and this long when they have stopped */
const QUIET_SLICE_MS = 100;

/**
 * The calls' writes (docs/decisions.md "Telephony: routing from memory, dialog events off the SIP workers",
 * "Telephony: call setup before the calls' bookkeeping"): a new call routed by `sip.route` is written after
 * the answer went to the SIP server, and the dialog events (`sip.call_events`) after it, in the order they
 * came — one queue per instance, so an answer or an end is never applied before the call it concerns was
 * written.
 *
 * The writes are the server's background work: on the embedded database a statement runs on the server's one
 * thread, and a route request arriving meanwhile waits behind it. So while writes keep being queued (calls
 * are being set up) they wait, until QUIET_MS pass without a new one or the oldest has waited MAX_LAG_MS;
 * then they are written in transactions that each hold the thread at most a slice of time, with a turn of the
 * event loop between two, so that a route request waits at most one slice. A transaction's CallUpdated
 * events go in one statement (delivered once it commits); when a transaction fails, each of its writes is
 * tried again alone, so one bad write costs only itself. `idle()` writes everything queued at once and waits
 * for it (the SIP module's stop, tests).
 */
export class CallWriter {
  private queue: Pending[] = [];
  private draining: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** when the last write was queued */
  private lastPush = -Infinity;
  /** callers of `idle()` waiting: write without waiting for quiet */
  private flushing = 0;

  constructor(private readonly contextOf: () => ServerContext) {}

  /** Queues a write; the promise settles once it is committed (or failed). */
  push(write: Write): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const at = performance.now();
      this.lastPush = at;
      this.queue.push({ write, done: (err) => (err ? reject(err) : resolve()), at });
      this.schedule();
    });
  }

  /**
   * Writes a slice now, or sets a timer for when it may. Drains and timers run outside the request that
   * queued the write (pglite-pool.ts): the queue is not that request's database work, nor bound by its time.
   */
  private schedule(): void {
    if (this.draining || this.timer || !this.queue.length) return;
    const now = performance.now();
    const wait = this.flushing
      ? 0
      : Math.min(QUIET_MS - (now - this.lastPush), MAX_LAG_MS - (now - this.queue[0]!.at));
    if (wait > 0) {
      this.timer = outsideRequest(() =>
        setTimeout(() => {
          this.timer = null;
          this.schedule();
        }, Math.ceil(wait)),
      );
      return;
    }
    // a write queued after the slice's last look but before it ended is taken by the next one
    this.draining = outsideRequest(() => this.slice()).finally(() => {
      this.draining = null;
      this.schedule();
    });
  }

  /** Resolves once every write queued so far is done (written at once, without waiting for quiet). */
  async idle(): Promise<void> {
    this.flushing++;
    try {
      if (this.timer) {
        clearTimeout(this.timer);
        this.timer = null;
      }
      this.schedule();
      while (this.draining || this.queue.length) {
        this.schedule();
        if (this.draining) await this.draining;
      }
    } finally {
      this.flushing--;
    }
  }

  /** writes waiting (diagnostics, tests) */
  get pending(): number {
    return this.queue.length;
  }

  /** One transaction of writes from the head of the queue, after a turn of the event loop. */
  private async slice(): Promise<void> {
    // a turn of the event loop first: the requests that arrived meanwhile (routes) are answered, and the
    // writes of this turn share the transaction
    await new Promise<void>((r) => setImmediate(r));
    if (!this.queue.length) return;
    const quiet = performance.now() - this.lastPush >= QUIET_MS;
    const batch = this.queue.splice(0, BATCH);
    const tried = { n: 0 };
    try {
      await this.commit(
        batch.map((p) => p.write),
        quiet || this.flushing ? QUIET_SLICE_MS : BUSY_SLICE_MS,
        tried,
      );
      for (const p of batch.slice(0, tried.n)) p.done();
      this.queue.unshift(...batch.slice(tried.n));
    } catch (err) {
      // the write that failed is one of those tried; those not reached go back to the head of the queue
      const failed = batch.slice(0, Math.min(batch.length, tried.n + 1));
      this.queue.unshift(...batch.slice(failed.length));
      if (failed.length === 1) {
        this.fail(failed[0]!, err as Error);
        return;
      }
      for (const p of failed) {
        try {
          await this.commit([p.write], Infinity, { n: 0 });
          p.done();
        } catch (one) {
          this.fail(p, one as Error);
        }
      }
    }
  }

  /** The writes in one transaction, up to `sliceMs` of it (at least one); `tried.n`: how many ran. */
  private commit(writes: Write[], sliceMs: number, tried: { n: number }): Promise<void> {
    const app = this.contextOf();
    return app.outbox.transaction(app.db, async (trx) => {
      tried.n = 0;
      const started = performance.now();
      // the transaction's CallUpdated events in one statement, in the order of the writes
      const updates: CallUpdate[] = [];
      for (const w of writes) {
        await w(trx, (u) => updates.push(...u));
        tried.n++;
        if (performance.now() - started >= sliceMs) break;
      }
      await emitCallUpdates(app, trx, updates);
    });
  }

  private fail(p: Pending, err: Error): void {
    this.contextOf().log.error({ err: err.message }, 'a call was not written');
    p.done(err);
  }
}
