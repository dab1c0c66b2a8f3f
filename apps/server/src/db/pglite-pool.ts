import { AsyncLocalStorage } from 'node:async_hooks';
import type { PGlite } from '@electric-sql/pglite';
import { DatabaseUnavailable } from './faults';

/** An SQL error of the engine carries its SQLSTATE; anything else PGlite throws is the engine failing. */
const isSqlError = (err: unknown) =>
  typeof (err as { code?: unknown })?.code === 'string' &&
  /^[0-9A-Z]{5}$/.test((err as { code: string }).code);

/** The borrows of one request: how long it waited, its admission, whether it has had the connection yet. */
interface RequestScope {
  /** ms it waited before its handler began (the event loop's turn; from when its body had arrived whole) */
  queuedMs: number;
  /** when it first asked for the database (performance.now()); unset until then */
  askedAt?: number;
  /** called once when the reply is finished or the caller went away */
  onEnd(fn: () => void): void;
  admission?: Promise<void>;
  started: boolean;
}
const requestScope = new AsyncLocalStorage<RequestScope>();

/** Requests that may use the embedded database at once; the others wait for a place (bounded, see below). */
const MAX_UNDER_WAY = 8;

/** How long hand-overs of the connection may run on without the event loop getting a turn (see release). */
const SLICE_MS = 20;

/**
 * Runs `next` (the rest of one HTTP request) as one borrower of the embedded database; see PGlitePool.
 * `reply` tells how long ago the request arrived and when it ends; `bodyDoneAt` (performance.now()) when its
 * body had arrived whole: the wait is bounded from then, not from the first byte of a slow upload. What the
 * request does itself before its first statement (a logo's image decoded in a child process) is not waiting
 * either: the bound counts the wait before its handler began and the wait since it first asked. A logo
 * upload on a loaded machine was refused with a 503 after 6 s of decoding, the database idle.
 */
export function asDatabaseRequest(
  reply: { elapsedTime: number; raw: { once(event: 'close', fn: () => void): unknown } },
  next: () => void,
  bodyDoneAt?: number,
): void {
  // a request may end (its client gone) before it asks: what is asked after that runs at once, or a place
  // given to a request already gone would never come back (after eight, no request was ever admitted again)
  let ended = false;
  const onEnd: Array<() => void> = [];
  reply.raw.once('close', () => {
    ended = true;
    for (const fn of onEnd.splice(0)) fn();
  });
  const now = performance.now();
  const scope: RequestScope = {
    queuedMs: now - Math.max(now - reply.elapsedTime, bodyDoneAt ?? -Infinity),
    onEnd: (fn) => (ended ? fn() : void onEnd.push(fn)),
    started: false,
  };
  requestScope.run(scope, next);
}

/** How long a request has waited for the database: before its handler began, and since it first asked. */
function waited(scope: RequestScope): number {
  return scope.queuedMs + (performance.now() - (scope.askedAt ??= performance.now()));
}

/**
 * Runs `fn` as work outside any request: its borrows of the embedded database wait in arrival order with
 * the requests' first borrows instead of going before them. A long reader inside a request (an export, page
 * after page) uses it so that the short requests arriving meanwhile are served between its pages.
 */
export function outsideRequest<T>(fn: () => T): T {
  return requestScope.exit(fn);
}

/**
 * PGlite is one connection. Kysely's PostgresDialect asks a pool for connections; this pool hands out the
 * one connection to one borrower at a time, so a transaction holds it until it commits or rolls back.
 *
 * PGlite runs on the server's one thread: with many requests at once, each borrowing the connection
 * several times (its session, its statements), every request waited behind every other one's statements
 * and some waited past 10 s. So requests are admitted: at most MAX_UNDER_WAY at once use the database, in
 * arrival order, and finish quickly; their borrows go before any new request's and are never refused (a
 * request is never cut off after it wrote). A request not admitted, or not given the connection, after
 * waiting `waitMs` (from its arrival, less what it did itself before it first asked: `waited`) fails with
 * `DatabaseUnavailable('busy')`: a 503 with Retry-After at once, when it has read and written nothing. Code outside requests (start-up, background work) waits as before.
 * `waitMs` 0 turns the bound and the admission off.
 *
 * An error of the engine itself (a file error, the engine closed or crashed) becomes
 * `DatabaseUnavailable('failed')`, a 503 too; SQL errors pass as they are.
 */
export class PGlitePool {
  /** borrows of requests under way, served first */
  private readonly underway: Array<() => void> = [];
  /** first borrows of requests (and borrows outside requests), in arrival order, with their request */
  private readonly queue = new Map<() => void, RequestScope | undefined>();
  private busy = false;
  /** when the event loop last had a turn between hand-overs */
  private sliceStart = performance.now();
  /** requests admitted and not finished */
  private admitted = 0;
  /** requests waiting for admission, in arrival order */
  private readonly admissions = new Set<() => void>();

