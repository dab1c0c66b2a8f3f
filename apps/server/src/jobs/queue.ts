import { randomBytes } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import pg from 'pg';
import type { z, ZodType } from 'zod';
import type { FastifyBaseLogger } from 'fastify';
import type { DB } from '../db/schema';
import type { Clock } from '../clock';
import type { JobSettings } from '../config';
import { JobRefused, type JobKind } from './define';

export const JOBS_CHANNEL = 'lintel_jobs';

export interface JobRow {
  id: number;
  kind: string;
  payload: Record<string, unknown>;
  state: 'waiting' | 'running' | 'done' | 'failed' | 'cancelled';
  run_at: Date;
  attempts: number;
  max_attempts: number;
  last_error: string | null;
  idempotency_key: string | null;
  locked_by: string | null;
  locked_until: Date | null;
}

export interface JobOptions {
  /** a second job with the same key is not created; the first one's id is returned */
  idempotencyKey?: string;
  runAt?: Date;
  maxAttempts?: number;
}

/** The delay before attempt `attempt + 1`, after `attempt` failed. */
export function backoffS(
  settings: Pick<JobSettings, 'backoffBaseS' | 'backoffCapS'>,
  attempt: number,
): number {
  return Math.min(settings.backoffCapS, settings.backoffBaseS * 2 ** Math.max(0, attempt - 1));
}

type Q = Kysely<DB> | Transaction<DB>;

/**
 * Durable jobs in one table, on PostgreSQL and PGlite alike. Several instances share the table: a claim is
 * one UPDATE over `SELECT … FOR UPDATE SKIP LOCKED`, so a job goes to one instance, with a lease; a job whose
 * instance died is claimable again when the lease runs out. All times come from the injected clock.
 */
export class JobQueue {
  /** this instance's name in `locked_by` */
  readonly workerId = `${process.pid}-${randomBytes(4).toString('hex')}`;
  private readonly kinds = new Map<string, JobKind>();
  private readonly running = new Set<Promise<void>>();
  /** the ids of the jobs `running` holds */
  private readonly runningIds = new Set<number>();
  private timer: NodeJS.Timeout | null = null;
  private started = false;
  private pumping = false;
  /** the pump in progress (claiming and starting jobs), for `idle` */
  private pumpDone: Promise<void> | null = null;
  private again = false;
  private listener: pg.Client | null = null;

  constructor(
    private readonly opts: {
      db: Kysely<DB>;
      kind: 'pglite' | 'postgres';
      databaseUrl?: string;
      clock: Clock;
      log: FastifyBaseLogger;
      settings: JobSettings;
      /**
       * runs one job of a kind: `dispatchJob` (pipeline/dispatch.ts), the pipeline every command takes;
       * throwing means "try again later" until the attempts are used up, `JobRefused` means "never"
       */
      dispatch: (kind: JobKind, job: JobRow) => Promise<void>;
      /** the `jobs` event log (logs/log-files.ts): one line per run and its outcome */
      runLog?: Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>;
    },
  ) {}

  get settings(): JobSettings {
    return this.opts.settings;
  }

  /** The kinds this queue runs, by name. */
  get kindNames(): string[] {
    return [...this.kinds.keys()].sort();
  }

  /** Whether this instance's workers take jobs now (the module `jobs` runs). */
  get isStarted(): boolean {
    return this.started;
  }

  /** Registers a kind (jobs/define.ts); `maxAttempts` here overrides its declaration's (a configured count). */
  define(def: JobKind, options: { maxAttempts?: number } = {}): void {
    this.kinds.set(def.kind, options.maxAttempts ? { ...def, maxAttempts: options.maxAttempts } : def);
  }

  /**
   * Adds a job in the caller's transaction (or on its own); it becomes visible to workers when that commits.
   * The payload is checked against the kind's schema now: a job that could never run is not queued.
   */
  async enqueue<P extends ZodType>(
    q: Q,
    of: JobKind<P> | string,
    payload: z.input<P>,
    options: JobOptions = {},
  ): Promise<number> {
    const kind = typeof of === 'string' ? of : of.kind;
    const def = this.kinds.get(kind);
    if (!def) throw new Error(`unknown job kind ${kind}`);
    const checked = def.payload.safeParse(payload);
    if (!checked.success)
      throw new Error(`job ${kind}: the payload does not match its schema: ${checked.error.message}`);
    const now = this.opts.clock.now();
    const maxAttempts = options.maxAttempts ?? def.maxAttempts ?? 5;
    const inserted = await sql<{ id: number }>`
      insert into jobs (kind, payload, run_at, max_attempts, idempotency_key, created_at, updated_at)
      values (${kind}, ${JSON.stringify(payload)}::jsonb, ${options.runAt ?? now}, ${maxAttempts}, ${options.idempotencyKey ?? null}, ${now}, ${now})
      on conflict (idempotency_key) do nothing
      returning id`.execute(q);
    let id = inserted.rows[0]?.id;
    if (id === undefined) {
      const existing = await sql<{
        id: number;
      }>`select id from jobs where idempotency_key = ${options.idempotencyKey ?? null}`.execute(q);
      id = existing.rows[0]!.id;
    } else if (this.opts.kind === 'postgres') {
      await sql`select pg_notify(${JOBS_CHANNEL}, '')`.execute(q);
    }
    // in process: look soon (a job enqueued inside a transaction is seen once that commits)
    setImmediate(() => this.wake());
    return Number(id);
  }

