import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kysely, PostgresDialect, sql, type LogEvent } from 'kysely';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { PGlitePool } from './pglite-pool';
import { isConnectionLoss } from './faults';
import type { DB } from './schema';

export interface Database {
  db: Kysely<DB>;
  kind: 'pglite' | 'postgres';
  /** runs a script of several statements (migrations) */
  execScript(text: string): Promise<void>;
  /**
   * Runs `fn` holding Lintel's start-up lock: on PostgreSQL a session advisory lock, so that of several
   * instances starting at once one migrates and the others wait; PGlite has one process, `fn` just runs.
   * Not re-entrant: `fn` must not call `exclusive` (nor `migrate`, which takes it).
   */
  exclusive<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * PGlite only: calls `fn` on each NOTIFY on `channel`, as the committing statement completes (one process, so
   * no connection of its own is needed). PostgreSQL's notifications come through the outbox's listener.
   */
  listen?(channel: string, fn: () => void): Promise<void>;
  /** the connections of this instance now (metrics, system info): PGlite has one */
  poolStats(): PoolStats;
  /** PGlite only: the data folder as a tarball, which `openDatabase`'s `pgliteTemplate` starts from */
  dump?(): Promise<Blob>;
  /**
   * PGlite only: runs `statement`, a `COPY … FROM '/dev/blob'`, over `data`; answers the rows copied. It goes
   * straight to the one connection: only its holder may call it (a backup's apply, inside its transaction).
   */
  copyFrom?(statement: string, data: Blob): Promise<number>;
  close(): Promise<void>;
}

export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
  max: number;
}

/** The advisory lock key of Lintel's start-up (migrations, first project): "Lintel" in ASCII. */
const STARTUP_LOCK = 0x4c696e74656c;

/** pool size on PostgreSQL; also bounds the retries of a first statement on dead connections */
const POOL_MAX = 10;

// int8 (counts, sums) as numbers, the same on PostgreSQL as on PGlite
pg.types.setTypeParser(20, (v) => Number(v));

/** With LINTEL_LOG_SQL set, every statement's duration and text go to stderr (never the parameters). */
const logSql = process.env.LINTEL_LOG_SQL
  ? (e: LogEvent): void =>
      void process.stderr.write(
        `[sql ${e.queryDurationMillis.toFixed(1)} ms${e.level === 'error' ? ' ERROR' : ''}] ${e.query.sql.replace(/\s+/g, ' ').slice(0, 300)}\n`,
      )
  : undefined;

