/**
 * Backups as the server keeps them: rows of `backups` (migration 0050) naming zips in the backups folder,
 * the job that makes them (`backup.make`), and the schedule (`backup.scheduled`: one job per planned run,
 * keyed by project and time, so of several instances one runs it; it queues the next).
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import { z } from 'zod';
import { BackupEntitySets, type Backup, type BackupEntitySet } from '@lintel/commands';
import type { DB } from '../db/schema';
import type { ServerContext } from '../context';
import type { Config } from '../config';
import { AppError } from '../errors';
import { defineJob } from '../jobs/define';
import { BACKUP_FORMAT_VERSION, orderedSets } from './format';
import { makeBackup } from './make';
import { backupProgress } from './progress';

export const BACKUP_MAKE_JOB = 'backup.make';
export const BACKUP_SCHEDULED_JOB = 'backup.scheduled';

type Q = Kysely<DB> | Transaction<DB>;

/** LINTEL_BACKUPS_DIR, else `backups` in the data folder (beside the storage folder for an in-memory database). */
export function backupsDir(config: Pick<Config, 'backupsDir' | 'dataDir' | 'storageDir'>): string {
  if (config.backupsDir) return config.backupsDir;
  if (config.dataDir.startsWith('memory://')) return `${config.storageDir}-backups`;
  return path.join(config.dataDir, 'backups');
}

/** The zip of a backup row, inside the backups folder only. */
export function backupPath(app: ServerContext, file: string): string {
  const dir = path.resolve(backupsDir(app.config));
  const full = path.resolve(dir, file);
  if (!full.startsWith(dir + path.sep)) throw new AppError('item_not_found');
  return full;
}

interface BackupRow {
  id: number;
  project_id: number;
  name: string;
  entities: BackupEntitySet[];
  state: Backup['state'];
  scheduled: boolean;
  file: string;
  size: string | number;
  rows: string | number;
  tables: Record<string, number>;
  format_version: number;
  error: string | null;
  created_by: number | null;
  created_at: Date | string;
  finished_at: Date | string | null;
}

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

/** Rows made so far by backups being made in this process. */
const making = new Map<number, number>();
backupProgress.on('make', (p: { backupId: number; rows: number }) => making.set(p.backupId, p.rows));

export function toBackup(r: BackupRow): Backup {
  return {
    id: Number(r.id),
    name: r.name,
    entities: r.entities,
    state: r.state,
    scheduled: r.scheduled,
    size: Number(r.size),
    rows: r.state === 'making' ? (making.get(Number(r.id)) ?? 0) : Number(r.rows),
    tables: r.tables ?? {},
    format_version: r.format_version,
    error: r.error,
    created_by: r.created_by === null ? null : Number(r.created_by),
    created_at: iso(r.created_at)!,
    finished_at: iso(r.finished_at),
  };
}

export async function listBackups(q: Q, projectId: number, limit: number): Promise<Backup[]> {
  const r = await sql<BackupRow>`select * from backups where project_id = ${projectId}
    order by created_at desc, id desc limit ${limit}`.execute(q);
  return r.rows.map(toBackup);
}

export async function getBackupRow(q: Q, projectId: number, id: number): Promise<BackupRow> {
  const r =
    await sql<BackupRow>`select * from backups where project_id = ${projectId} and id = ${id}`.execute(q);
  if (!r.rows[0]) throw new AppError('item_not_found', { entity: 'backup', id });
  return r.rows[0];
}

/** A new backup row in state `making` and the job that writes it, in the caller's transaction. */
export async function startBackup(
  app: ServerContext,
  q: Q,
  opts: {
    projectId: number;
    name: string;
    entities: BackupEntitySet[];
    userId: number | null;
    scheduled: boolean;
  },
): Promise<BackupRow> {
  const now = app.clock.now();
  const file = `backup-${opts.projectId}-${now.toISOString().replace(/[:.]/g, '-')}-${randomBytes(4).toString('hex')}.zip`;
  const r =
    await sql<BackupRow>`insert into backups (project_id, name, entities, scheduled, file, format_version, created_by, created_at)
    values (${opts.projectId}, ${opts.name}, ${JSON.stringify(orderedSets(opts.entities))}::jsonb, ${opts.scheduled}, ${file},
      ${BACKUP_FORMAT_VERSION}, ${opts.userId}, ${now}) returning *`.execute(q);
  return r.rows[0]!;
}