  /**
   * Claims up to `n` due jobs for this instance: waiting ones whose time has come, and expired leases. The
   * claim is fair across kinds: a free worker goes to the kind that runs the fewest jobs now (across every
   * instance), oldest first within it, so a backlog of one kind (a webhook whose endpoint answers slowly, a
   * flood of device tasks) cannot hold every worker while a backup or a mail waits behind it. Only the kinds
   * this instance knows are claimed (an older instance leaves a newer kind to the instances that run it).
   */
  async claim(n: number): Promise<JobRow[]> {
    const now = this.opts.clock.now();
    const until = new Date(now.getTime() + this.opts.settings.leaseS * 1000);
    const kinds = JSON.stringify(this.kindNames);
    const mine = JSON.stringify([...this.runningIds]);
    const r = await sql<JobRow>`
      update jobs set state = 'running', locked_by = ${this.workerId}, locked_until = ${until}, attempts = attempts + 1, updated_at = ${now}
      where id in (
        select id from (
          select c.id, c.run_at,
            b.busy + row_number() over (partition by k.kind order by c.run_at, c.id) as place
          from (
            select kind from jsonb_array_elements_text(${kinds}::jsonb) as kinds(kind)
            -- a kind an operator stopped waits until it is started again (the workers, job_kind_pauses)
            where kind not in (select kind from job_kind_pauses)) k
          cross join lateral (
            select id, run_at from jobs j
            where j.kind = k.kind
              and ((j.state = 'waiting' and j.run_at <= ${now})
                -- a lease run out: its instance died, or its outcome was never recorded (the jobs this instance
                -- runs now renew theirs, and are never taken twice even when a stalled database let one lapse)
                or (j.state = 'running' and j.locked_until < ${now}
                  and j.id not in (select (jsonb_array_elements_text(${mine}::jsonb))::bigint)))
            order by j.run_at, j.id
            limit ${n}
            for update skip locked) c
          cross join lateral (
            select count(*) as busy from jobs r
            where r.kind = k.kind and r.state = 'running' and r.locked_until >= ${now}) b
        ) candidates
        order by place, run_at, id
        limit ${n})
      returning *`.execute(this.opts.db);
    return r.rows.map((j) => ({ ...j, id: Number(j.id) }));
  }

  /** Runs one claimed job and records the outcome (if this instance still holds it). */
  async run(job: JobRow): Promise<void> {
    const def = this.kinds.get(job.kind);
    let error: string | null = null;
    let refused = false;
    // the lease is extended while the job runs (a third of it at a time), so a long job keeps it and a dead
    // instance's jobs are taken over within one lease, not after the longest job's time
    const leaseMs = this.opts.settings.leaseS * 1000;
    const renew = setInterval(() => {
      const until = new Date(this.opts.clock.now().getTime() + leaseMs);
      sql`update jobs set locked_until = ${until}
        where id = ${job.id} and locked_by = ${this.workerId} and state = 'running'`
        .execute(this.opts.db)
        .catch((err: Error) =>
          this.opts.log.warn({ job: job.id, err: err.message }, 'extending a job lease failed'),
        );
    }, leaseMs / 3);
    renew.unref();
    const began = performance.now();
    try {
      if (!def) throw new Error(`unknown job kind ${job.kind}`);
      await this.opts.dispatch(def, job);
    } catch (err) {
      error = String((err as Error)?.message ?? err).slice(0, 1000);
      refused = err instanceof JobRefused;
    } finally {
      clearInterval(renew);
    }
    const now = this.opts.clock.now();
    const mine = sql<boolean>`id = ${job.id} and locked_by = ${this.workerId} and state = 'running'`;
    const line = {
      job: job.id,
      kind: job.kind,
      attempt: job.attempts,
      ms: Math.round(performance.now() - began),
    };
    if (error === null) this.opts.runLog?.info(line, 'done');
    else if (refused) this.opts.runLog?.error({ ...line, err: error }, 'refused');
    else if (job.attempts >= job.max_attempts) this.opts.runLog?.error({ ...line, err: error }, 'failed');
    else this.opts.runLog?.warn({ ...line, err: error }, 'failed; retried later');
    if (error === null) {
      await sql`update jobs set state = 'done', locked_by = null, locked_until = null, last_error = null, updated_at = ${now} where ${mine}`.execute(
        this.opts.db,
      );
    } else if (refused || job.attempts >= job.max_attempts) {
      this.opts.log.error(
        { job: job.id, kind: job.kind, attempts: job.attempts, err: error },
        refused ? 'job refused' : 'job failed for good',
      );
      await sql`update jobs set state = 'failed', locked_by = null, locked_until = null, last_error = ${error}, updated_at = ${now} where ${mine}`.execute(
        this.opts.db,
      );
    } else {
      const runAt = new Date(now.getTime() + backoffS(this.opts.settings, job.attempts) * 1000);
      this.opts.log.warn(
        { job: job.id, kind: job.kind, attempts: job.attempts, err: error, retryAt: runAt },
        'job failed; retrying later',
      );
      await sql`update jobs set state = 'waiting', run_at = ${runAt}, locked_by = null, locked_until = null, last_error = ${error}, updated_at = ${now} where ${mine}`.execute(
        this.opts.db,
      );
    }
  }

