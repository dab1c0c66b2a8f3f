import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kysely, PostgresDialect, sql, type LogEvent } from 'kysely';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { PGlitePool } from './pglite-pool';
import type { DB } from './schema';

export interface Database {
  db: Kysely<DB>;
  kind: 'pglite' | 'postgres';
  /** runs a script of several statements (migrations) */
  execScript(text: string): Promise<void>;
  close(): Promise<void>;
}

// int8 (counts, sums) as numbers, the same on PostgreSQL as on PGlite
pg.types.setTypeParser(20, (v) => Number(v));

/** With LINTEL_LOG_SQL set, every statement's duration and text go to stderr (never the parameters). */
const logSql = process.env.LINTEL_LOG_SQL
  ? (e: LogEvent): void => void process.stderr.write(`[sql ${e.queryDurationMillis.toFixed(1)} ms${e.level === 'error' ? ' ERROR' : ''}] ${e.query.sql.replace(/\s+/g, ' ').slice(0, 300)}\n`)
  : undefined;

export async function openDatabase(opts: {
  databaseUrl?: string;
  dataDir: string;
  /** an idle PostgreSQL connection failed (server restarted, connection killed); the pool opens a new one */
  onConnectionLost?: (err: Error) => void;
}): Promise<Database> {
  if (opts.databaseUrl) {
    const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: 10 });
    // without a listener, an idle client's error is an uncaught exception that ends the process
    pool.on('error', (err) => opts.onConnectionLost?.(err));
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }), ...(logSql ? { log: logSql } : {}) });
    return {
      db,
      kind: 'postgres',
      execScript: async (text) => {
        await pool.query(text);
      },
      close: () => db.destroy(),
    };
  }
  const memory = opts.dataDir === 'memory://';
  if (!memory) fs.mkdirSync(opts.dataDir, { recursive: true });
  const pglite = await PGlite.create(memory ? undefined : path.join(opts.dataDir, 'pglite'), { extensions: { pg_trgm } });
  const pool = new PGlitePool(pglite);
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: pool as unknown as pg.Pool }), ...(logSql ? { log: logSql } : {}) });
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
    close: () => db.destroy(),
  };
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

/** Applies every migration not applied yet, in name order, each in its own transaction. */
export async function migrate(database: Database, dir = migrationsDir()): Promise<string[]> {
  const { db } = database;
  await sql`create table if not exists schema_migrations (name text primary key, applied_at timestamptz not null default now())`.execute(db);
  const done = new Set((await db.selectFrom('schema_migrations').select('name').execute()).map((r) => r.name));
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.sql')).sort();
  const applied: string[] = [];
  for (const file of files) {
    if (done.has(file)) continue;
    const text = fs.readFileSync(path.join(dir, file), 'utf8');
    await database.execScript(`begin;\n${text}\ninsert into schema_migrations (name) values ('${file.replace(/'/g, "''")}');\ncommit;`);
    applied.push(file);
  }
  return applied;
}
