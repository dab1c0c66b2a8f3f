import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { sql } from 'kysely';
import type { BackupEntitySet } from '@lintel/commands';
import { signedIn, type HandlerContext, type SomeHandlers } from '../../pipeline/handler';
import { AppError } from '../../errors';
import { StreamedReply } from '../../pipeline/streamed-reply';
import { audit } from '../../audit/audit';
import { applyBackup, openBackup, type Applied } from '../../backup/apply';
import {
  BackupMakeJob,
  backupPath,
  backupsDir,
  deleteBackup,
  getBackupRow,
  listBackups,
  planNext,
  readSchedule,
  startBackup,
  toBackup,
  type ScheduleRow,
} from '../../backup/service';

const scheduleOut = (s: ScheduleRow) => ({
  enabled: s.enabled,
  every_hours: s.every_hours,
  keep: s.keep,
  entities: s.entities,
  next_run_at: s.next_run_at === null ? null : new Date(s.next_run_at).toISOString(),
});

async function applyFile(
  ctx: HandlerContext,
  file: string,
  entities: BackupEntitySet[] | undefined,
  source: Record<string, unknown>,
): Promise<Applied> {
  const auth = signedIn(ctx);
  const image = await openBackup(file);
  try {
    const applied = await applyBackup(ctx.app, image, auth.projectId, entities);
    await audit(ctx.app.db, {
      projectId: auth.projectId,
      userId: auth.userId,
      action: 'backup_applied',
      ip: ctx.caller.ip,
      data: { ...source, entities: applied.entities, rows: applied.rows, files: applied.files },
    });
    return applied;
  } finally {
    image.close();
  }
}

export const backupHandlers = {
  'backup.list': async (ctx, args) => ({
    data: await listBackups(ctx.app.db, signedIn(ctx).projectId, args.limit),
  }),
  'backup.get': async (ctx, args) => ({
    data: toBackup(await getBackupRow(ctx.app.db, signedIn(ctx).projectId, args.id)),
  }),
  'backup.make': async (ctx, args) => {
    const auth = signedIn(ctx);
    const row = await ctx.app.db.transaction().execute(async (trx) => {
      const r = await startBackup(ctx.app, trx, {
        projectId: auth.projectId,
        name: args.name,
        entities: args.entities,
        userId: auth.userId,
        scheduled: false,
      });
      await ctx.app.jobs.enqueue(trx, BackupMakeJob, { backupId: Number(r.id) });
      await audit(trx, {
        projectId: auth.projectId,
        userId: auth.userId,
        action: 'backup_made',
        ip: ctx.caller.ip,
        data: { backup_id: Number(r.id), name: args.name, entities: r.entities },
      });
      return r;
    });
    return { data: toBackup(row) };
  },
  'backup.delete': async (ctx, args) => {
    const auth = signedIn(ctx);
    await deleteBackup(ctx.app, auth.projectId, args.id);
    await audit(ctx.app.db, {
      projectId: auth.projectId,
      userId: auth.userId,
      action: 'backup_deleted',
      ip: ctx.caller.ip,
      data: { backup_id: args.id },
    });
    return { ok: true as const };
  },
  'backup.apply': async (ctx, args) => {
    const row = await getBackupRow(ctx.app.db, signedIn(ctx).projectId, args.id);
    if (row.state !== 'ready') throw new AppError('cant_perform_action', { reason: 'backup_not_ready' });
    return applyFile(ctx, backupPath(ctx.app, row.file), args.entities, { backup_id: args.id });
  },
  'backup.apply_file': async (ctx, args) => {
    // the upload goes to a file of its own in the backups folder, read from there and removed
    const dir = backupsDir(ctx.app.config);
    await fsp.mkdir(dir, { recursive: true });
    const file = path.join(dir, `upload-${randomBytes(8).toString('hex')}.zip.part`);
    try {
      await pipeline(Readable.fromWeb(args.file.stream() as never), fs.createWriteStream(file));
      return await applyFile(ctx, file, args.entities, { file: true });
    } finally {
      await fsp.rm(file, { force: true });
    }
  },
  'backup.download': async (ctx, args) => {
    const row = await getBackupRow(ctx.app.db, signedIn(ctx).projectId, args.id);
    if (row.state !== 'ready') throw new AppError('cant_perform_action', { reason: 'backup_not_ready' });
    const file = backupPath(ctx.app, row.file);
    const stat = await fsp.stat(file).catch(() => null);
    if (!stat) throw new AppError('item_not_found', { entity: 'backup', id: args.id });
    const safe = row.name.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80) || 'backup';
    return new StreamedReply('application/zip', fs.createReadStream(file), `${safe}-${row.id}.zip`);
  },
  'backup.schedule_get': async (ctx) => ({
    data: scheduleOut(await readSchedule(ctx.app.db, signedIn(ctx).projectId)),
  }),
  'backup.schedule_set': async (ctx, args) => {
    const auth = signedIn(ctx);
    const s = await ctx.app.db.transaction().execute(async (trx) => {
      const cur = await readSchedule(trx, auth.projectId);
      const next = { ...cur, ...args };
      await sql`insert into backup_schedules (project_id, enabled, every_hours, keep, entities)
        values (${auth.projectId}, ${next.enabled}, ${next.every_hours}, ${next.keep}, ${JSON.stringify(next.entities)}::jsonb)
        on conflict (project_id) do update set enabled = excluded.enabled, every_hours = excluded.every_hours,
          keep = excluded.keep, entities = excluded.entities`.execute(trx);
      // a change plans the next run anew, one period from now
      const at = next.enabled ? new Date(ctx.app.clock.now().getTime() + next.every_hours * 3_600_000) : null;
      await planNext(ctx.app, trx, auth.projectId, at);
      await audit(trx, {
        projectId: auth.projectId,
        userId: auth.userId,
        action: 'backup_schedule_changed',
        ip: ctx.caller.ip,
        data: { after: args },
      });
      return readSchedule(trx, auth.projectId);
    });
    return { data: scheduleOut(s) };
  },
} satisfies SomeHandlers;