/** Writes the backup of a `making` row and records the outcome. */
async function runMake(app: ServerContext, id: number, final: boolean): Promise<void> {
  const r = await sql<BackupRow>`select * from backups where id = ${id}`.execute(app.db);
  const row = r.rows[0];
  if (!row || row.state !== 'making') return;
  try {
    const made = await makeBackup(app, {
      backupId: id,
      projectId: row.project_id,
      name: row.name,
      sets: row.entities,
      file: backupPath(app, row.file),
    });
    await sql`update backups set state = 'ready', size = ${made.size}, rows = ${made.rows},
      tables = ${JSON.stringify(made.tables)}::jsonb, error = null, finished_at = ${app.clock.now()}
      where id = ${id} and state = 'making'`.execute(app.db);
    if (row.scheduled) await prune(app, row.project_id, (await readSchedule(app.db, row.project_id)).keep);
  } catch (err) {
    const message = String((err as Error)?.message ?? err).slice(0, 1000);
    if (!final) {
      await sql`update backups set error = ${message} where id = ${id}`.execute(app.db);
      throw err;
    }
    await sql`update backups set state = 'failed', error = ${message}, finished_at = ${app.clock.now()}
      where id = ${id} and state = 'making'`.execute(app.db);
  } finally {
    making.delete(id);
  }
}

export interface ScheduleRow {
  project_id: number;
  enabled: boolean;
  every_hours: number;
  keep: number;
  entities: BackupEntitySet[];
  next_run_at: Date | string | null;
}

export async function readSchedule(q: Q, projectId: number): Promise<ScheduleRow> {
  const r = await sql<ScheduleRow>`select * from backup_schedules where project_id = ${projectId}`.execute(q);
  return (
    r.rows[0] ?? {
      project_id: projectId,
      enabled: false,
      every_hours: 24,
      keep: 7,
      entities: [...BackupEntitySets],
      next_run_at: null,
    }
  );
}

export const scheduleKey = (projectId: number, at: Date) =>
  `${BACKUP_SCHEDULED_JOB}:${projectId}:${at.toISOString()}`;

/** Plans the schedule's next run at `at`: the time on the row and its one job. */
export async function planNext(app: ServerContext, q: Q, projectId: number, at: Date | null): Promise<void> {
  await sql`update backup_schedules set next_run_at = ${at} where project_id = ${projectId}`.execute(q);
  if (at)
    await app.jobs.enqueue(
      q,
      BackupScheduledJob,
      { projectId, at: at.toISOString() },
      {
        idempotencyKey: scheduleKey(projectId, at),
        runAt: at,
      },
    );
}

/** Removes the scheduled backups beyond the newest `keep` (backups people made are never removed so). */
async function prune(app: ServerContext, projectId: number, keep: number): Promise<void> {
  const old = await sql<{ id: number; file: string }>`delete from backups where id in (
      select id from backups where project_id = ${projectId} and scheduled and state <> 'making'
      order by created_at desc, id desc offset ${keep})
    returning id, file`.execute(app.db);
  for (const b of old.rows) await fsp.rm(backupPath(app, b.file), { force: true });
}

/** Makes one backup (the platform's work: the person who asked was gated by `backup.make`). */
export const BackupMakeJob = defineJob({
  kind: BACKUP_MAKE_JOB,
  payload: z.object({ backupId: z.number().int() }),
  maxAttempts: 3,
  run: (ctx, p, job) => runMake(ctx.app, p.backupId, job.attempts >= job.max_attempts),
});

/** One planned run of a project's schedule: makes a backup and plans the next run. */
export const BackupScheduledJob = defineJob({
  kind: BACKUP_SCHEDULED_JOB,
  payload: z.object({ projectId: z.number().int(), at: z.string() }),
  maxAttempts: 3,
  async run(ctx, p) {
    const app = ctx.app;
    const projectId = p.projectId;
    const at = new Date(p.at);
    const s = await readSchedule(app.db, projectId);
    // a schedule changed or turned off since this run was planned: the run it planned instead stands
    if (!s.enabled || !s.next_run_at || new Date(s.next_run_at).getTime() !== at.getTime()) return;
    await app.db.transaction().execute(async (trx) => {
      const made = await startBackup(app, trx, {
        projectId,
        name: `scheduled ${at.toISOString().slice(0, 16).replace('T', ' ')}`,
        entities: s.entities,
        userId: null,
        scheduled: true,
      });
      // the next run, from the planned time (not from now: a late run does not shift the schedule)
      let next = at.getTime() + s.every_hours * 3_600_000;
      const now = app.clock.now().getTime();
      while (next <= now) next += s.every_hours * 3_600_000;
      await planNext(app, trx, projectId, new Date(next));
      await app.jobs.enqueue(trx, BackupMakeJob, { backupId: Number(made.id) });
    });
  },
});

export function defineBackupJobs(app: ServerContext): void {
  app.jobs.define(BackupMakeJob);
  app.jobs.define(BackupScheduledJob);
}

export async function deleteBackup(app: ServerContext, projectId: number, id: number): Promise<void> {
  const row = await getBackupRow(app.db, projectId, id);
  await sql`delete from backups where id = ${row.id}`.execute(app.db);
  await fsp.rm(backupPath(app, row.file), { force: true });
  await fsp.rm(`${backupPath(app, row.file)}.part`, { force: true });
}
