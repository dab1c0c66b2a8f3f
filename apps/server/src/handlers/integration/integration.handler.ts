import { X509Certificate } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { DUMMY_PASSWORD } from '@lintel/core';
import { integrationResource, IntegrationTypes } from '@lintel/commands';
import type { DB } from '../../db/schema';
import { defaultIntegrationSettings } from '../../config';
import { assertMay, callerOf, familyCtx, familyHandlers, loadOne, visibleSql } from '../../engine/family';
import type { Caller } from '../../engine/caller';
import { descendantsOf } from '../../engine/caller';
import type { ScopeRule } from '../../engine/scope';
import { tableStore } from '../../engine/table-store';
import { AppError } from '../../errors';
import { audit } from '../../audit/audit';
import { certificateInfo } from '../../devices/broker-settings';
import { axxonCameras, axxonMacros, type AxxonServer } from '../../integrations/axxon-one';
import type { HandlerContext, SomeHandlers } from '../../pipeline/handler';

/**
 * Integrations (issue 24 item 5): the declaration's store, with what the declaration cannot say.
 * - **Who reaches which row** (spec part 2 §6 "Mail templates and integrations: without a domain they need
 *   change project settings; with a domain they need the domain edit permissions or manage own-domain
 *   integrations"): a project's own integration (no group) is reached by `project_settings.change` alone; a
 *   group's by `domains.edit_all` (any group's), `domains.edit_descendant` (a group at or below the caller's)
 *   or `domains.own_integrations` (one of the caller's groups). `integrations.view` sees every one, read-only.
 *   A create or a move without a group needs `project_settings.change`.
 * - **Its settings** are one object of the record over columns of the row: `server_url` (one per server in a
 *   project: `integration_url_exists`), `login`, the password never read back (the placeholder says one is
 *   stored; the placeholder sent back keeps it) and the certificate uploaded, shown by what it says.
 * - **The groups it serves** are at or below the group that owns it (a group's administrators cannot hand
 *   their integration to other groups); a project's integration serves any group.
 */
const MANAGE_RULES: ScopeRule[] = [
  { permission: 'domains.edit_all', scope: 'grouped' },
  { permission: 'domains.edit_descendant', scope: 'descendants' },
  { permission: 'domains.own_integrations', scope: 'domain' },
  { permission: 'project_settings.change', scope: 'ungrouped' },
];

/** `https://vms:8443/api/` → `https://vms:8443/api`: one server, however its URL was typed. */
export const normalizeUrl = (url: string): string => new URL(url).href.replace(/\/+$/, '');

const base = tableStore(integrationResource, {
  table: 'integrations',
  computed: {
    axxon_one_settings: sql`json_build_object(
      'server_url', t.server_url,
      'login', t.login,
      'password', (case when t.password is not null and t.password <> '' then ${DUMMY_PASSWORD}::text end),
      'certificate', t.certificate_info)`,
  },
  prepare: (values) => {
    const { axxon_one_settings: settings, ...rest } = values;
    if (!settings) return rest;
    const s = settings as { server_url?: string; login?: string; password?: string };
    return {
      ...rest,
      ...(s.server_url !== undefined ? { server_url: normalizeUrl(s.server_url) } : {}),
      ...(s.login !== undefined ? { login: s.login } : {}),
      ...(s.password !== undefined && s.password !== DUMMY_PASSWORD ? { password: s.password } : {}),
    };
  },
});

async function assertUrlFree(q: Kysely<DB>, projectId: number, url: string, id: number | null) {
  const taken = await sql<{ id: number }>`select id from integrations
    where project_id = ${projectId} and lower(server_url) = lower(${normalizeUrl(url)}) and id <> ${id ?? 0}
    limit 1`.execute(q);
  if (taken.rows.length)
    throw new AppError('integration_url_exists', { field: 'axxon_one_settings.server_url' });
}

/** The groups a group's integration may serve are at or below that group; a project's serves any group. */
async function assertServes(q: Kysely<DB>, projectId: number, id: number): Promise<void> {
  const row = (
    await sql<{ domain_id: number | null }>`select domain_id from integrations where id = ${id}`.execute(q)
  ).rows[0]!;
  if (row.domain_id === null) return;
  const served = (
    await sql<{
      domain_id: number;
    }>`select domain_id from integration_domains where integration_id = ${id}`.execute(q)
  ).rows.map((r) => Number(r.domain_id));
  if (!served.length) return;
  const below = new Set(await descendantsOf(q, projectId, [row.domain_id], true));
  const outside = served.filter((g) => !below.has(g));
  if (outside.length) throw new AppError('invalid_related_entity', { entity: 'domains', ids: outside });
}

const projectLevel = (caller: Caller) => {
  if (!caller.has('project_settings.change'))
    throw new AppError('method_prohibited', { reason: 'placement', field: 'domain_id' });
};

export const integrationStore: typeof base = {
  ...base,
  scopes: {
    view: [{ permission: 'integrations.view', scope: 'all' }, ...MANAGE_RULES],
    edit: MANAGE_RULES,
    delete: MANAGE_RULES,
    ownAlwaysVisible: false,
  },
  async scopeSql(scope, caller) {
    if (scope === 'grouped') return sql<boolean>`t.domain_id is not null`;
    if (scope === 'ungrouped') return sql<boolean>`t.domain_id is null`;
    return base.scopeSql(scope, caller);
  },
  async create(trx, args, ctx) {
    if (args.domain_id === null) projectLevel(ctx.caller);
    await assertUrlFree(trx, ctx.caller.projectId, args.axxon_one_settings.server_url, null);
    const id = await base.create(trx, args, ctx);
    await assertServes(trx, ctx.caller.projectId, id);
    return id;
  },
  async update(trx, id, args, ctx, before) {
    if (args.domain_id === null && before.domain_id !== null) projectLevel(ctx.caller);
    if (args.axxon_one_settings?.server_url !== undefined)
      await assertUrlFree(trx, ctx.caller.projectId, args.axxon_one_settings.server_url, id);
    await base.update(trx, id, args, ctx, before);
    await assertServes(trx, ctx.caller.projectId, id);
  },
};

