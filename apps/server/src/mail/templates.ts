import { sql } from 'kysely';
import type { MailType } from '@lintel/commands';
import type { ServerContext } from '../context';
import { serverT } from '../i18n';

/**
 * The text of a mail of a type (issue 24 item 5): the template of the nearest group up the recipient's
 * chain (`groupId`: one of the recipient's groups, or the group the mail is about), else the project's own
 * template of that type (no group), else the built-in text of the locales (namespace `mail`). Placeholders
 * `{{name}}` take the mail's values; one the template names and the mail lacks is left empty.
 */
export async function composeMail(
  app: ServerContext,
  opts: {
    projectId: number | null;
    type: MailType;
    locale: string | null;
    params: Record<string, unknown>;
    groupId?: number | null;
  },
): Promise<{ subject: string; text: string }> {
  if (opts.projectId !== null) {
    const r = await sql<{ subject: string; body: string }>`
      with recursive up as (
        select id, parent_id, 0 as depth from domains where id = ${opts.groupId ?? null}
        union all
        select d.id, d.parent_id, up.depth + 1 from domains d join up on d.id = up.parent_id
      )
      select t.subject, t.body from mail_templates t
      left join up on up.id = t.domain_id
      where t.project_id = ${opts.projectId} and t.mail_type = ${opts.type}
        and (t.domain_id is null or up.id is not null)
      order by (t.domain_id is null), up.depth
      limit 1`.execute(app.db);
    const t = r.rows[0];
    if (t) return { subject: fill(t.subject, opts.params), text: fill(t.body, opts.params) };
  }
  const t = serverT(opts.locale);
  return { subject: t(`${opts.type}.subject`, opts.params), text: t(`${opts.type}.text`, opts.params) };
}

/** `{{ name }}` → the value (empty when the mail has none). */
export function fill(text: string, params: Record<string, unknown>): string {
  return text.replace(/\{\{\s*([a-z_]+)\s*\}\}/g, (_, k: string) =>
    params[k] === undefined || params[k] === null ? '' : String(params[k]),
  );
}

/** The groups of a user (the first is the one their mails are written for). */
export async function groupOfUser(app: ServerContext, userId: number): Promise<number | null> {
  const r = await sql<{ domain_id: number }>`
    select domain_id from user_domains where user_id = ${userId} order by domain_id limit 1`.execute(app.db);
  return r.rows[0]?.domain_id ?? null;
}
