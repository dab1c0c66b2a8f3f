import { z } from 'zod';
import { Timeouts } from '@lintel/core';
import { defineCommand, NoArgs } from '../command';
import { IdParam, OkReply } from '../resource';
import { fileArg } from '../upload';

/**
 * Backups of a project (spec part 1 §3 "Backup: name, entities", §4; part 2 §7 "Backups: make {name,entities};
 * apply stored or from file (timeout 1 hour); download as zip (timeout 1 hour)", permissions "Backups:
 * create, delete, view, apply, apply from file, download"). A backup is a zip of versioned, documented files
 * (docs/decisions.md "Backups"); make runs as a job, apply is one transaction.
 */

/** The entity sets a backup can hold, in the order they are applied (what each holds: docs/decisions.md). */
export const BackupEntitySets = [
  'settings',
  'groups',
  'roles',
  'markers',
  'users',
  'devices',
  'access',
  'sip_numbers',
  'telephony',
  'licences',
  'administration',
] as const;
export const BackupEntitySet = z.enum(BackupEntitySets);
export type BackupEntitySet = z.infer<typeof BackupEntitySet>;

export const BackupStates = ['making', 'ready', 'failed'] as const;

export const Backup = z.object({
  id: z.number().int(),
  name: z.string(),
  entities: z.array(BackupEntitySet),
  state: z.enum(BackupStates),
  /** made by the schedule rather than by a person */
  scheduled: z.boolean(),
  /** the zip's size in bytes (0 while it is made) */
  size: z.number().int(),
  /** rows written so far, then in all */
  rows: z.number().int(),
  /** the rows of each table, once made */
  tables: z.record(z.string(), z.number().int()),
  format_version: z.number().int(),
  error: z.string().nullable(),
  created_by: z.number().int().nullable(),
  created_at: z.string(),
  finished_at: z.string().nullable(),
});
export type Backup = z.infer<typeof Backup>;

const Name = z.string().trim().min(1).max(200);
const Entities = z
  .array(BackupEntitySet)
  .min(1)
  .max(BackupEntitySets.length)
  .default([...BackupEntitySets]);

export const backupList = defineCommand({
  id: 'backup.list',
  http: { method: 'GET', path: '/backups' },
  args: z.object({ limit: z.coerce.number().int().min(1).max(1000).default(100) }),
  result: z.object({ data: z.array(Backup) }),
  gates: { anyPermission: ['backups.view'] },
});

export const backupGet = defineCommand({
  id: 'backup.get',
  http: { method: 'GET', path: '/backups/:id' },
  args: IdParam,
  result: z.object({ data: Backup }),
  gates: { anyPermission: ['backups.view'] },
});

/** Starts a backup: the reply is the backup in state `making`; the job writes it and marks it `ready`. */
export const backupMake = defineCommand({
  id: 'backup.make',
  http: { method: 'PUT', path: '/backups' },
  args: z.object({ name: Name, entities: Entities }),
  result: z.object({ data: Backup }),
  gates: { anyPermission: ['backups.create'] },
});

export const backupDelete = defineCommand({
  id: 'backup.delete',
  http: { method: 'DELETE', path: '/backups/:id' },
  args: IdParam,
  result: OkReply,
  gates: { anyPermission: ['backups.delete'] },
});

const Applied = z.object({
  /** the entity sets replaced */
  entities: z.array(BackupEntitySet),
  /** rows written, by table */
  tables: z.record(z.string(), z.number().int()),
  rows: z.number().int(),
  /** stored files written (face photos, avatars the storage folder lacked) */
  files: z.number().int(),
});

/**
 * Replaces the chosen entity sets (default: every set the backup holds) with the backup's rows, in one
 * transaction: all or nothing. A file it cannot read, or of a newer format, is `invalid_backup_image`.
 */
export const backupApply = defineCommand({
  id: 'backup.apply',
  http: { method: 'POST', path: '/backups/:id/apply' },
  args: IdParam.extend({ entities: z.array(BackupEntitySet).min(1).optional() }),
  result: Applied,
  gates: { anyPermission: ['backups.apply'] },
  timeoutMs: Timeouts.backup,
});

export const backupApplyFile = defineCommand({
  id: 'backup.apply_file',
  http: { method: 'POST', path: '/backups/apply-file' },
  args: z.object({
    file: fileArg('backup'),
    /** comma-separated entity sets (multipart fields are text) */
    entities: z
      .string()
      .max(500)
      .optional()
      .transform((s, ctx) => {
        if (s === undefined || s.trim() === '') return undefined;
        const list = s.startsWith('[') ? (JSON.parse(s) as unknown) : s.split(',').map((x) => x.trim());
        const r = z.array(BackupEntitySet).min(1).safeParse(list);
        if (!r.success) {
          ctx.addIssue({ code: 'custom', message: 'invalid' });
          return z.NEVER;
        }
        return r.data;
      }),
  }),
  result: Applied,
  gates: { anyPermission: ['backups.apply_from_file'] },
  timeoutMs: Timeouts.backup,
});

/** The backup's zip, streamed (the console and the CLI download it from this path). */
export const backupDownload = defineCommand({
  id: 'backup.download',
  http: { method: 'GET', path: '/backups/:id/download' },
  args: IdParam,
  result: z.unknown(),
  gates: { anyPermission: ['backups.download'] },
  timeoutMs: Timeouts.backup,
  hidden: true,
});

export const BackupSchedule = z.object({
  /** off: no scheduled backups */
  enabled: z.boolean(),
  /** hours between two scheduled backups */
  every_hours: z
    .number()
    .int()
    .min(1)
    .max(24 * 31),
  /** the scheduled backups kept (the oldest go first; backups people made are never removed by it) */
  keep: z.number().int().min(1).max(1000),
  entities: z.array(BackupEntitySet).min(1),
  /** when the next one runs (null when off) */
  next_run_at: z.string().nullable(),
});

export const backupScheduleGet = defineCommand({
  id: 'backup.schedule_get',
  http: { method: 'GET', path: '/backups/schedule' },
  args: NoArgs,
  result: z.object({ data: BackupSchedule }),
  gates: { anyPermission: ['backups.view'] },
});

export const backupScheduleSet = defineCommand({
  id: 'backup.schedule_set',
  http: { method: 'PATCH', path: '/backups/schedule' },
  args: BackupSchedule.omit({ next_run_at: true }).partial().strict(),
  result: z.object({ data: BackupSchedule }),
  gates: { anyPermission: ['backups.create'] },
});
