import { sql } from 'kysely';
import {
  inPeriod,
  LicenceNotifyEveryDays,
  periodWindow,
  type GroupLicenseSettings,
  type LicenceNotifyMode,
} from '@lintel/core';
import type { ServerContext } from '../context';
import { composeMail } from '../mail/templates';

const DAY = 86_400_000;
const dayOf = (ms: number) => Math.floor(ms / DAY);

/** Who hears of a group's licences: those who may see them (spec part 2 §6, licences by scope). */
const ALL = ['licenses.view_all', 'licenses.edit_count_all'];
const SELF = ['licenses.view_self', 'licenses.edit_count_self'];
const DESCENDANT = ['licenses.view_descendant', 'licenses.edit_count_descendant'];

/**
 * The groups' licence notifications (spec part 1 §3 notifications {period, notify_before}), run by the daily
 * licence check: a group with its settings on and notifications not `never` whose licence in force ends
 * within `notify_before` days (the one ending first) is told, on the group's schedule (once: once per end;
 * everyday, every week, every 30 days: that long after the last), to each user with an e-mail address who
 * may see the group's licences: licences of all groups anywhere, of his own groups when it is one of them,
 * of the groups below his own when it is below one. Returns how many mails were queued.
 */
export async function runGroupLicenceNotifications(app: ServerContext, projectId: number): Promise<number> {
  const now = app.clock.now().getTime();
  const groups = await sql<{ id: number; name: string; license_settings: Partial<GroupLicenseSettings> }>`
    select id, name, license_settings from domains
    where project_id = ${projectId} and license_settings->>'is_enabled' = 'true'
      and coalesce(license_settings->'notifications'->>'period', 'never') <> 'never'
    order by id`.execute(app.db);
  let sent = 0;
  for (const g of groups.rows) {
    const { period, notify_before } = g.license_settings.notifications!;
    const ends = (g.license_settings.licenses ?? [])
      .filter((l) => l.is_active && inPeriod(l.restrict_period, now))
      .map((l) => periodWindow(l.restrict_period)[1])
      .filter((end) => Number.isFinite(end));
    if (!ends.length) continue;
    const end = Math.min(...ends);
    const days = Math.floor((end - now) / DAY);
    if (days > notify_before) continue;
    const key = `will_expire:${end}`;
    const state = await sql<{ last_notified_at: Date; last_key: string }>`
      select last_notified_at, last_key from group_licence_notify where domain_id = ${g.id}`.execute(app.db);
    const last = state.rows[0];
    const every = LicenceNotifyEveryDays[period as LicenceNotifyMode];
    const due =
      !last ||
      last.last_key !== key ||
      (every !== null && dayOf(now) - dayOf(last.last_notified_at.getTime()) >= every);
    if (!due) continue;
    const people = await sql<{
      email: string;
      locale: string;
      name: string;
      permissions: string[];
      scope: string;
    }>`
      with recursive up(id) as (
        select parent_id from domains where id = ${g.id} and parent_id is not null
        union
        select d.parent_id from domains d join up on d.id = up.id where d.parent_id is not null
      )
      select a.email, a.locale, u.name, r.permissions,
        case when exists (select 1 from user_domains ud where ud.user_id = u.id and ud.domain_id = ${g.id}) then 'self'
             when exists (select 1 from user_domains ud join up on up.id = ud.domain_id where ud.user_id = u.id) then 'descendant'
             else 'other' end as scope
      from users u join accounts a on a.id = u.account_id join roles r on r.id = u.role_id
      where u.project_id = ${projectId} and a.email is not null
      order by u.id`.execute(app.db);
    const lastDay = new Date(end - DAY).toISOString().slice(0, 10);
    for (const p of people.rows) {
      const may = (codes: string[]) => codes.some((c) => p.permissions.includes(c));
      if (!(may(ALL) || (p.scope === 'self' && may(SELF)) || (p.scope === 'descendant' && may(DESCENDANT))))
        continue;
      const params = {
        name: p.name,
        group: g.name,
        days,
        to: lastDay,
        link: `${app.config.publicUrl}/groups/${g.id}/edit`,
      };
      // the group the mail is about writes it (its template, or one above it)
      const mail = await composeMail(app, {
        projectId,
        type: 'group_licence_will_expire',
        locale: p.locale,
        params,
        groupId: g.id,
      });
      await app.mailer.send({ projectId, to: p.email, subject: mail.subject, text: mail.text });
      sent++;
    }
    await sql`
      insert into group_licence_notify (domain_id, last_notified_at, last_key) values (${g.id}, ${new Date(now)}, ${key})
      on conflict (domain_id) do update set last_notified_at = excluded.last_notified_at, last_key = excluded.last_key`.execute(
      app.db,
    );
  }
  return sent;
}
