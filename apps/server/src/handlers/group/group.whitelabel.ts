/**
 * White-label (issue 24 item 2): a group's own (`domains.whitelabel_settings`), the project's
 * (`projects.settings.whitelabel_settings`) and the effective one a group shows — its own when enabled, else
 * its nearest ancestor's enabled one, else the project's when enabled (docs/decisions.md "White-label").
 * The logo is a stored file under storage/logos/ (`storeLogo`: decoded and encoded again as PNG), named by its
 * URL path; a replaced or removed logo's file goes at once, one nobody names any more with the daily sweep.
 */
import { sql, type Kysely } from 'kysely';
import { WhiteLabelSettings, type EffectiveWhiteLabel } from '@lintel/commands';
import type { DB } from '../../db/schema';
import { AppError } from '../../errors';
import { audit } from '../../audit/audit';
import { removeStored, storeLogo } from '../../storage/files';
import { familyCtx, type FamilyCtx } from '../../engine/family';
import type { SomeHandlers } from '../../pipeline/handler';
import { DefaultWhiteLabel } from './group.store';

/** Stored settings as the record gives them: the defaults under what is stored, anything unreadable dropped. */
export function shapeWhiteLabel(raw: unknown): WhiteLabelSettings {
  const stored = raw && typeof raw === 'object' ? (raw as Record<string, unknown>) : {};
  const whole = WhiteLabelSettings.safeParse({ ...DefaultWhiteLabel, ...stored });
  if (whole.success) return whole.data;
  const out: Record<string, unknown> = { ...DefaultWhiteLabel };
  for (const [k, schema] of Object.entries(WhiteLabelSettings.shape)) {
    const one = schema.safeParse(stored[k]);
    if (one.success) out[k] = one.data;
  }
  return out as WhiteLabelSettings;
}

export async function projectWhiteLabel(q: Kysely<DB>, projectId: number): Promise<WhiteLabelSettings> {
  const r = await sql<{ w: unknown }>`select settings->'whitelabel_settings' as w from projects
    where id = ${projectId}`.execute(q);
  return shapeWhiteLabel(r.rows[0]?.w);
}

/** The white-label group `groupId` shows: its chain's nearest enabled one (itself first), else the project's. */
export async function effectiveWhiteLabel(
  q: Kysely<DB>,
  projectId: number,
  groupId: number,
): Promise<EffectiveWhiteLabel> {
  const chain = await sql<{ id: number; name: string; w: unknown }>`
    with recursive up(id, depth) as (
      select ${groupId}::int, 0
      union all
      select d.parent_id, up.depth + 1 from up join domains d on d.id = up.id
        where d.parent_id is not null and up.depth < 64
    )
    select d.id, d.name, d.whitelabel_settings as w from up join domains d on d.id = up.id
      where d.project_id = ${projectId} order by up.depth`.execute(q);
  for (const g of chain.rows) {
    const settings = shapeWhiteLabel(g.w);
    if (settings.is_enabled) return { source: 'group', group: { id: g.id, name: g.name }, settings };
  }
  const project = await projectWhiteLabel(q, projectId);
  if (project.is_enabled) return { source: 'project', group: null, settings: project };
  return { source: 'none', group: null, settings: { ...DefaultWhiteLabel } };
}

/**
 * May the caller change group `id`'s white-label? `domains.edit_all`: any group of the project;
 * `domains.edit_descendant`: the groups below his own; `domains.own_white_label`: his own groups.
 */
async function assertMayBrand(c: FamilyCtx, id: number): Promise<void> {
  await assertGroup(c, id);
  const { caller } = c;
  if (caller.has('domains.edit_all')) return;
  const own = await caller.domains();
  if (caller.has('domains.own_white_label') && own.includes(id)) return;
  if (caller.has('domains.edit_descendant') && !own.includes(id) && (await caller.subtree()).includes(id))
    return;
  throw new AppError('method_prohibited');
}

