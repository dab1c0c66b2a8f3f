import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Argument, type Command as Commander } from 'commander';
import { BackupEntitySets, getCommand, type Backup, type CommandId } from '@lintel/commands';
import { ApiError, Timeouts, type ApiClient } from '@lintel/core';
import { execute } from '../api';
import type { CliContext } from '../context';
import { CliError } from '../errors';
import { ExitCode } from '../exit-codes';
import { evaluateGates } from '../families/gates';
import type { FamilyOptions } from '../families/tree';
import { t } from '../i18n';
import { setHint } from '../meta';
import { printOutcome } from '../output';
import { createProgress } from '../bulk/progress';

/**
 * `lintel backups make|apply|download|last`, handwritten in place of the generated make and apply (make waits
 * for its job with a progress bar at a terminal; apply takes a stored backup's id or `--file` on disk),
 * beside the generated `list|get|delete|schedule-get|schedule-set`. For scripts: `--json`, and `last`'s exit
 * code says whether the newest backup is made (0), failed or too old (1), or missing (5).
 */

const entitiesOf = (list: string | undefined) => {
  if (list === undefined) return undefined;
  const sets = list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = sets.filter((s) => !(BackupEntitySets as readonly string[]).includes(s));
  if (bad.length || !sets.length)
    throw new CliError('backup_bad_entities', ExitCode.usage, {
      value: list,
      sets: BackupEntitySets.join(', '),
    });
  return sets as (typeof BackupEntitySets)[number][];
};

async function gate(opts: FamilyOptions, id: CommandId): Promise<void> {
  const g = evaluateGates(getCommand(id), await opts.session.profile());
  if (!g.can) throw new CliError('method_prohibited', ExitCode.refused, { command: id }, 'errors');
}

const describe = (b: Backup) =>
  t('backups.line', {
    id: b.id,
    name: b.name,
    state: t(`backups.states.${b.state}`),
    rows: b.rows,
    size: b.size,
    at: b.created_at,
  });

/**
 * The backup's state, asked again while the server cannot answer: on the embedded database the make holds the
 * one connection for its snapshot (31 s at 100,000 users and 100,000 identifiers), so a poll then waits out its
 * own timeout or is refused 503. The make's own deadline bounds the wait, not one poll's.
 */
async function pollBackup(api: ApiClient, b: Backup): Promise<{ data: Backup }> {
  try {
    return await execute(api, 'backup.get', { id: b.id });
  } catch (err) {
    if (err instanceof ApiError && (err.code === 'timeout' || err.status === 503)) return { data: b };
    throw err;
  }
}

interface MakeOptions {
  name?: string;
  entities?: string;
  wait: boolean;
  json?: boolean;
}

async function make(ctx: CliContext, opts: FamilyOptions, o: MakeOptions): Promise<void> {
  const { api } = opts.session.signedIn();
  await gate(opts, 'backup.make');
  const name = o.name ?? `backup ${new Date().toISOString().slice(0, 16).replace('T', ' ')}`;
  let b = (await execute(api, 'backup.make', { name, entities: entitiesOf(o.entities) })).data;
  if (o.wait) {
    const progress = await createProgress(ctx, t('backups.make.label'), { lines: false, phase: 'exporting' });
    const end = Date.now() + Timeouts.backup;
    while (b.state === 'making') {
      if (Date.now() > end) throw new CliError('backup_timeout', ExitCode.error, { id: b.id });
      await new Promise((r) => setTimeout(r, 500));
      b = (await pollBackup(api, b)).data;
      progress.update({ rows: b.rows, fraction: null });
    }
    progress.update({ rows: b.rows, fraction: 1 });
    await progress.finish();
    if (b.state === 'failed')
      throw new CliError('backup_failed', ExitCode.error, { id: b.id, error: b.error ?? '' });
  }
  printOutcome(ctx, Boolean(o.json), { data: b, text: describe(b) });
}

interface ApplyOptions {
  file?: string;
  entities?: string;
  json?: boolean;
}

async function apply(ctx: CliContext, opts: FamilyOptions, id: string | undefined, o: ApplyOptions) {
  if (!id === !o.file) throw new CliError('backup_apply_usage', ExitCode.usage);
  const { api } = opts.session.signedIn();
  const entities = entitiesOf(o.entities);
  const progress = await createProgress(ctx, t('backups.apply.label'), { lines: false, phase: 'committing' });
  progress.update({ fraction: null });
  let result;
  try {
    if (o.file) {
      await gate(opts, 'backup.apply_file');
      let blob: Blob;
      try {
        // backed by the file: sent as it is read, never held whole in memory
        blob = await fs.openAsBlob(o.file);
      } catch {
        throw new CliError('backup_no_file', ExitCode.usage, { file: o.file });
      }
      const file = new File([blob], path.basename(o.file), { type: 'application/zip' });
      result = await execute(api, 'backup.apply_file', {
        file,
        entities: entities?.join(','),
      });
    } else {
      await gate(opts, 'backup.apply');
      if (!/^\d+$/.test(id!)) throw new CliError('backup_bad_id', ExitCode.usage, { id });
      result = await execute(api, 'backup.apply', { id: Number(id), entities });
    }
  } finally {
    await progress.finish();
  }
  printOutcome(ctx, Boolean(o.json), {
    data: result,
    text: t('backups.apply.done', { rows: result.rows, entities: result.entities.join(', ') }),
  });
}

