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

/**
 * First start: a default project and its administrator. The password comes from LINTEL_ADMIN_PASSWORD, or
 * is generated and handed back so the caller prints it once to the terminal (never to the log).
 */
export async function bootstrap(
  db: Kysely<DB>,
  opts: { adminLogin: string; adminPassword?: string },
): Promise<{ created: boolean; generatedPassword?: string }> {
  const existing = await db.selectFrom('projects').select('id').limit(1).executeTakeFirst();
  if (existing) return { created: false };
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
  });
  return { created: true, generatedPassword: opts.adminPassword ? undefined : password };
}