export async function openDatabase(opts: {
  databaseUrl?: string;
  dataDir: string;
  /** PGlite in memory: a data folder's dump to start from (Config's `pgliteTemplate`) */
  pgliteTemplate?: Blob;
  /** PGlite: how long a borrower waits for the one connection (see PGlitePool) */
  waitMs?: number;
  /** a PostgreSQL connection failed, idle or in use (server restarted, connection killed); the pool opens a new one */
  onConnectionLost?: (err: Error) => void;
}): Promise<Database> {
  if (opts.databaseUrl) {
    // keepAlive finds a silently dead link; a slot that cannot be had in 10 s is a 503, not an endless wait
    const pool = new pg.Pool({
      connectionString: opts.databaseUrl,
      max: POOL_MAX,
      keepAlive: true,
      connectionTimeoutMillis: 10_000,
    });
    // Without a listener, a client's 'error' is an uncaught exception that ends the process. pg-pool listens
    // on idle clients only (and re-emits on the pool); a checked-out client — a query in flight, a
    // transaction open — emits on itself. So every client gets its own listener from the start.
    pool.on('connect', (client) => client.on('error', (err) => opts.onConnectionLost?.(err)));
    pool.on('error', () => undefined); // already reported by the client's own listener
    const db = new Kysely<DB>({
      dialect: new PostgresDialect({ pool: healingPool(pool) }),
      ...(logSql ? { log: logSql } : {}),
    });
    return {
      db,
      kind: 'postgres',
      execScript: async (text) => {
        await pool.query(text);
      },
      exclusive: async (fn) => {
        // the lock lives in this session; the work goes through the pool's other connections
        const holder = await pool.connect();
        try {
          await holder.query('select pg_advisory_lock($1)', [STARTUP_LOCK]);
          try {
            return await fn();
          } finally {
            await holder.query('select pg_advisory_unlock($1)', [STARTUP_LOCK]).catch(() => undefined);
          }
        } finally {
          holder.release();
        }
      },
      poolStats: () => ({
        total: pool.totalCount,
        idle: pool.idleCount,
        waiting: pool.waitingCount,
        max: POOL_MAX,
      }),
      close: () => db.destroy(),
    };
  }
  const memory = opts.dataDir === 'memory://';
  if (!memory) fs.mkdirSync(opts.dataDir, { recursive: true });
  const folder = memory ? undefined : path.join(opts.dataDir, 'pglite');
  const seed = memory ? undefined : initdbSeed(folder!);
  const open = (loadDataDir: Blob | undefined) =>
    PGlite.create(folder, { extensions: { pg_trgm }, ...(loadDataDir ? { loadDataDir } : {}) });
  const pglite = await open(memory ? opts.pgliteTemplate : seed).catch(async (err: unknown) => {
    // a seed this PGlite cannot read (built by another version): the folder is made afresh by initdb
    if (!seed) throw err;
    fs.rmSync(folder!, { recursive: true, force: true });
    return open(undefined);
  });
  const pool = new PGlitePool(pglite, opts.waitMs);
  const db = new Kysely<DB>({
    dialect: new PostgresDialect({ pool: pool as unknown as pg.Pool }),
    ...(logSql ? { log: logSql } : {}),
  });
  return {
    db,
    kind: 'pglite',
    execScript: async (text) => {
      const conn = await pool.connect();
      try {
        await pglite.exec(text);
      } catch (err) {
        await pglite.exec('rollback').catch(() => undefined);
        throw err;
      } finally {
        conn.release();
      }
    },
    exclusive: (fn) => fn(),
    listen: async (channel, fn) => {
      const conn = await pool.connect();
      try {
        await pglite.listen(channel, () => fn());
      } finally {
        conn.release();
      }
    },
    poolStats: () => pool.stats(),
    copyFrom: async (statement, data) => {
      const r = await pglite.query(statement, [], { blob: data });
      return r.affectedRows ?? 0;
    },
    dump: async () => {
      const conn = await pool.connect();
      try {
        return await pglite.dumpDataDir('none');
      } finally {
        conn.release();
      }
    },
    close: () => db.destroy(),
  };
}

/**
 * The mark of a statement worth preparing (`sql\`${PREPARED} select …\``): one whose text is the same on
 * every call, run on every request or every page — a family's record load by `= any($1)`, the caller behind a
 * token. On PostgreSQL it is parsed and planned once per connection under a name derived from its text
 * (planning is most of what such a statement costs: the users' page load runs 2.8 times as often per second
 * prepared, bench/RESULTS.md); PGlite runs it as any other. Never for statements whose text varies with the
 * input (filters), which would pile up prepared statements on every connection.
 */
export const PREPARED = '/* prepared */';

/** The fewest ids a prepared statement's `= any($1)` is given (`preparedIds`). */
export const PREPARED_IDS = 20;

/**
 * The ids for a prepared statement's `= any($1)`, padded to `PREPARED_IDS` with -1 (no row's id). PostgreSQL
 * plans a prepared statement's first five runs with their values (custom plans), then keeps its generic plan
 * only if that plan's estimated cost is below the custom plans' average; the generic plan of `= any($1)`
 * counts on 10 elements, so a statement given fewer ids (a rare filter's page, a list's last page, one record)
 * looked cheaper planned afresh, and was: every time. The users' records of a 5-row page spent 0.6 ms of
 * planning for 0.15 of execution (`pg_prepared_statements`: 12 custom plans, no generic one). Padded, the
 * generic plan is kept after five runs; the ids that match nothing cost an index probe each.
 */
