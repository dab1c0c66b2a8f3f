/**
 * The embedded database the test servers start from: PGlite with every migration applied, dumped once and
 * kept in node_modules/.cache under a name derived from the migrations, the code that applies them and
 * PGlite's version (a change to any makes a new one). A first start of PGlite in memory runs initdb and the
 * migrations: about 3.5 s of CPU in a fresh process, where loading the dump costs about 1 s — and the suite
 * starts a few hundred servers. What happens after the migrations (the first project, its administrator,
 * the evaluation licence) still runs on each server's start, as on a real first start; a real first start,
 * migrations included, is what the servers on a data folder of their own do (tests/cli/first-start,
 * tests/api/realtime-client) and what makes this template.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { migrate, migrationsDir, openDatabase } from '../../apps/server/src/db/database';

const root = path.resolve(import.meta.dirname, '../..');

function templateKey(): string {
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
