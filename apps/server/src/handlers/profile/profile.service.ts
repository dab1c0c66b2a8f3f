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
    profile: { ...DefaultProfileSettings, ...stored, notification_settings: settingsOf(row.profile) },
    license_info: await licenceInfo(
      app.db,
      row.project_id,
      domains.map((d) => d.id),
      app.clock.now(),
    ),
  };
}