export function preparedIds(ids: readonly number[]): number[] {
  const out = [...ids];
  while (out.length < PREPARED_IDS) out.push(-1);
  return out;
}
const preparedNames = new Map<string, string>();
function preparedName(text: string): string {
  let name = preparedNames.get(text);
  if (!name) {
    name = `lintel_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    preparedNames.set(text, name);
  }
  return name;
}

/**
 * A first statement that may be sent again when the connection it went out on turns out to be dead: a read
 * or the start of a transaction — nothing that could have been committed before the connection died.
 */
const REPEATABLE = /^\s*(\/\* prepared \*\/\s*)?(select|begin|start transaction)\b/i;

/**
 * The pool as Kysely sees it. A pooled connection may be dead without the pool knowing: the database ended
 * it a moment ago, or a firewall forgot it and only the next write learns so. So the first statement of a
 * checkout, when it is a read or a BEGIN and fails with a connection loss, is sent again on another
 * connection (the dead one destroyed), up to the pool's size. Any other failure by connection loss marks
 * the connection: later statements on it (Kysely's rollback) fail at once with that first error, and on
 * release it is destroyed rather than returned — the next request gets a new connection, never the dead one.
 */
function healingPool(pool: pg.Pool): pg.Pool {
  /** the connections checked out now, each with a way to end it whatever it is doing */
  const out = new Set<() => void>();
  const connect = async () => {
    let client = await pool.connect();
    let used = false;
    let lost: Error | undefined;
    let released = false;
    const kill = () => {
      if (released) return;
      released = true;
      out.delete(kill);
      client.release(new Error('the database is closing'));
    };
    out.add(kill);
    return {
      query: async (text: unknown, values?: unknown[]) => {
        if (lost) throw lost;
        const first = !used;
        used = true;
        for (let attempt = 0; ; attempt++) {
          try {
            // a statement marked `PREPARED` is parsed and planned once per connection, then only executed
            if (typeof text === 'string' && text.startsWith(PREPARED))
              return await client.query({ name: preparedName(text), text, values });
            return await client.query(text as string, values);
          } catch (err) {
            if (!isConnectionLoss(err)) throw err;
            if (first && attempt < POOL_MAX && typeof text === 'string' && REPEATABLE.test(text)) {
              client.release(err as Error);
              client = await pool.connect();
              continue;
            }
            lost = err as Error;
            throw err;
          }
        }
      },
      release: () => {
        if (released) return;
        released = true;
        out.delete(kill);
        client.release(lost);
      },
    };
  };
  /**
   * Closing waits for the connections in use to come back, but not for ever: a statement whose connection the
   * network dropped silently never hears its answer, and would hold the close (and the process) for good.
   * After `CLOSE_GRACE_MS` the ones still out are ended, and their statements fail.
   */
  const end = async () => {
    const ended = pool.end();
    const timer = setTimeout(() => [...out].forEach((kill) => kill()), CLOSE_GRACE_MS);
    try {
      await ended;
    } finally {
      clearTimeout(timer);
    }
  };
  return { connect, end } as unknown as pg.Pool;
}

/** how long closing the database waits for connections in use before it ends them */
const CLOSE_GRACE_MS = 5_000;

/**
 * The first start of the embedded database in a folder that holds none: the build's initdb'ed data folder
 * (`dist/pglite-initdb.tgz`, scripts/build.mjs), unpacked instead of running initdb. PGlite's initdb in
 * WASM peaks at about 800 MiB and costs seconds of CPU; unpacking the 4 MiB folder peaks where any later
 * start does (bench/pglite-memory). From the sources (tests, `tsx`) there is no seed and initdb runs.
 */
function initdbSeed(folder: string): Blob | undefined {
  if (fs.existsSync(path.join(folder, 'PG_VERSION'))) return undefined;
  const file = path.join(path.dirname(fileURLToPath(import.meta.url)), 'pglite-initdb.tgz');
  return fs.existsSync(file) ? new Blob([fs.readFileSync(file)]) : undefined;
}

/** The checked-in migrations folder: beside src/ in the repository, beside dist/ when bundled. */
export function migrationsDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = path.join(dir, 'migrations');
    if (fs.existsSync(path.join(candidate, '0001_foundation.sql'))) return candidate;
    dir = path.dirname(dir);
  }
  throw new Error('migrations folder not found');
}

/**
 * Applies every migration not applied yet, in name order, each in its own transaction. Holds the start-up
 * lock: an instance that waited for another's migrations reads the applied list after the wait, finds
 * them done and applies nothing.
 */
export function migrate(database: Database, dir = migrationsDir()): Promise<string[]> {
  return database.exclusive(() => migrateLocked(database, dir));
}

async function migrateLocked(database: Database, dir: string): Promise<string[]> {
  const { db } = database;
  await sql`create table if not exists schema_migrations (name text primary key, applied_at timestamptz not null default now())`.execute(
    db,
  );
  const done = new Set(
    (await db.selectFrom('schema_migrations').select('name').execute()).map((r) => r.name),
  );
  const files = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort();
  const applied: string[] = [];
  for (const file of files) {
    if (done.has(file)) continue;
    const text = fs.readFileSync(path.join(dir, file), 'utf8');
    await database.execScript(
      `begin;\n${text}\ninsert into schema_migrations (name) values ('${file.replace(/'/g, "''")}');\ncommit;`,
    );
    applied.push(file);
  }
  return applied;
}
