import { sql, type Kysely } from 'kysely';
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
        const env = { storageDir: opts.storageDir ?? '' };
        const cutoffOf = (days: number) => new Date(now.getTime() - days * DAY_MS);
        // a project's own retention (its settings' `retention_days`, /general-settings) replaces the default
        // for its rows; every other row (and those of no project) keeps the installation's
        const own = await sql<{ id: number; days: number }>`
          select id, (settings->'retention_days'->>${store.noun})::int as days from projects
          where settings->'retention_days'->>${store.noun} is not null`.execute(db);
        for (const p of own.rows)
          await pruneJournal(db, store, cutoffOf(p.days), opts.batch, sql`project_id = ${p.id}`, env);
        const others = own.rows.map((p) => p.id);
        await pruneJournal(
          db,
          store,
          cutoffOf(retentionDays(store, opts.configured)),
          opts.batch,
          others.length ? sql`(project_id is null or project_id <> all(${others}::int[]))` : sql`true`,
          env,
        );
        await enqueue(store, new Date(Date.parse(dayOf(now)) + DAY_MS));
      },
    });
  return {
    async enqueueToday() {
      for (const store of stores) await enqueue(store, clock.now());
    },
  };
}
