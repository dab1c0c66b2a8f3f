import type { Kysely } from 'kysely';
import type { ServerContext } from '../context';
import type { DB } from '../db/schema';
import { CallUpdatedEvent } from '../events/define';

export type CallUpdate = { projectId: number; number: string; call: Record<string, unknown> };

/** One write of the queue: its statements in `trx`, and the CallUpdated events it publishes handed to `publish`. */
export type Write = (trx: Kysely<DB>, publish: (updates: CallUpdate[]) => void) => Promise<void>;

interface Pending {
  write: Write;
  done: (err?: Error) => void;
}

/** at most this many writes in one transaction */
const BATCH = 64;

/**
 * The calls' writes (docs/decisions.md "Telephony: routing from memory, dialog events off the SIP workers"):
 * a new call routed by `sip.route` is written after the answer went to the SIP server, and the dialog events
 * (`sip.call_events`) after it, in the order they came — one queue per instance, so an answer or an end is
 * never applied before the call it concerns was written. What is queued when the queue is drained goes in
 * one transaction, its CallUpdated events in one statement (delivered once it commits); when that transaction fails, each write is tried
 * again alone, so one bad write costs only itself. `idle()` waits until everything queued is written (the
 * SIP module's stop, tests).
 */
export class CallWriter {
  private queue: Pending[] = [];
  private draining: Promise<void> | null = null;

  constructor(private readonly contextOf: () => ServerContext) {}

  /** Queues a write; the promise settles once it is committed (or failed). */
  push(write: Write): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ write, done: (err) => (err ? reject(err) : resolve()) });
      this.kick();
    });
  }

  /**
   * Drains unless a drain runs. A write queued after the drain's last look but before it ended (another
   * request's continuation between the two) is drained by a new one, not left until the next call's write.
   */
  private kick(): void {
    this.draining ??= this.drain().finally(() => {
      this.draining = null;
      if (this.queue.length) this.kick();
    });
  }

  /** Resolves once every write queued so far is done. */
  async idle(): Promise<void> {
    while (this.draining) await this.draining;
  }

  /** writes waiting (diagnostics, tests) */
  get pending(): number {
    return this.queue.length;
  }

  private async drain(): Promise<void> {
    // let the requests of this turn queue their writes first: they share a transaction
    await new Promise<void>((r) => setImmediate(r));
    while (this.queue.length) {
      const batch = this.queue.splice(0, BATCH);
      try {
        await this.commit(batch.map((p) => p.write));
        for (const p of batch) p.done();
      } catch (err) {
        if (batch.length === 1) {
          this.fail(batch[0]!, err as Error);
          continue;
        }
        for (const p of batch) {
          try {
            await this.commit([p.write]);
            p.done();
          } catch (one) {
            this.fail(p, one as Error);
          }
        }
      }
    }
  }

  private commit(writes: Write[]): Promise<void> {
    const app = this.contextOf();
    return app.outbox.unit(() =>
      app.db.transaction().execute(async (trx) => {
        // the batch's CallUpdated events in one statement, in the order of the writes
        const updates: CallUpdate[] = [];
        for (const w of writes) await w(trx, (u) => updates.push(...u));
        await app.outbox.emitMany(trx, CallUpdatedEvent, updates);
      }),
    );
  }

  private fail(p: Pending, err: Error): void {
    this.contextOf().log.error({ err: err.message }, 'a call was not written');
    p.done(err);
  }
}
