import os from 'node:os';
import { sql } from 'kysely';
import type { Worker } from '@lintel/commands';
import type { ServerContext } from '../context';
import { AppError } from '../errors';
import { ModuleRefused, type Lifecycle } from './lifecycle';

/**
 * The workers (issue 24 item 3): the modules of this instance (modules/lifecycle.ts) and the kinds of
 * durable jobs (jobs/define.ts), listed with their real state and started, stopped and restarted for real.
 * A module is the instance's own; a job kind is stopped for the whole installation by a row of
 * `job_kind_pauses`, which every instance's claim skips (jobs/queue.ts).
 */
export class Workers {
  private lifecycle: Lifecycle | null = null;
  readonly instance: string;
  /** when this instance's server was made, by its clock (the uptime of the system information) */
  startedAt = new Date();

  constructor(private readonly contextOf: () => ServerContext) {
    this.instance = `${os.hostname()}/${process.pid}`;
  }

  /** The composition root hands over the instance's lifecycle once it is made (server.ts). */
  attach(lifecycle: Lifecycle): void {
    this.lifecycle = lifecycle;
    this.startedAt = this.app.clock.now();
  }

  private get app(): ServerContext {
    return this.contextOf();
  }

  private get modules() {
    return this.lifecycle?.configured ?? [];
  }

  async list(): Promise<Worker[]> {
    const counts = await sql<{ kind: string; state: string; n: number }>`
      select kind, state, count(*)::int as n from jobs group by kind, state`.execute(this.app.db);
    const pauses = await sql<{ kind: string; paused_at: Date | string }>`
      select kind, paused_at from job_kind_pauses`.execute(this.app.db);
    const errors = await sql<{ kind: string; last_error: string | null }>`
      select distinct on (kind) kind, last_error from jobs where state = 'failed'
      order by kind, updated_at desc, id desc`.execute(this.app.db);
    const out: Worker[] = this.modules.map((m) => ({
      name: `module:${m.name}`,
      type: 'module',
      state: this.lifecycle!.isRunning(m.name) ? 'running' : 'stopped',
      instance: this.instance,
      controllable: m.name !== 'http',
      needs: [...(m.needs ?? [])],
      jobs: {},
      last_error: null,
      stopped_at: null,
    }));
    for (const kind of this.app.jobs.kindNames) {
      const pause = pauses.rows.find((p) => p.kind === kind);
      out.push({
        name: `job:${kind}`,
        type: 'job',
        state: pause ? 'stopped' : 'running',
        instance: null,
        controllable: true,
        needs: ['jobs'],
        jobs: Object.fromEntries(counts.rows.filter((c) => c.kind === kind).map((c) => [c.state, c.n])),
        last_error: errors.rows.find((e) => e.kind === kind)?.last_error ?? null,
        stopped_at: pause ? new Date(pause.paused_at).toISOString() : null,
      });
    }
    return out;
  }

  async get(name: string): Promise<Worker> {
    const w = (await this.list()).find((x) => x.name === name);
    if (!w) throw new AppError('item_not_found', { entity: 'worker', name });
    return w;
  }

  /** Starts, stops or restarts a worker; the answer is its state afterwards. */
  async act(name: string, action: 'start' | 'stop' | 'restart', userId: number): Promise<Worker> {
    const w = await this.get(name);
    if (!w.controllable)
      throw new AppError('cant_perform_action', { reason: 'worker_serves_this_request', name });
    if (w.type === 'job') {
      const kind = name.slice('job:'.length);
      if (action === 'stop')
        await sql`insert into job_kind_pauses (kind, paused_by, paused_at)
          values (${kind}, ${userId}, ${this.app.clock.now()}) on conflict (kind) do nothing`.execute(
          this.app.db,
        );
      else {
        // a job kind has no process of its own: restart is start, and its due jobs are looked for at once
        await sql`delete from job_kind_pauses where kind = ${kind}`.execute(this.app.db);
        this.app.jobs.wake();
      }
      return this.get(name);
    }
    const module = name.slice('module:'.length);
    try {
      if (action !== 'start') await this.lifecycle!.stopOne(module);
      if (action !== 'stop') await this.lifecycle!.startOne(module);
    } catch (err) {
      if (err instanceof ModuleRefused)
        throw new AppError('cant_perform_action', {
          reason: err.reason === 'needs' ? 'worker_needs' : 'worker_needed_by',
          modules: err.modules,
        });
      throw err;
    }
    return this.get(name);
  }
}
