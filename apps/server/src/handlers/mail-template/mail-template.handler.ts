import type { AuditAction } from '@lintel/core';
import { sql } from 'kysely';
import {
  MailTypePlaceholders,
  MailTypes,
  placeholdersOf,
  type MailTemplate,
  type MailType,
} from '@lintel/commands';
import { signedIn, type HandlerContext, type SomeHandlers } from '../../pipeline/handler';
import type { AuthInfo } from '../../context';
import { AppError } from '../../errors';
import { audit } from '../../audit/audit';
import { enforceMailTarget } from '../../security/rate-limit';
import { fill } from '../../mail/templates';

/**
 * Mail templates (issue 24 item 5; spec part 2 §6 "Mail templates and integrations: without a domain they
 * need change project settings; with a domain they need the domain edit permissions or manage own-domain
 * mail templates"). The command's gate admits any of those; which template a caller may touch is decided
 * here from its group: none → `project_settings.change`; a group → `domains.edit_all`, or
 * `domains.edit_descendant` for a group at or below one of the caller's, or `domains.own_mail_templates` for
 * one of the caller's own groups. A caller sees the templates they may change.
 */
interface Row {
  id: number;
  mail_type: MailType;
  domain_id: number | null;
  domain_name: string | null;
  subject: string;
  body: string;
  updated_at: Date | string;
}

const toTemplate = (r: Row): MailTemplate => ({
  id: r.id,
  mail_type_id: r.mail_type,
  domain_id: r.domain_id,
  domain: r.domain_id === null ? null : { id: r.domain_id, name: r.domain_name ?? '' },
  subject: r.subject,
  body: r.body,
  updated_at: new Date(r.updated_at).toISOString(),
});

/** Whether the caller may change the templates of this group (null: the project's). */
async function mayChange(ctx: HandlerContext, auth: AuthInfo, domainId: number | null): Promise<boolean> {
  const has = (p: string) => auth.permissions.has(p);
  if (domainId === null) return has('project_settings.change');
  const group = await sql<{ n: number }>`
    select count(*)::int as n from domains where id = ${domainId} and project_id = ${auth.projectId}`.execute(
    ctx.app.db,
  );
  if (!group.rows[0]!.n) throw new AppError('invalid_related_entity', { entities: ['domain_id'] });
  if (has('domains.edit_all')) return true;
  const r = await sql<{ own: boolean; below: boolean }>`
    with recursive up as (
      select id, parent_id from domains where id = ${domainId}
      union all select d.id, d.parent_id from domains d join up on d.id = up.parent_id)
    select exists (select 1 from user_domains where user_id = ${auth.userId} and domain_id = ${domainId}) as own,
           exists (select 1 from up join user_domains ud on ud.domain_id = up.id and ud.user_id = ${auth.userId}) as below`.execute(
    ctx.app.db,
  );
  const { own, below } = r.rows[0]!;
  return (has('domains.edit_descendant') && below) || (has('domains.own_mail_templates') && own);
}

async function assertMayChange(ctx: HandlerContext, domainId: number | null): Promise<AuthInfo> {
  const auth = signedIn(ctx);
  if (!(await mayChange(ctx, auth, domainId))) throw new AppError('method_prohibited');
  return auth;
}

async function rows(ctx: HandlerContext, where = sql`true`): Promise<Row[]> {
  const r = await sql<Row>`
    select t.id, t.mail_type, t.domain_id, d.name as domain_name, t.subject, t.body, t.updated_at
    from mail_templates t left join domains d on d.id = t.domain_id
    where t.project_id = ${signedIn(ctx).projectId} and ${where}
    order by t.mail_type, t.domain_id nulls first, t.id`.execute(ctx.app.db);
  return r.rows;
}

async function one(ctx: HandlerContext, id: number): Promise<Row> {
  const [row] = await rows(ctx, sql`t.id = ${id}`);
  if (!row) throw new AppError('item_not_found', { entity: 'mail_template', id });
  return row;
}