interface Secrets {
  id: number;
  type: string;
  domain_id: number | null;
  server_url: string;
  login: string;
  password: string | null;
  certificate: string | null;
}

/**
 * The integration's server with its credentials, for a caller who may use it: one who sees it (its view
 * rule), or one who edits devices of a group it serves (he picks a camera for a panel there). Another
 * project's, or none: `item_not_found`; one he may not use: `integration_not_allowed`.
 */
async function serverFor(ctx: HandlerContext, id: number): Promise<AxxonServer> {
  const caller = callerOf(ctx);
  const row = (
    await sql<Secrets>`select id, type, domain_id, server_url, login, password, certificate from integrations
      where id = ${id} and project_id = ${caller.projectId}`.execute(ctx.app.db)
  ).rows[0];
  if (!row) throw new AppError('item_not_found', { entity: 'integration', id });
  const sees = await sql<{ id: number }>`select t.id from integrations t
    where t.id = ${id} and ${await visibleSql(integrationStore, caller, 'view')}`.execute(ctx.app.db);
  if (!sees.rows.length) {
    const devices = caller.hasAny(['devices.create', 'devices.edit'])
      ? await caller.subtree()
      : ([] as number[]);
    const serves = devices.length
      ? await sql<{ n: number }>`select count(*)::int as n from integration_domains
          where integration_id = ${id} and domain_id in (${sql.join(devices)})`.execute(ctx.app.db)
      : { rows: [{ n: 0 }] };
    if (!serves.rows[0]!.n) throw new AppError('integration_not_allowed', { id });
  }
  return { url: row.server_url, login: row.login, password: row.password ?? '', ca: row.certificate };
}

/** The settings object of each type of integration. */
const SETTINGS_OF = { axxon: 'axxon_one_settings' } as const satisfies Record<
  (typeof IntegrationTypes)[number],
  string
>;

const settingsOf = (ctx: HandlerContext) => ({
  ...defaultIntegrationSettings,
  ...ctx.app.config.integrations,
});

/** The certificates of a PEM text (its chain), each block as it was; a private key in it is refused. */
function certificatesOf(pem: string): string {
  if (/PRIVATE KEY-----/.test(pem))
    throw new AppError('check_fields_data', { fields: [{ field: 'certificate', rule: 'private_key' }] });
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  const valid = blocks.every((b) => {
    try {
      new X509Certificate(b);
      return true;
    } catch {
      return false;
    }
  });
  if (!blocks.length || !valid)
    throw new AppError('check_fields_data', { fields: [{ field: 'certificate', rule: 'pem_certificate' }] });
  return blocks.join('\n');
}

/** Sets (or removes) the certificate of an integration the caller may edit, audited as its update. */
async function setCertificate(ctx: HandlerContext, id: number, pem: string | null) {
  const c = await familyCtx(ctx);
  const info = pem ? certificateInfo(pem) : null;
  return ctx.app.db.transaction().execute(async (trx) => {
    await assertMay(trx, integrationStore, c.caller, id, 'edit', c);
    const before = await loadOne(trx, integrationStore, id);
    await sql`update integrations set certificate = ${pem}, certificate_info = ${info ? JSON.stringify(info) : null}
      where id = ${id}`.execute(trx);
    const after = await loadOne(trx, integrationStore, id);
    await audit(trx, {
      projectId: c.caller.projectId,
      userId: c.caller.userId,
      action: 'update',
      entity: 'integration',
      entityId: id,
      ip: c.ip,
      data: { before, after },
    });
    return { data: after };
  });
}

export const integrationHandlers = {
  ...familyHandlers(integrationStore),

  'integration.available': async () => ({
    data: IntegrationTypes.map((type) => ({ type, settings: SETTINGS_OF[type], certificate: true })),
  }),

  'integration.macros': async (ctx, args) => {
    const server = await serverFor(ctx, args.id);
    const all = await axxonMacros(server, settingsOf(ctx));
    const needle = args.search?.toLowerCase();
    const matching = needle ? all.filter((m) => m.name.toLowerCase().includes(needle)) : all;
    // the server gives them all at once: the cursor is the offset of the next page
    const from = Number(args.next ?? 0) || 0;
    const page = matching.slice(from, from + args.limit);
    const next = from + args.limit < matching.length ? String(from + args.limit) : null;
    return { data: page, meta: { next } };
  },

  'integration.cameras': async (ctx, args) => {
    const server = await serverFor(ctx, args.id);
    const page = await axxonCameras(
      server,
      { limit: args.limit, next: args.next, search: args.search },
      settingsOf(ctx),
    );
    return { data: page.cameras, meta: { next: page.next } };
  },

  'integration.certificate_upload': async (ctx, args) =>
    setCertificate(ctx, args.id, certificatesOf(await args.certificate.text())),

  'integration.certificate_delete': async (ctx, args) => setCertificate(ctx, args.id, null),
} satisfies SomeHandlers;
