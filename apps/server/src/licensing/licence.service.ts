import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Selectable } from 'kysely';
import {
  EVALUATION_LICENCE_DAYS,
  LICENCE_NOTIFY_BEFORE_DAYS,
  LicenceNotifyEveryDays,
  LicenseInfo,
  type Licence,
  type LicenceList,
  type LicenceNotifyMode,
  type LicenceNotifySettings,
  type LicenceUsage,
  type LicencePayload,
  type ServerSettings,
} from '@lintel/core';
import type { DB, LicensesTable } from '../db/schema';
import type { ServerContext } from '../context';
import { AppError } from '../errors';
import { z } from 'zod';
import { defineJob } from '../jobs/define';
import { composeMail, groupOfUser } from '../mail/templates';
import { emptyLicenseInfo, licencesInForce, stackFeatures } from './licence';
import { readLicenceFile, trustedKeys } from './licence-file';
import { licenceUsageCounts, type CountedFeature } from './usage';
import { withCountedLimit } from './limits';
import { runGroupLicenceNotifications } from './group-notify';

const DAY = 86_400_000;
type Row = Selectable<LicensesTable>;
type Warning = ServerSettings['license_warning'];

/** Whole days from `now` to `end` (0 on the last day; negative once past). */
export const daysLeft = (end: Date | null, now: Date): number | null =>
  end ? Math.floor((end.getTime() - now.getTime()) / DAY) : null;

/** Who sees the licence warning and gets its notifications: those who manage or view licences. */
export const LICENCE_AUDIENCE = ['licenses.manage', 'licenses.view'] as const;
export const isLicenceAudience = (permissions: ReadonlySet<string> | readonly string[]) =>
  LICENCE_AUDIENCE.some((p) => ('has' in permissions ? permissions.has(p) : permissions.includes(p)));

function featuresOf(raw: unknown) {
  // a row's features over every feature off: a stored licence always shows the whole feature set
  const base = emptyLicenseInfo() as unknown as Record<string, Record<string, unknown>>;
  for (const [area, section] of Object.entries((raw ?? {}) as Record<string, Record<string, unknown>>))
    if (base[area]) Object.assign(base[area], section);
  return LicenseInfo.parse(base);
}

async function notifySettings(db: Kysely<DB>, projectId: number): Promise<LicenceNotifySettings> {
  const row = await db
    .selectFrom('licence_notify')
    .select(['notify_before', 'mode'])
    .where('project_id', '=', projectId)
    .executeTakeFirst();
  return {
    notify_before: row?.notify_before ?? LICENCE_NOTIFY_BEFORE_DAYS,
    mode: (row?.mode as LicenceNotifyMode | undefined) ?? 'everyday',
  };
}

export const getNotifySettings = notifySettings;

export async function updateNotifySettings(
  db: Kysely<DB>,
  projectId: number,
  patch: Partial<LicenceNotifySettings>,
): Promise<LicenceNotifySettings> {
  const next = { ...(await notifySettings(db, projectId)), ...patch };
  await db
    .insertInto('licence_notify')
    .values({ project_id: projectId, ...next })
    .onConflict((oc) => oc.column('project_id').doUpdateSet(next))
    .execute();
  return next;
}

async function rowsOf(db: Kysely<DB>, projectId: number): Promise<Row[]> {
  return db.selectFrom('licenses').selectAll().where('project_id', '=', projectId).orderBy('id').execute();
}

function stateOf(r: Row, now: Date, notifyBefore: number, counted: boolean): Licence['state'] {
  if (!r.is_active) return 'disabled';
  if (r.valid_from && r.valid_from.getTime() > now.getTime()) return 'not_started';
  if (r.valid_to && r.valid_to.getTime() <= now.getTime()) return 'expired';
  // within its period but not counted: the evaluation licence once a bought one is in force
  if (!counted) return 'superseded';
  const d = daysLeft(r.valid_to, now);
  return d !== null && d <= notifyBefore ? 'ending' : 'active';
}

/** The licence in force that ends last (no end beats any end). */
function lastEnding(current: Row[]): Row | undefined {
  return [...current].sort(
    (a, b) => (b.valid_to?.getTime() ?? Infinity) - (a.valid_to?.getTime() ?? Infinity),
  )[0];
}