  constructor(
    private readonly pg: PGlite,
    private readonly waitMs = 2500,
    /** how long hand-overs may hold the event loop before it gets a turn (0: a turn before every one) */
    private readonly sliceMs = SLICE_MS,
  ) {}

  /** Waits for `enqueue`d grant within what is left of the request's budget, else fails with `busy` (when `cancel` drops it). */
  private bounded(
    scope: RequestScope,
    enqueue: (grant: () => void) => void,
    cancel: (grant: () => void) => boolean,
  ): Promise<void> {
    const budget = this.waitMs - waited(scope);
    if (budget <= 0) return Promise.reject(new DatabaseUnavailable('busy'));
    return new Promise<void>((resolve, reject) => {
      const grant = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        if (cancel(grant)) reject(new DatabaseUnavailable('busy'));
      }, budget);
      enqueue(grant);
    });
  }

  /** The one connection: busy or idle, and the borrowers waiting for it (metrics, system info). */
  stats(): { total: number; idle: number; waiting: number; max: number } {
    return {
      total: 1,
      idle: this.busy ? 0 : 1,
      waiting: this.underway.length + this.queue.size + this.admissions.size,
      max: 1,
    };
  }

  /** A place among the requests under way, held until the reply ends. */
  private async admit(scope: RequestScope): Promise<void> {
    if (this.admitted >= MAX_UNDER_WAY)
      await this.bounded(
        scope,
        (grant) => this.admissions.add(grant),
        (grant) => this.admissions.delete(grant),
      );
    else this.admitted++;
    scope.onEnd(() => {
      // the place passes straight to the next request waiting, else it is freed
      const next = this.admissions.values().next();
      if (next.done) this.admitted--;
      else {
        this.admissions.delete(next.value);
        next.value();
      }
    });
  }

  private wait(scope: RequestScope | undefined): Promise<void> {
    if (scope?.started) return new Promise<void>((resolve) => this.underway.push(resolve));
    if (!scope || this.waitMs <= 0) return new Promise<void>((resolve) => this.queue.set(resolve, scope));
    return this.bounded(
      scope,
      (grant) => this.queue.set(grant, scope),
      // a statement run beside the request's first one: the request is under way now, it waits on
      (grant) => !scope.started && this.queue.delete(grant),
    );
  }

  async connect() {
    const scope = requestScope.getStore();
    if (scope && !scope.started && this.waitMs > 0) {
      scope.askedAt ??= performance.now();
      await (scope.admission ??= this.admit(scope));
      // admitted, but later than the bound (the server's one thread was busy): still nothing done, refuse
      if (waited(scope) > this.waitMs) throw new DatabaseUnavailable('busy');
    }
    if (this.busy) await this.wait(scope);
    this.busy = true;
    if (scope) scope.started = true;
    let released = false;
    return {
      query: async (sql: string, params?: readonly unknown[]) => {
        let res;
        try {
          res = await this.pg.query(sql, params as unknown[] | undefined);
        } catch (err) {
          if (isSqlError(err) || err instanceof TypeError) throw err;
          throw new DatabaseUnavailable('failed', { cause: err });
        }
        const command = /^\s*(\w+)/.exec(sql)?.[1]?.toUpperCase();
        return { rows: res.rows, rowCount: res.affectedRows ?? res.rows.length, command };
      },
      release: () => {
        if (released) return;
        released = true;
        // hand the connection straight to the next waiter (it stays busy), requests under way first
        let next = this.underway.shift();
        if (!next)
          for (const [grant, s] of this.queue)
            if (s?.started) {
              next = grant;
              break;
            }
        next ??= this.queue.keys().next().value;
        if (!next) this.busy = false;
        else {
          this.queue.delete(next);
          // PGlite answers without ever leaving the microtasks, so handing over at once ran every queued
          // request back to back and the server accepted and read no connection meanwhile (the loop stalled
          // for seconds under 200 connections, their first requests waited past 10 s unseen). So once the
          // hand-overs of this turn have held the loop for `sliceMs`, the next one waits for the next turn.
          if (performance.now() - this.sliceStart < this.sliceMs) next();
          else
            setImmediate(() => {
              this.sliceStart = performance.now();
              next();
            });
        }
      },
    };
  }

  /** requests holding a place now (diagnostics, tests) */
  get underWay(): number {
    return this.admitted;
  }

  async end() {
    await this.pg.close();
  }
}