  /**
   * Runs every job due now, one after another, until none is left (tests, and the CLI's maintenance). A job
   * this instance's own workers claimed first is waited for too: "drained" means its outcome is recorded, not
   * that it was merely claimed by someone else here (the caller reads what the job wrote next).
   */
  async drain(): Promise<number> {
    let count = 0;
    for (;;) {
      const [job] = await this.claim(1);
      if (job) {
        await this.run(job);
        count++;
        continue;
      }
      if (!this.pumpDone && this.running.size === 0) return count;
      await this.idle();
    }
  }

  /** Settles when no job of this instance is running: its outcome is recorded once this resolves. */
  async idle(): Promise<void> {
    for (;;) {
      // a claim in flight has taken rows the running set does not hold yet: wait for the pump first
      if (this.pumpDone) await this.pumpDone;
      else if (this.running.size) await Promise.allSettled([...this.running]);
      else return;
    }
  }

  /** Looks for due jobs now, filling free slots. */
  wake(): void {
    if (!this.started) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    this.pumpDone = this.pump().finally(() => {
      this.pumping = false;
      this.pumpDone = null;
      if (this.again) {
        this.again = false;
        this.wake();
      }
    });
  }

  private async pump(): Promise<void> {
    while (this.started) {
      const free = this.opts.settings.concurrency - this.running.size;
      if (free <= 0) return;
      let jobs: JobRow[];
      try {
        jobs = await this.claim(free);
      } catch (err) {
        if (this.started) this.opts.log.error({ err: (err as Error).message }, 'claiming jobs failed');
        return;
      }
      if (!jobs.length) return;
      for (const job of jobs) {
        const p: Promise<void> = this.run(job)
          .catch((err: Error) =>
            this.opts.log.error({ job: job.id, err: err.message }, 'recording a job outcome failed'),
          )
          .finally(() => {
            this.running.delete(p);
            this.runningIds.delete(job.id);
            this.wake();
          });
        this.running.add(p);
        this.runningIds.add(job.id);
      }
    }
  }

  async start(): Promise<void> {
    this.started = true;
    this.timer = setInterval(() => this.wake(), this.opts.settings.pollMs);
    this.timer.unref();
    if (this.opts.kind === 'postgres' && this.opts.databaseUrl) {
      const client = new pg.Client({ connectionString: this.opts.databaseUrl });
      // a lost listener only costs latency: the poll still finds the jobs
      client.on('error', (err) =>
        this.opts.log.warn({ err: err.message }, 'job listener lost its connection; polling only'),
      );
      client.on('notification', () => this.wake());
      await client.connect();
      await client.query(`listen ${JOBS_CHANNEL}`);
      this.listener = client;
    }
    this.wake();
  }

  /** Takes no new jobs and waits for the running ones, at most `waitMs`; unfinished ones are retaken after their lease. */
  async stop(waitMs = 10_000): Promise<void> {
    this.started = false;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.listener?.end().catch(() => undefined);
    this.listener = null;
    let timeout: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.running]),
      new Promise((r) => (timeout = setTimeout(r, waitMs))),
    ]);
    clearTimeout(timeout);
  }
}