/** Licences: list (active ids plus items), the one in force with its days left (spec part 2 §7). */
export async function listLicences(app: ServerContext, projectId: number): Promise<LicenceList> {
  const now = app.clock.now();
  const [rows, settings, project] = await Promise.all([
    rowsOf(app.db, projectId),
    notifySettings(app.db, projectId),
    app.db.selectFrom('projects').select('instance_id').where('id', '=', projectId).executeTakeFirstOrThrow(),
  ]);
  const current = licencesInForce(rows, now);
  const counted = new Set(current.map((r) => r.id));
  const last = lastEnding(current);
  return {
    active_ids: current.map((r) => r.id),
    items: rows.map((r) => ({
      id: r.id,
      licence_id: r.licence_id,
      kind: r.kind as Licence['kind'],
      issuer: r.issuer,
      instance_id: r.instance_id,
      valid_from: r.valid_from?.toISOString() ?? null,
      valid_to: r.valid_to?.toISOString() ?? null,
      is_active: r.is_active,
      state: stateOf(r, now, settings.notify_before, counted.has(r.id)),
      days_left: daysLeft(r.valid_to, now),
      features: featuresOf(r.features),
      units_per_licence: r.units_per_licence,
      created_at: r.created_at.toISOString(),
    })),
    in_force: last
      ? {
          id: last.id,
          valid_to: last.valid_to?.toISOString() ?? null,
          days_left: daysLeft(last.valid_to, now),
        }
      : null,
    instance_id: project.instance_id,
    evaluation: current.length > 0 && current.every((r) => r.kind === 'evaluation'),
  };
}

/**
 * Adds a verified licence: it must name this project's instance id (`license_not_found_for_project`), not be
 * over (`license_expired`) and not be added already (`license_cannot_be_applied`). Licences stack.
 */
async function addPayload(
  app: ServerContext,
  projectId: number,
  payload: LicencePayload,
  kind: 'file' | 'cloud',
  document: string,
): Promise<{ id: number; licence_id: string }> {
  const now = app.clock.now();
  const project = await app.db
    .selectFrom('projects')
    .select('instance_id')
    .where('id', '=', projectId)
    .executeTakeFirstOrThrow();
  if (payload.instance_id !== project.instance_id)
    throw new AppError('license_not_found_for_project', { instance_id: project.instance_id });
  if (Date.parse(payload.valid_to) <= now.getTime())
    // 422, not the gate's 403: the file is refused, the caller's rights are not in question
    throw new AppError('license_expired', { valid_to: payload.valid_to }, 422);
  const added = await app.db.transaction().execute(async (trx) => {
    const dup = await trx
      .selectFrom('licenses')
      .select('id')
      .where('project_id', '=', projectId)
      .where('licence_id', '=', payload.id)
      .executeTakeFirst();
    if (dup) throw new AppError('license_cannot_be_applied', { reason: 'already_added', id: dup.id });
    const row = await trx
      .insertInto('licenses')
      .values({
        project_id: projectId,
        kind,
        licence_id: payload.id,
        instance_id: payload.instance_id,
        issuer: payload.issuer,
        valid_from: payload.valid_from,
        valid_to: payload.valid_to,
        features: JSON.stringify(payload.features),
        units_per_licence: payload.units_per_licence,
        document,
        created_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return { id: row.id, licence_id: payload.id };
  });
  await scheduleLicenceCheck(app, projectId, dayOf(now), `:added-${added.id}`);
  return added;
}

export async function addLicenceFile(app: ServerContext, projectId: number, text: string) {
  const payload = readLicenceFile(text, trustedKeys(app.config.licences.publicKeys));
  return addPayload(app, projectId, payload, 'file', text);
}

/**
 * Add from cloud: POST {instance_id} to the configured licence server, which answers 200 with a licence
 * file, 404 when it holds none for the instance, 409 when another installation already claimed the instance
 * id (hijack). No URL: `license_cloud_not_configured` at once; no answer within the timeout, a refused
 * connection or any other reply: `license_server_not_responding`.
 */
export async function addLicenceFromCloud(app: ServerContext, projectId: number) {
  const url = app.config.licences.cloudUrl;
  if (!url) throw new AppError('license_cloud_not_configured');
  const project = await app.db
    .selectFrom('projects')
    .select(['instance_id', 'name'])
    .where('id', '=', projectId)
    .executeTakeFirstOrThrow();
  let reply: Response;
  let text: string;
  try {
    reply = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ instance_id: project.instance_id, project: project.name }),
      signal: AbortSignal.timeout(app.config.licences.cloudTimeoutMs),
    });
    text = await reply.text();
  } catch (err) {
    app.log.warn({ err, url }, 'licence server unreachable');
    throw new AppError('license_server_not_responding');
  }
  if (reply.status === 404)
    throw new AppError('license_not_found_for_project', { instance_id: project.instance_id });
  if (reply.status === 409) throw new AppError('license_hijack', { instance_id: project.instance_id });
  if (!reply.ok) throw new AppError('license_server_not_responding', { status: reply.status });
  const payload = readLicenceFile(text, trustedKeys(app.config.licences.publicKeys));
  return addPayload(app, projectId, payload, 'cloud', text);
}