async function assertGroup(c: FamilyCtx, id: number): Promise<void> {
  const g = await c.app.db
    .selectFrom('domains')
    .select('id')
    .where('id', '=', id)
    .where('project_id', '=', c.caller.projectId)
    .executeTakeFirst();
  if (!g) throw new AppError('item_not_found');
}

/** May the caller read group `id`'s white-label: he sees the group, or brands it. */
async function assertMayRead(c: FamilyCtx, id: number): Promise<void> {
  await assertGroup(c, id);
  const { caller } = c;
  if (caller.has('domains.view_all') || caller.has('domains.edit_all')) return;
  const viewOwn = [
    'domains.create_root',
    'domains.create_descendant',
    'domains.edit_descendant',
    'domains.own_general',
    'domains.own_white_label',
  ];
  if (caller.hasAny(viewOwn) && (await caller.subtree()).includes(id)) return;
  throw new AppError('item_not_found');
}

async function groupWhiteLabel(q: Kysely<DB>, id: number): Promise<WhiteLabelSettings> {
  const r = await q
    .selectFrom('domains')
    .select('whitelabel_settings')
    .where('id', '=', id)
    .executeTakeFirst();
  return shapeWhiteLabel(r?.whitelabel_settings);
}

async function reply(c: FamilyCtx, id: number) {
  return {
    data: await groupWhiteLabel(c.app.db, id),
    effective: await effectiveWhiteLabel(c.app.db, c.caller.projectId, id),
  };
}

/** Sets keys of group `id`'s white-label over what is stored (merged in SQL: two changes never lose one). */
async function setGroupWhiteLabel(q: Kysely<DB>, id: number, changes: Record<string, unknown>) {
  await sql`update domains set whitelabel_settings = ${JSON.stringify(DefaultWhiteLabel)}::jsonb
      || whitelabel_settings || ${JSON.stringify(changes)}::jsonb
    where id = ${id}`.execute(q);
}

const logoAudit = (
  c: FamilyCtx,
  id: number,
  action: 'whitelabel_logo_uploaded' | 'whitelabel_logo_deleted',
) =>
  audit(c.app.db, {
    projectId: c.caller.projectId,
    userId: c.caller.userId,
    action,
    entity: 'group',
    entityId: id,
    ip: c.ip,
  });

export const groupWhiteLabelHandlers = {
  'group.whitelabel_get': async (ctx, args) => {
    const c = await familyCtx(ctx);
    await assertMayRead(c, args.id);
    return reply(c, args.id);
  },

  'group.whitelabel_update': async (ctx, args) => {
    const c = await familyCtx(ctx);
    await assertMayBrand(c, args.id);
    const { id, ...changes } = args;
    const before = await groupWhiteLabel(c.app.db, id);
    await setGroupWhiteLabel(c.app.db, id, changes);
    await audit(c.app.db, {
      projectId: c.caller.projectId,
      userId: c.caller.userId,
      action: 'whitelabel_changed',
      entity: 'group',
      entityId: id,
      ip: c.ip,
      data: { before, after: changes },
    });
    return reply(c, id);
  },

  'group.whitelabel_logo_upload': async (ctx, args) => {
    const c = await familyCtx(ctx);
    await assertMayBrand(c, args.id);
    const url = await storeLogo(c.app.config, args.image);
    const before = await groupWhiteLabel(c.app.db, args.id);
    await setGroupWhiteLabel(c.app.db, args.id, { logo: url });
    await removeStored(c.app.config, before.logo);
    await logoAudit(c, args.id, 'whitelabel_logo_uploaded');
    return reply(c, args.id);
  },

  'group.whitelabel_logo_delete': async (ctx, args) => {
    const c = await familyCtx(ctx);
    await assertMayBrand(c, args.id);
    const before = await groupWhiteLabel(c.app.db, args.id);
    await setGroupWhiteLabel(c.app.db, args.id, { logo: null });
    await removeStored(c.app.config, before.logo);
    await logoAudit(c, args.id, 'whitelabel_logo_deleted');
    return { ok: true as const };
  },
} satisfies SomeHandlers;
