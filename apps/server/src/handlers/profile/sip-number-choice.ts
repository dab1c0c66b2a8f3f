import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema';
import { AppError } from '../../errors';

/** Who may see virtual numbers: what naming one for another user needs. */
const SEE_NUMBERS = [
  'sip_numbers.view',
  'sip_numbers.view_all',
  'sip_numbers.view_descendant',
  'sip_numbers.edit',
];

/**
 * A profile's `sip_number_id` may name only a number its user may use (issue 22 item 3): a number of the
 * project, free — neither owned by another user nor named by another user's profile (`virtual_number_not_free`)
 * —, named by someone who may see numbers; and by the user himself only when the number is his (its owner is
 * him) or he may edit numbers. The web dialer signs in with what the profile names (`sip.profile` gives the
 * number's HA1): without this, anyone could set another's number on himself and register as it.
 */
export async function assertSipNumberChoice(
  q: Kysely<DB>,
  opts: {
    projectId: number;
    permissions: ReadonlySet<string>;
    /** the user whose profile names it */
    userId: number;
    /** the caller edits his own profile */
    self: boolean;
    numberId: number | null | undefined;
    /** what the profile named before: unchanged is always allowed */
    before: number | null | undefined;
  },
): Promise<void> {
  const { numberId } = opts;
  if (numberId === undefined || numberId === null || numberId === opts.before) return;
  const row = (
    await sql<{
      user_id: number | null;
      taken_by: number | null;
    }>`select n.user_id, (select u.id from users u where u.project_id = n.project_id and u.id <> ${opts.userId}
          and jsonb_typeof(u.profile->'sip_number_id') = 'number' and (u.profile->>'sip_number_id')::numeric = n.id
          limit 1) as taken_by
        from sip_numbers n where n.id = ${numberId} and n.project_id = ${opts.projectId}`.execute(q)
  ).rows[0];
  if (!row) throw new AppError('invalid_related_entity', { entity: 'sip_numbers', ids: [numberId] });
  if ((row.user_id !== null && row.user_id !== opts.userId) || row.taken_by !== null)
    throw new AppError('virtual_number_not_free', { field: 'profile.sip_number_id' });
  const mayChoose = opts.self
    ? row.user_id === opts.userId || opts.permissions.has('sip_numbers.edit')
    : SEE_NUMBERS.some((p) => opts.permissions.has(p));
  if (!mayChoose) throw new AppError('method_prohibited', { field: 'profile.sip_number_id' });
}
