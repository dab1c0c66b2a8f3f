import { AllPermissions } from '@lintel/core';
import type { Kysely } from 'kysely';
import type { DB } from './db/schema';
import { generatePassword, hashPassword } from './auth/crypto';

/** Roles every project starts with. Self-registered people get the installer or private-client role. */
export const BuiltInRoles = {
  administrator: { name: 'Administrator', description: 'Every permission' },
  installer: {
    name: 'Installer',
    description: 'Dealers and installers who registered themselves',
    permissions: [
      'users.view',
      'users.create',
      'users.edit_profile',
      'domains.create_descendant',
      'devices.view',
      'devices.create',
      'devices.edit',
    ],
  },
  private: {
    name: 'Private client',
    description: 'Private end users who registered themselves',
    permissions: ['users.edit_profile'],
  },
} as const;

export async function createProject(
  db: Kysely<DB>,
  p: { uid: string; name: string; description?: string },
): Promise<{ projectId: number; adminRoleId: number; rootDomainId: number }> {
  return db.transaction().execute(async (trx) => {
    const project = await trx
      .insertInto('projects')
      .values({ uid: p.uid, name: p.name, description: p.description ?? '' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const admin = await trx
      .insertInto('roles')
      .values({
        project_id: project.id,
        name: BuiltInRoles.administrator.name,
        description: BuiltInRoles.administrator.description,
        permissions: JSON.stringify(AllPermissions),
        is_system: true,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    for (const key of ['installer', 'private'] as const) {
      const r = BuiltInRoles[key];
      await trx
        .insertInto('roles')
        .values({
          project_id: project.id,
          name: r.name,
          description: r.description,
          permissions: JSON.stringify(r.permissions),
          is_system: true,
        })
        .execute();
    }
    await trx
      .updateTable('roles')
      .set({
        available_roles: JSON.stringify(
          (await trx.selectFrom('roles').select('id').where('project_id', '=', project.id).execute()).map(
            (r) => r.id,
          ),
        ),
      })
      .where('id', '=', admin.id)
      .execute();
    const root = await trx
      .insertInto('domains')
      .values({ project_id: project.id, name: p.name, parent_id: null })
      .returning('id')
      .executeTakeFirstOrThrow();
    return { projectId: project.id, adminRoleId: admin.id, rootDomainId: root.id };
  });
}

/** server_settings' key naming the administrator made at first start, kept until that account signs in */
export const FirstAdminKey = 'first_start_admin';

/**
 * First start: a default project and its administrator. The password comes from LINTEL_ADMIN_PASSWORD, or
 * is generated and handed back so the caller prints it to the terminal (never to the log).
 * When that password was generated, every start sets it again until the administrator has signed in once
 * (LINTEL_ADMIN_PASSWORD if given then, else a new one handed back): a first start that died before the
 * password was read does not lock the operator out (issue 25, item 1). The first sign-in is the audit log's
 * `login` of the account.
 */
export async function bootstrap(
  db: Kysely<DB>,
  opts: { adminLogin: string; adminPassword?: string },
): Promise<{ created: boolean; generatedPassword?: string }> {
  const existing = await db.selectFrom('projects').select('id').limit(1).executeTakeFirst();
  if (existing) return reissueFirstPassword(db, opts);
  const password = opts.adminPassword ?? generatePassword();
  const hash = await hashPassword(password);
  const { projectId, adminRoleId, rootDomainId } = await createProject(db, {
    uid: 'default',
    name: 'Default project',
    description: 'Created at first start',
  });
  await db.transaction().execute(async (trx) => {
    const account = await trx
      .insertInto('accounts')
      .values({ login: opts.adminLogin, email: null, password_hash: hash, activated_at: new Date() })
      .returning('id')
      .executeTakeFirstOrThrow();
    const user = await trx
      .insertInto('users')
      .values({ project_id: projectId, account_id: account.id, role_id: adminRoleId, name: 'Administrator' })
      .returning('id')
      .executeTakeFirstOrThrow();
    await trx.insertInto('user_domains').values({ user_id: user.id, domain_id: rootDomainId }).execute();
    await trx
      .insertInto('server_settings')
      .values({
        key: FirstAdminKey,
        value: JSON.stringify({ accountId: account.id, generated: opts.adminPassword === undefined }),
      })
      .execute();
  });
  return { created: true, generatedPassword: opts.adminPassword ? undefined : password };
}

async function reissueFirstPassword(
  db: Kysely<DB>,
  opts: { adminPassword?: string },
): Promise<{ created: boolean; generatedPassword?: string }> {
  const row = await db
    .selectFrom('server_settings')
    .select('value')
    .where('key', '=', FirstAdminKey)
    .executeTakeFirst();
  const marker = row?.value as { accountId?: unknown; generated?: unknown } | undefined;
  const accountId = Number(marker?.accountId);
  // only a password Lintel made is made again: one the operator gave (LINTEL_ADMIN_PASSWORD) is theirs, and
  // instances started with their own (tests' second instances on one database) must not take it over
  if (!row || !Number.isInteger(accountId) || marker?.generated !== true) return { created: false };
  const signedIn = await db
    .selectFrom('audit_events')
    .select('id')
    .where('action', '=', 'login')
    .where('entity', '=', 'account')
    .where('entity_id', '=', String(accountId))
    .limit(1)
    .executeTakeFirst();
  const account = await db.selectFrom('accounts').select('id').where('id', '=', accountId).executeTakeFirst();
  if (signedIn || !account) {
    await db.deleteFrom('server_settings').where('key', '=', FirstAdminKey).execute();
    return { created: false };
  }
  const password = opts.adminPassword ?? generatePassword();
  await db
    .updateTable('accounts')
    .set({ password_hash: await hashPassword(password) })
    .where('id', '=', accountId)
    .execute();
  return { created: false, generatedPassword: opts.adminPassword ? undefined : password };
}