export async function deleteLicence(db: Kysely<DB>, projectId: number, id: number): Promise<void> {
  const gone = await db
    .deleteFrom('licenses')
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!gone.numDeletedRows) throw new AppError('item_not_found');
}

/** Feature usage state: each counted feature's use against the stacked licences' count. */
export async function licenceUsage(app: ServerContext, projectId: number): Promise<LicenceUsage> {
  const now = app.clock.now();
  const current = licencesInForce(await rowsOf(app.db, projectId), now);
  const features = stackFeatures(current) as Record<string, { license_count?: number } | undefined>;
  const used = await licenceUsageCounts(app.db, projectId);
  const max = (area: string) => features[area]?.license_count ?? null;
  return {
    sip_numbers_used: used.sip,
    mobile_app_used: used.mobile_app,
    ukey2_used: used.ukey2,
    units_per_licence: Math.max(1, ...current.map((r) => r.units_per_licence)),
    features: {
      sip: { used: used.sip, max: max('sip') },
      mobile_app: { used: used.mobile_app, max: max('mobile_app') },
      ukey2: { used: used.ukey2, max: max('ukey2') },
    },
  };
}

/**
 * How many rows of a counted feature the licences in force allow (their `license_count` times units per
 * licence), or null when they set no count. Checked on create under `withCountedLimit`, in the writing
 * transaction (`q`), by `engine/table-store.ts` for a family declaring `licenceCount`.
 */
export async function assertLicenceCount(
  app: ServerContext,
  q: Kysely<DB>,
  projectId: number,
  feature: CountedFeature,
): Promise<void> {
  const current = licencesInForce(await rowsOf(q, projectId), app.clock.now());
  const features = stackFeatures(current) as Record<string, { license_count?: number } | undefined>;
  const count = features[feature]?.license_count;
  if (count === undefined || count === null) return;
  const units = Math.max(1, ...current.map((r) => r.units_per_licence));
  await withCountedLimit(q, {
    lockKey: `count:licence:${feature}:${projectId}`,
    max: count * units,
    count: async (trx) => (await licenceUsageCounts(trx, projectId))[feature],
    data: { feature },
  });
}

/**
 * The server licence warning (spec part 1 §4, part 2 §8): normal, no_license, will_expire (the licence in
 * force ends within notify_before days), already_expired, with the days left; `evaluation` when only the
 * installation's evaluation licence is in force.
 */
export async function licenceWarning(app: ServerContext, projectId: number): Promise<Warning> {
  const now = app.clock.now();
  const rows = (await rowsOf(app.db, projectId)).filter((r) => r.is_active);
  const current = licencesInForce(rows, now);
  if (!current.length) {
    const ended = rows.some((r) => r.valid_to && r.valid_to.getTime() <= now.getTime());
    return ended ? { status: 'already_expired', days: 0 } : { status: 'no_license', days: null };
  }
  const evaluation = current.every((r) => r.kind === 'evaluation');
  const last = lastEnding(current)!;
  const days = daysLeft(last.valid_to, now);
  const { notify_before } = await notifySettings(app.db, projectId);
  const status = days !== null && days <= notify_before ? 'will_expire' : 'normal';
  return { status, days, evaluation };
}

/** The warning as one caller may see it: those outside the licence audience always see `normal`. */
export async function licenceWarningFor(
  app: ServerContext,
  projectId: number,
  permissions: ReadonlySet<string>,
): Promise<Warning> {
  if (!isLicenceAudience(permissions)) return { status: 'normal', days: null };
  return licenceWarning(app, projectId);
}

/**
 * A fresh installation's evaluation licence: every feature on for `days` days, made by the server itself and
 * marked `evaluation` (it is not signed: no private key ever lives on the server).
 */
export async function createEvaluationLicence(
  db: Kysely<DB>,
  projectId: number,
  now: Date,
  days = EVALUATION_LICENCE_DAYS,
): Promise<void> {
  const features = emptyLicenseInfo() as unknown as Record<string, Record<string, unknown>>;
  for (const section of Object.values(features))
    for (const key of Object.keys(section)) section[key] = key === 'license_count' ? null : true;
  await db
    .insertInto('licenses')
    .values({
      project_id: projectId,
      kind: 'evaluation',
      licence_id: `evaluation-${randomUUID()}`,
      issuer: 'Lintel evaluation',
      valid_from: now,
      valid_to: new Date(now.getTime() + days * DAY),
      features: JSON.stringify(features),
      created_at: now,
    })
    .execute();
}

