/**
 * The databases the test servers start from, with every migration applied.
 *
 * PGlite (`pgliteTemplate`): the embedded database with every migration applied, dumped once and
 * kept in node_modules/.cache under a name derived from the migrations, the code that applies them and
 * PGlite's version (a change to any makes a new one). A first start of PGlite in memory runs initdb and the
 * migrations: about 3.5 s of CPU in a fresh process, where loading the dump costs about 1 s — and the suite
 * starts a few hundred servers. What happens after the migrations (the first project, its administrator,
 * the evaluation licence) still runs on each server's start, as on a real first start; a real first start,
 * migrations included, is what the servers on a data folder of their own do (tests/cli/first-start,
 * tests/api/realtime-client) and what makes this template.
 *
 * PostgreSQL (`postgresTemplate`): a database `lintel_tpl_<key>` on the server of DATABASE_URL, made once
 * (under an advisory lock, built under another name and renamed when complete) and copied by each test
 * server's `create database … template …`: the 25 migrations cost 1.7-2.4 s of wall time a server on this
 * machine. It stays on that server for the next runs; a new set of migrations makes a new one. Tests of
 * migrations themselves (tests/postgres: concurrent starts, several instances) make empty databases with
 * `freshDatabase()` and start their servers on them.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { migrate, migrationsDir, openDatabase } from '../../apps/server/src/db/database';

const root = path.resolve(import.meta.dirname, '../..');

export function templateKey(): string {
  const h = createHash('sha256');
  const dir = migrationsDir();
  for (const f of fs.readdirSync(dir).sort()) h.update(f).update(fs.readFileSync(path.join(dir, f)));
  h.update(fs.readFileSync(path.join(root, 'apps/server/src/db/database.ts')));
  const pglite = path.join(root, 'node_modules/@electric-sql/pglite/package.json');
  h.update(JSON.parse(fs.readFileSync(pglite, 'utf8')).version as string);
  return h.digest('hex').slice(0, 16);
}

let made: Promise<Blob> | undefined;

/** The migrated template as a Blob (read once per process; made and written first when missing). */
export function pgliteTemplate(): Promise<Blob> {
  made ??= (async () => {
    const dir = path.join(root, 'node_modules/.cache/lintel-tests');
    const file = path.join(dir, `pglite-${templateKey()}.tar`);
    if (!fs.existsSync(file)) {
      const database = await openDatabase({ dataDir: 'memory://' });
      try {
        await migrate(database);
        const dump = Buffer.from(await (await database.dump!()).arrayBuffer());
        fs.mkdirSync(dir, { recursive: true });
        // written under a name of its own, then renamed: a file that makes one at the same time, or reads
        // it, never sees half of it
        const partial = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
        fs.writeFileSync(partial, dump);
        fs.renameSync(partial, file);
      } finally {
        await database.close();
      }
    }
    return new Blob([fs.readFileSync(file)]);
  })();
  return made;
}

/** The key of the advisory lock its makers take: "tpl" and the start of "Lintel" in ASCII. */
const TEMPLATE_LOCK = 0x74706c4c696e;

let postgres: Promise<string> | undefined;

/** The name of the migrated template database on the server of `base` (made first when missing). */
export function postgresTemplate(base: string): Promise<string> {
  postgres ??= (async () => {
    const name = `lintel_tpl_${templateKey()}`;
    // an advisory lock holds within one database: the makers meet in the server's `postgres` database (where
    // there is one), so runs on different databases of one server (two DATABASE_URLs side by side) wait for
    // each other too, and none drops as stale what another is building
    const maintenance = new URL(base);
    maintenance.pathname = '/postgres';
    let admin = new pg.Client({ connectionString: maintenance.toString() });
    await admin.connect().catch(async () => {
      admin = new pg.Client({ connectionString: base });
      await admin.connect();
    });
    try {
      await admin.query('select pg_advisory_lock($1)', [TEMPLATE_LOCK]);
      const found = await admin.query('select 1 from pg_database where datname = $1', [name]);
      if (found.rowCount) return name;
      // what a run killed while building left
      const stale = await admin.query<{ datname: string }>(
        'select datname from pg_database where datname like $1',
        [`${name}_b%`],
      );
      for (const r of stale.rows) await admin.query(`drop database if exists ${r.datname} with (force)`);
      const building = `${name}_b${randomBytes(4).toString('hex')}`;
      await admin.query(`create database ${building}`);
      const url = new URL(base);
      url.pathname = `/${building}`;
      const database = await openDatabase({ dataDir: 'memory://', databaseUrl: url.toString() });
      try {
        await migrate(database);
      } finally {
        await database.close();
      }
      await admin.query(`alter database ${building} rename to ${name}`);
      return name;
    } finally {
      await admin.query('select pg_advisory_unlock($1)', [TEMPLATE_LOCK]).catch(() => undefined);
      await admin.end();
    }
  })();
  return postgres;
}
