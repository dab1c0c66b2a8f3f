import { sql } from 'kysely';
import type { Profile } from '@lintel/core';
import type { ServerContext } from '../../context';
import { AppError } from '../../errors';
import { licenceInfo } from '../../licensing/licence';
import { settingsOf } from '../../notifications/notify';

export const DefaultProfileSettings = {
  address: '',
  phone: '',
  // nothing: the browser's own zone (the CLI: the terminal's) until the user chooses one (issue 25, item 2)
  time_zone: '',
  time_format: 'DD-MM-YYYY',
  identifier_format: 'dec',
  sip_number: null,
  is_app_popup_active: true,
  notification_settings: {},
} as const;

/**
 * The virtual number a user's profile names (`users.profile.sip_number_id`, in the user's project), with what
 * the web dialer signs in with; none when unset or gone.
 */
export async function userSipNumber(app: ServerContext, userId: number) {
  return app.db
    .selectFrom('users')
    .innerJoin('sip_numbers', (j) =>
      j.onRef('sip_numbers.project_id', '=', 'users.project_id').on(
        sql<boolean>`sip_numbers.id = case when jsonb_typeof(users.profile->'sip_number_id') = 'number'
            then (users.profile->>'sip_number_id')::numeric end`,
      ),
    )
    .select([
      'sip_numbers.number',
      'sip_numbers.name',
      'sip_numbers.password_ha1',
      'sip_numbers.ha1_realm',
      'sip_numbers.is_active',
    ])
    .where('users.id', '=', userId)
    .executeTakeFirst();
}

/** The Profile entity of spec part 1 §3 for one user in one project. */
export async function loadProfile(app: ServerContext, userId: number): Promise<Profile> {
  const row = await app.db
    .selectFrom('users')
    .innerJoin('accounts', 'accounts.id', 'users.account_id')
    .innerJoin('roles', 'roles.id', 'users.role_id')
    .innerJoin('projects', 'projects.id', 'users.project_id')
    .select([
      'users.id',
      'users.name',
      'users.profile',
      'users.is_invited',
      'users.avatar_url',
      'accounts.login',
      'accounts.email',
      'accounts.locale',
      'roles.id as role_id',
      'roles.name as role_name',
      'roles.permissions',
      'projects.id as project_id',
      'projects.uid as project_uid',
      'projects.name as project_name',
      'projects.description as project_description',
    ])
    .where('users.id', '=', userId)
    .executeTakeFirst();
  if (!row) throw new AppError('item_not_found');
  const domains = await app.db
    .selectFrom('user_domains')
    .innerJoin('domains', 'domains.id', 'user_domains.domain_id')
    .select(['domains.id', 'domains.name'])
    .where('user_domains.user_id', '=', userId)
    .orderBy('domains.name')
    .execute();
  const stored = row.profile as Partial<Profile['profile']>;
  return {
    id: row.id,
    login: row.login,
    email: row.email,
    name: row.name,
    locale: row.locale === 'ru' ? 'ru' : 'en',
    avatar_url: row.avatar_url,
    is_invited: row.is_invited,
    role: { id: row.role_id, name: row.role_name, permissions: row.permissions },
    domains,
    project: {
      id: row.project_id,
      uid: row.project_uid,
      name: row.project_name,
      description: row.project_description,
    },
    profile: {
      ...DefaultProfileSettings,
      ...stored,
      // the number the profile's sip_number_id names (spec: profile.sip_number), not a stored copy
      sip_number: (await userSipNumber(app, userId))?.number ?? null,
      notification_settings: settingsOf(row.profile),
    },
    license_info: await licenceInfo(
      app.db,
      row.project_id,
      domains.map((d) => d.id),
      app.clock.now(),
    ),
  };
}
