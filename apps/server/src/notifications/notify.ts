import { sql, type Kysely, type Transaction } from 'kysely';
import {
  DefaultNotificationSettings,
  NotificationTypeTraits,
  type NotificationData,
  type NotificationRecord,
  type NotificationType,
} from '@lintel/core';
import type { ServerContext } from '../context';
import type { DB } from '../db/schema';
import { NotificationCreatedEvent } from '../events/define';

type Q = Transaction<DB> | Kysely<DB>;

export interface NotificationRow {
  id: number;
  type: string;
  data: Record<string, unknown>;
  created_at: Date | string;
  updated_at: Date | string;
  read_at: Date | string | null;
  significance: string;
  icon: string;
  color: string;
  popup_action: string;
  sound: string | null;
}

const iso = (d: Date | string) => (d instanceof Date ? d : new Date(d)).toISOString();

/** A stored row as the Notification entity of spec part 1 §3. */
export function toRecord(r: NotificationRow): NotificationRecord {
  return {
    id: r.id,
    type: r.type as NotificationType,
    data: r.data as NotificationData,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
    read_at: r.read_at === null ? null : iso(r.read_at),
    significance: r.significance as NotificationRecord['significance'],
    icon: r.icon,
    color: r.color,
    popup_action: r.popup_action as NotificationRecord['popup_action'],
    sound: r.sound,
  };
}

export interface Notice {
  projectId: number;
  /** user ids; those not of the project, and duplicates, are left out */
  recipients: readonly number[];
  type: NotificationType;
  data: NotificationData;
}

/**
 * The one way anything notifies people: stores one notification per recipient (with the type's
 * significance, icon, colour, popup action and sound) in the caller's transaction, and emits
 * NotificationCreatedEvent on each recipient's `private-users.{id}` through the outbox, so every console of
 * theirs hears of it on whichever instance it is connected, once the transaction commits. ACS notifications
 * (identifiers used) reach only the users whose settings say `acs: true`. Returns the ids stored.
 */
export async function notify(
  app: Pick<ServerContext, 'outbox' | 'clock'>,
  trx: Q,
  n: Notice,
): Promise<number[]> {
  return notifyMany(app, trx, [n]);
}

/**
 * `notify` for several notices of one project at once, in a constant number of statements however many
 * notices and recipients (issue 26 item 1): the recipients read once, every notification in one multi-row
 * insert, their events in one `emitMany`. Returns the ids stored, notice by notice, recipient by recipient.
 */
export async function notifyMany(
  app: Pick<ServerContext, 'outbox' | 'clock'>,
  trx: Q,
  notices: readonly Notice[],
  /** the recipients as the caller read them already (their id, project and profile): not read again */
  known?: readonly { id: number; project_id: number; profile: unknown }[],
): Promise<number[]> {
  const wanted = [...new Set(notices.flatMap((n) => n.recipients))];
  if (!wanted.length) return [];
  const projects = [...new Set(notices.map((n) => n.projectId))];
  const users =
    known ??
    (await trx
      .selectFrom('users')
      .select(['id', 'project_id', 'profile'])
      .where('project_id', 'in', projects)
      .where('id', 'in', wanted)
      .orderBy('id')
      .execute());
  const now = app.clock.now();
  const rows = notices.flatMap((n) => {
    const traits = NotificationTypeTraits[n.type];
    const to = new Set(n.recipients);
    return users
      .filter((u) => to.has(u.id) && u.project_id === n.projectId)
      .filter((u) => traits.category !== 'acs' || settingsOf(u.profile).acs)
      .map((u) => ({
        project_id: n.projectId,
        user_id: u.id,
        type: n.type,
        category: traits.category,
        significance: traits.significance,
        icon: traits.icon,
        color: traits.color,
        popup_action: traits.popup_action,
        sound: traits.sound,
        data: JSON.stringify(n.data),
        created_at: now,
        updated_at: now,
      }));
  });
  if (!rows.length) return [];
  const stored = await trx
    .insertInto('notifications')
    .values(rows)
    .returning([
      'id',
      'user_id',
      'project_id',
      'type',
      'data',
      'created_at',
      'updated_at',
      'read_at',
      'significance',
      'icon',
      'color',
      'popup_action',
      'sound',
    ])
    .execute();
  // identities are drawn in the order of the rows: ascending ids are that order
  stored.sort((a, b) => a.id - b.id);
  await app.outbox.emitMany(
    trx,
    NotificationCreatedEvent,
    stored.map((row) => ({ userId: row.user_id, projectId: row.project_id, notification: toRecord(row) })),
  );
  return stored.map((row) => row.id);
}

/** A user's notification settings as stored in their profile (absent or unreadable: the defaults). */
export function settingsOf(profile: unknown): { acs: boolean } {
  const s = (profile as { notification_settings?: { acs?: unknown } } | null)?.notification_settings;
  return { acs: typeof s?.acs === 'boolean' ? s.acs : DefaultNotificationSettings.acs };
}

/**
 * The users to tell about a device of group `domainId`: the `device_status_notify` entries of the group and
 * every group above it (spec part 1 §3 Group) with the flag `which` set.
 */
export async function deviceStatusRecipients(
  q: Q,
  domainId: number,
  which: 'notify_about_offline_device' | 'notify_about_device_task_failed',
): Promise<number[]> {
  const r = await sql<{ user_id: number }>`
    with recursive up(id) as (
      select ${domainId}::int
      union
      select d.parent_id from domains d join up on d.id = up.id where d.parent_id is not null
    )
    select distinct (e->>'user_id')::int as user_id
    from domains d join up on d.id = up.id, jsonb_array_elements(d.device_status_notify) e
    where (e->>${which})::boolean is true
    order by 1`.execute(q);
  return r.rows.map((x) => x.user_id);
}