interface DownloadOptions {
  output?: string;
  json?: boolean;
}

async function download(ctx: CliContext, opts: FamilyOptions, id: string, o: DownloadOptions) {
  if (!/^\d+$/.test(id)) throw new CliError('backup_bad_id', ExitCode.usage, { id });
  const { api } = opts.session.signedIn();
  await gate(opts, 'backup.download');
  const res = await api.openStream('GET', `/backups/${id}/download`, { timeoutMs: Timeouts.backup });
  const named = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1];
  const body = Readable.fromWeb(res.body as never);
  if (o.output === '-') {
    await pipeline(body, ctx.stdout as NodeJS.WritableStream);
    return;
  }
  const file = path.resolve(o.output ?? named ?? `backup-${id}.zip`);
  const total = Number(res.headers.get('content-length') ?? 0);
  const progress = await createProgress(ctx, t('backups.download.label'), {
    lines: false,
    phase: 'exporting',
  });
  let bytes = 0;
  body.on('data', (c: Buffer) => {
    bytes += c.length;
    progress.update({ rows: bytes, fraction: total ? bytes / total : null });
  });
  await pipeline(body, fs.createWriteStream(file));
  await progress.finish();
  printOutcome(ctx, Boolean(o.json), {
    data: { id: Number(id), file, size: bytes },
    text: t('backups.download.done', { file, size: bytes }),
  });
}

interface LastOptions {
  maxAgeHours?: string;
  json?: boolean;
}

/** The newest backup; the exit code says whether a script may rely on it. */
async function last(ctx: CliContext, opts: FamilyOptions, o: LastOptions) {
  const { api } = opts.session.signedIn();
  await gate(opts, 'backup.list');
  const maxAge = o.maxAgeHours === undefined ? null : Number(o.maxAgeHours);
  if (maxAge !== null && !(maxAge > 0))
    throw new CliError('backup_bad_age', ExitCode.usage, { value: o.maxAgeHours });
  const list = (await execute(api, 'backup.list', { limit: 20 })).data;
  const newest = list.find((b) => b.state !== 'making');
  if (!newest) throw new CliError('backup_none', ExitCode.notFound);
  const ageH = (Date.now() - Date.parse(newest.finished_at ?? newest.created_at)) / 3_600_000;
  const fresh = maxAge === null || ageH <= maxAge;
  const ok = newest.state === 'ready' && fresh;
  printOutcome(ctx, Boolean(o.json), {
    data: { ...newest, ok, age_hours: Math.round(ageH * 100) / 100 },
    text: describe(newest),
  });
  if (!ok)
    throw new CliError(newest.state === 'ready' ? 'backup_too_old' : 'backup_last_failed', ExitCode.error, {
      id: newest.id,
      hours: Math.round(ageH),
      error: newest.error ?? '',
    });
}

export function addBackupTools(program: Commander, ctx: CliContext, opts: FamilyOptions): void {
  const backups =
    program.commands.find((c) => c.name() === 'backups') ??
    program.command('backups').description(t('backups.description'));
  const own = backups.commands as Commander[];
  for (const name of ['make', 'apply', 'apply-file']) {
    const i = own.findIndex((c) => c.name() === name);
    if (i >= 0) own.splice(i, 1);
  }
  backups
    .command('make')
    .description(t('backups.make.description'))
    .option(`--name <${t('placeholders.text')}>`, t('backups.make.name'))
    .option(
      `--entities <${t('placeholders.texts')}>`,
      t('backups.entities', { sets: BackupEntitySets.join(', ') }),
    )
    .option('--no-wait', t('backups.make.no_wait'))
    .option('--json', t('options.json'))
    .action((o: MakeOptions) => make(ctx, opts, o));
  backups
    .command('apply')
    .description(t('backups.apply.description'))
    .argument('[id]', t('backups.apply.id'))
    .option(`--file <${t('placeholders.file')}>`, t('backups.apply.file'))
    .option(
      `--entities <${t('placeholders.texts')}>`,
      t('backups.entities', { sets: BackupEntitySets.join(', ') }),
    )
    .option('--json', t('options.json'))
    .action((id: string | undefined, o: ApplyOptions) => apply(ctx, opts, id, o));
  backups
    .command('download')
    .description(t('backups.download.description'))
    .addArgument(setHint(new Argument('<id>', t('backups.download.id')), {}))
    .option(`-o, --output <${t('placeholders.file')}>`, t('backups.download.output'))
    .option('--json', t('options.json'))
    .action((id: string, o: DownloadOptions) => download(ctx, opts, id, o));
  backups
    .command('last')
    .description(t('backups.last.description'))
    .option(`--max-age-hours <${t('placeholders.number')}>`, t('backups.last.max_age'))
    .option('--json', t('options.json'))
    .action((o: LastOptions) => last(ctx, opts, o));
}