export const LICENCE_NOTIFY_JOB = 'licence.notify';

/** `licence.notify`: one project's daily check of its licences' ends, and the notices it sends. */
export const LicenceNotifyJob = defineJob({
  kind: LICENCE_NOTIFY_JOB,
  payload: z.object({ project_id: z.number().int() }),
  run: async (ctx, { project_id }) => void (await runLicenceCheck(ctx.app, project_id)),
});

/** The day number of a time (UTC days since the epoch): one notify check per project per day. */
const dayOf = (d: Date) => Math.floor(d.getTime() / DAY);

/** Queues the next daily check of a project's licence warning (idempotent per project and day). */
export async function scheduleLicenceCheck(
  app: ServerContext,
  projectId: number,
  day: number,
  /** a check of its own (a licence just added), beside the day's */
  reason = '',
) {
  await app.jobs.enqueue(
    app.db,
    LICENCE_NOTIFY_JOB,
    { project_id: projectId, day },
    { idempotencyKey: `licence.notify:${projectId}:${day}${reason}`, runAt: new Date(day * DAY) },
  );
}

/**
 * The daily check: when the warning is will_expire or already_expired and the chosen mode says it is time
 * (once: once per warning; everyday, every week, every 30 days: that long after the last), each user who
 * manages or views licences and has an e-mail address gets it; then the groups' own licence notifications
 * (group-notify.ts). Then the next day's check is queued.
 */
export async function runLicenceCheck(app: ServerContext, projectId: number): Promise<number> {
  const now = app.clock.now();
  let sent = 0;
  const warning = await licenceWarning(app, projectId);
  if (warning.status === 'will_expire' || warning.status === 'already_expired') {
    const { mode } = await notifySettings(app.db, projectId);
    const state = await app.db
      .selectFrom('licence_notify')
      .select(['last_notified_at', 'last_warning'])
      .where('project_id', '=', projectId)
      .executeTakeFirst();
    const key = warning.status;
    const every = LicenceNotifyEveryDays[mode];
    const last = state?.last_notified_at ?? null;
    const due = !last || state?.last_warning !== key || (every !== null && dayOf(now) - dayOf(last) >= every);
    if (due) {
      const people = await sql<{
        id: number;
        email: string;
        locale: string;
        name: string;
        permissions: string[];
      }>`
        select u.id, a.email, a.locale, u.name, r.permissions from users u
        join accounts a on a.id = u.account_id join roles r on r.id = u.role_id
        where u.project_id = ${projectId} and a.email is not null`.execute(app.db);
      for (const p of people.rows) {
        if (!isLicenceAudience(p.permissions)) continue;
        const params = { name: p.name, days: warning.days ?? 0, link: `${app.config.publicUrl}/licenses` };
        const mail = await composeMail(app, {
          projectId,
          type: `licence_${warning.status}` as const,
          locale: p.locale,
          params,
          groupId: await groupOfUser(app, p.id),
        });
        await app.mailer.send({ projectId, to: p.email, subject: mail.subject, text: mail.text });
        sent++;
      }
      await app.db
        .insertInto('licence_notify')
        .values({ project_id: projectId, last_notified_at: now, last_warning: key })
        .onConflict((oc) => oc.column('project_id').doUpdateSet({ last_notified_at: now, last_warning: key }))
        .execute();
    }
  }
  // and each group's own licences, on each group's own schedule
  sent += await runGroupLicenceNotifications(app, projectId);
  await scheduleLicenceCheck(app, projectId, dayOf(now) + 1);
  return sent;
}

/** A first start: the new project runs on an evaluation licence for `evaluationDays` (0: none). */
export async function firstStartLicence(app: ServerContext): Promise<void> {
  const days = app.config.licences.evaluationDays;
  if (days <= 0) return;
  const project = await app.db.selectFrom('projects').select('id').orderBy('id').executeTakeFirst();
  if (project) await createEvaluationLicence(app.db, project.id, app.clock.now(), days);
}

/**
 * Defines the notify job and queues today's check for every project holding a licence (idempotent per day
 * across restarts); adding a licence queues its project's check too.
 */
export async function startLicenceChecks(app: ServerContext): Promise<void> {
  app.jobs.define(LicenceNotifyJob);
  const projects = await app.db.selectFrom('licenses').select('project_id').distinct().execute();
  for (const p of projects) await scheduleLicenceCheck(app, p.project_id, dayOf(app.clock.now()));
}
