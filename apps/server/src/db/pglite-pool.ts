import type { PGlite } from '@electric-sql/pglite';

/**
 * PGlite is one connection. Kysely's PostgresDialect asks a pool for connections; this pool hands out the
 * one connection to one borrower at a time, so a transaction holds it until it commits or rolls back.
 */
export class PGlitePool {
  private queue: Array<() => void> = [];
  private busy = false;

  constructor(private readonly pg: PGlite) {}

  async connect() {
    if (this.busy) await new Promise<void>((resolve) => this.queue.push(resolve));
    this.busy = true;
    let released = false;
    return {
      query: async (sql: string, params?: readonly unknown[]) => {
        const res = await this.pg.query(sql, params as unknown[] | undefined);
        const command = /^\s*(\w+)/.exec(sql)?.[1]?.toUpperCase();
        return { rows: res.rows, rowCount: res.affectedRows ?? res.rows.length, command };
      },
      release: () => {
        if (released) return;
        released = true;
        const next = this.queue.shift();
        if (next) next();
        else this.busy = false;
      },
    };
  }

  async end() {
    await this.pg.close();
  }
}
