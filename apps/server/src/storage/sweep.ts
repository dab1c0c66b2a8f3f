/**
 * The stored files no row names any more (docs/decisions.md "Stored files nobody names"): a face photo of a
 * deleted identifier, an avatar of a deleted user, a logo replaced or of a deleted group, a file a backup's
 * apply left over. The daily `events.prune`
 * job removes them once they are an hour old.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import type { ServerContext } from '../context';
import { AVATARS_DIR, FACES_DIR, LOGOS_DIR, STORED_FILES_LOCK } from './files';

/** An unnamed file younger than this stays: an upload writes its file, then names it. */
export const SWEEP_AFTER_MS = 3_600_000;

const AVATAR_URL = `/storage/${AVATARS_DIR}/`;
const LOGO_URL = `/storage/${LOGOS_DIR}/`;

/**
 * Removes the files of `storage/faces/`, `storage/avatars/` and `storage/logos/` that no identifier, no user,
 * no project's and no group's white-label (of any project) names and that were written before `now - SWEEP_AFTER_MS`. It holds `STORED_FILES_LOCK` exclusive while it
 * reads the names and removes files, so a backup's apply (which holds it shared) never loses a file it
 * restores. Returns how many went, by folder.
 */
export async function sweepStorage(
  app: Pick<ServerContext, 'db' | 'config'>,
  now: Date = new Date(),
): Promise<{ faces: number; avatars: number; logos: number }> {
  const before = new Date(now.getTime() - SWEEP_AFTER_MS);
  return app.db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${STORED_FILES_LOCK}, 0)`.execute(trx);
    const faces = await sql<{ name: string }>`select distinct photo_sha256 || '.jpg' as name
      from identifiers where photo_sha256 is not null`.execute(trx);
    const avatars = await sql<{
      name: string;
    }>`select distinct substr(avatar_url, ${AVATAR_URL.length + 1}) as name
      from users where avatar_url like ${`${AVATAR_URL}%`}`.execute(trx);
    const logos = await sql<{ name: string }>`select substr(logo, ${LOGO_URL.length + 1}) as name from (
        select settings->'whitelabel_settings'->>'logo' as logo from projects
        union select whitelabel_settings->>'logo' from domains) l
      where logo like ${`${LOGO_URL}%`}`.execute(trx);
    const names = (r: { rows: { name: string }[] }) => new Set(r.rows.map((x) => x.name));
    return {
      faces: await sweepFolder(path.join(app.config.storageDir, FACES_DIR), names(faces), before),
      avatars: await sweepFolder(path.join(app.config.storageDir, AVATARS_DIR), names(avatars), before),
      logos: await sweepFolder(path.join(app.config.storageDir, LOGOS_DIR), names(logos), before),
    };
  });
}

/** Removes the files of `dir` not in `named` written before `before` (a torn `.part` file too). */
async function sweepFolder(dir: string, named: ReadonlySet<string>, before: Date): Promise<number> {
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
  let removed = 0;
  for (const e of entries) {
    if (!e.isFile() || named.has(e.name)) continue;
    const file = path.join(dir, e.name);
    const stat = await fs.stat(file).catch(() => null);
    if (!stat || stat.mtime >= before) continue;
    await fs.rm(file, { force: true });
    removed++;
  }
  return removed;
}
