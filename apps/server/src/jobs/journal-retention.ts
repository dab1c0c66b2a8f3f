import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { DB } from '../db/schema';
import type { Clock } from '../clock';
import { pruneJournal, retentionDays, type JournalStore } from '../engine/journal';
import type { JobQueue } from './queue';

const DAY_MS = 24 * 3600 * 1000;
const dayOf = (d: Date) => d.toISOString().slice(0, 10);

/** The job kind of a journal's retention, e.g. `audit_event.retention`. */
export const retentionKind = (store: Pick<JournalStore<unknown>, 'noun'>) => `${store.noun}.retention`;

/**
 * Each journal's retention as a durable job: once a day (one job per journal and day, by idempotency key,
 * whichever instance enqueues first) it deletes the rows older than the journal's retention in batches,
 * then queues the next day's run at the next midnight UTC.
 */
export function defineRetentionJobs(opts: {
  db: Kysely<DB>;
  jobs: JobQueue;
  clock: Clock;
  stores: readonly JournalStore<unknown>[];
  configured?: Partial<Record<string, number>>;
  batch?: number;
  /** where stored files are (a journal's rows may name some: device events' pictures) */
  storageDir?: string;
}): { enqueueToday(): Promise<void> } {
  const { db, jobs, clock, stores } = opts;
  const enqueue = (store: JournalStore<unknown>, at: Date) =>
    jobs.enqueue(
      db,
      retentionKind(store),
      {},
      { idempotencyKey: `${retentionKind(store)}:${dayOf(at)}`, runAt: at },
    );
  for (const store of stores)
    jobs.define({
      kind: retentionKind(store),
      payload: z.object({}),
      async run() {
        const now = clock.now();
        const cutoff = new Date(now.getTime() - retentionDays(store, opts.configured) * DAY_MS);
        await pruneJournal(db, store, cutoff, opts.batch, { storageDir: opts.storageDir ?? '' });
        await enqueue(store, new Date(Date.parse(dayOf(now)) + DAY_MS));
      },
    });
  return {
    async enqueueToday() {
      for (const store of stores) await enqueue(store, clock.now());
    },
  };
}