function assertPlaceholders(type: MailType, subject: string, body: string): void {
  const held = new Set(placeholdersOf(`${subject} ${body}`));
  if (MailTypePlaceholders[type].required.some((p) => !held.has(p)))
    throw new AppError('check_fields_data', { fields: [{ field: 'body', rule: 'required_placeholders' }] });
}

/** Example values for a preview: each placeholder named after itself, the way a reader recognises it. */
const EXAMPLES: Record<string, unknown> = {
  name: 'Anna Petrova',
  login: 'anna',
  project: 'Riverside towers',
  code: '123456',
  link: 'https://lintel.example/link',
  hours: 24,
  days: 14,
  group: 'Building 2',
  to: '2026-12-31',
  host: 'smtp.example',
  port: 587,
};

const changed = (ctx: HandlerContext, action: AuditAction, data: Record<string, unknown>) =>
  audit(ctx.app.db, {
    projectId: signedIn(ctx).projectId,
    userId: signedIn(ctx).userId,
    action,
    entity: 'mail_template',
    entityId: data.id as number | undefined,
    ip: ctx.caller.ip,
    data,
  });

export const mailTemplateHandlers = {
  'mail_template.types': async () => ({
    data: MailTypes.map((id) => ({ id, ...MailTypePlaceholders[id] })),
  }),

  'mail_template.list': async (ctx, args) => {
    const auth = signedIn(ctx);
    const all = await rows(
      ctx,
      args.domain_id === undefined ? sql`true` : sql`t.domain_id = ${args.domain_id}`,
    );
    const visible: MailTemplate[] = [];
    for (const r of all) if (await mayChange(ctx, auth, r.domain_id)) visible.push(toTemplate(r));
    return { data: visible };
  },

  'mail_template.create': async (ctx, args) => {
    const auth = await assertMayChange(ctx, args.domain_id);
    const taken = await rows(
      ctx,
      sql`t.mail_type = ${args.mail_type_id} and t.domain_id is not distinct from ${args.domain_id}`,
    );
    if (taken.length) throw new AppError('template_type_exists');
    const r = await sql<{ id: number }>`
      insert into mail_templates (project_id, mail_type, domain_id, subject, body, created_by, updated_at)
      values (${auth.projectId}, ${args.mail_type_id}, ${args.domain_id}, ${args.subject}, ${args.body}, ${auth.userId}, ${ctx.app.clock.now()})
      returning id`.execute(ctx.app.db);
    const id = r.rows[0]!.id;
    await changed(ctx, 'create', { id, after: args });
    return { data: toTemplate(await one(ctx, id)) };
  },

  'mail_template.update': async (ctx, args) => {
    const before = await one(ctx, args.id);
    await assertMayChange(ctx, before.domain_id);
    const subject = args.subject ?? before.subject;
    const body = args.body ?? before.body;
    assertPlaceholders(before.mail_type, subject, body);
    await sql`update mail_templates set subject = ${subject}, body = ${body}, updated_at = ${ctx.app.clock.now()}
      where id = ${args.id}`.execute(ctx.app.db);
    await changed(ctx, 'update', { id: args.id, before: { subject: before.subject }, after: { subject } });
    return { data: toTemplate(await one(ctx, args.id)) };
  },

  'mail_template.delete': async (ctx, args) => {
    const before = await one(ctx, args.id);
    await assertMayChange(ctx, before.domain_id);
    await sql`delete from mail_templates where id = ${args.id}`.execute(ctx.app.db);
    await changed(ctx, 'delete', { id: args.id, before: { mail_type: before.mail_type } });
    return { ok: true as const };
  },

  'mail_template.preview': async (_ctx, args) => ({
    subject: fill(args.subject, EXAMPLES),
    text: fill(args.body, EXAMPLES),
  }),

  'mail_template.send_preview': async (ctx, args) => {
    const auth = signedIn(ctx);
    await enforceMailTarget(ctx.app, args.email, ctx.caller.ip);
    await ctx.app.mailer.send({
      projectId: auth.projectId,
      to: args.email,
      subject: fill(args.subject, EXAMPLES),
      text: fill(args.body, EXAMPLES),
    });
    return { ok: true as const };
  },
} satisfies SomeHandlers;
