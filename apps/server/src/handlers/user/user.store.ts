import { CompiledQuery, sql, type Kysely, type RawBuilder } from 'kysely';
import { ProfileChangedEvent } from '../../events/define';
import { userResource, type User } from '@lintel/commands';
import type { DB } from '../../db/schema';
import { PREPARED, preparedIds } from '../../db/database';
import { AppError } from '../../errors';
import { hashPassword } from '../../auth/crypto';
import {
  assertRelated,
  ownerScopeSql,
  relationColumn,
  relationAggregate,
  relationsOf,
  writeRelations,
} from '../../engine/relations';
import type { FamilyStore } from '../../engine/family';
import { sendInvitation } from '../registration/codes';
import { assertUserLimit } from '../../licensing/limits';
import {
  assertAssignableGroups,
  assertAuthorityOverUser,
  assertMayChangeRole,
  assertMayGrantRole,
  assertMayTakeOver,
  assertNotLastAdministrator,
} from '../../engine/grants';
import { assertNoCrossAfterWrite, lockIdentities } from '../../auth/identities';
import { assertSipNumberChoice } from '../profile/sip-number-choice';

/** The user's groups and markers, declared in `userResource.refs` (join tables the generic parts read and write). */
const relation = (key: 'domains' | 'markers') => relationsOf(userResource).find((r) => r.key === key)!;
const placedScope = ownerScopeSql(userResource);

export const DefaultUserProfile: User['profile'] = {
  phone: '',
  address: '',
  // nothing: the browser's own zone (the CLI: the terminal's) until the user chooses one (issue 25, item 2)
  time_zone: '',
  sip_number_id: null,
  identifier_format: 'dec',
  time_format: 'DD-MM-YYYY',
};

/** A row of `loadUsers`' statement. */
interface UserRow {
  id: number;
  login: string;
  name: string;
  description: string;
  email: string | null;
  role_id: number;
  role_name: string;
  avatar_url: string | null;
  elevator_access_disabled: boolean;
  profile: Record<string, unknown>;
  activated: boolean;
  is_invited: boolean;
  is_group_admin: boolean;
  created_at: Date;
  created_by_id: number | null;
  created_by_name: string | null;
  domains: User['domains'];
  markers: User['markers'];
}

/**
 * `loadUsers`' statement, the same text every time (its one parameter: the ids, `$1`): the groups and
 * markers of all the rows read in one grouped subquery each and joined, not a subquery per row (the
 * backends' CPU for a 20-row page's records about a fifth less: docs/decisions.md, the users list's fixed cost).
 */
const usersStatement = (ids: RawBuilder<unknown>) => sql`${sql.raw(PREPARED)}
    select t.id, a.login, t.name, t.description, a.email, r.id as role_id, r.name as role_name, t.avatar_url,
      t.elevator_access_disabled, t.profile, (a.activated_at is not null) as activated, t.is_invited, t.is_group_admin,
      t.created_at, cu.id as created_by_id, cu.name as created_by_name,
      coalesce(d.value, '[]'::json) as domains, coalesce(m.value, '[]'::json) as markers
    from users t
    join accounts a on a.id = t.account_id
    join roles r on r.id = t.role_id
    left join users cu on cu.id = t.created_by
    left join ${relationAggregate(relation('domains'), ids)} d on d.owner = t.id
    left join ${relationAggregate(relation('markers'), ids)} m on m.owner = t.id
    where t.id = any(${ids})`;

/** The statement's text, compiled once (a list page pays no Kysely compile for its records). */
let usersSql: string | undefined;

/**
 * The records of these users, in the order of `ids`, in one statement: their groups and markers come as JSON
 * arrays from the same statement (a list page pays one round trip for its records, not three; a round trip
 * is most of what a short statement costs, on PostgreSQL and even more on PGlite).
 */
export async function loadUsers(q: Kysely<DB>, ids: readonly number[]): Promise<User[]> {
  if (ids.length === 0) return [];
  usersSql ??= usersStatement(sql.raw('$1::int[]')).compile(q).sql;
  const rows = await q.executeQuery<UserRow>(CompiledQuery.raw(usersSql, [preparedIds(ids)]));
  const byId = new Map(rows.rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => {
    const r = byId.get(id);
    if (!r) return [];
    return [
      {
        id: r.id,
        login: r.login,
        name: r.name,
        description: r.description,
        email: r.email,
        role: { id: r.role_id, name: r.role_name },
        domains: r.domains,
        markers: r.markers,
        avatar_url: r.avatar_url,
        elevator_access_disabled: r.elevator_access_disabled,
        profile: { ...DefaultUserProfile, ...r.profile } as User['profile'],
        is_activated: r.activated,
        is_invited: r.is_invited,
        is_group_admin: r.is_group_admin,
        created_at: r.created_at.toISOString(),
        created_by_user:
          r.created_by_id !== null ? { id: r.created_by_id, name: r.created_by_name ?? '' } : null,
      },
    ];
  });
}

/**
 * The same records as `loadUsers` as NDJSON built by the database: one text of their JSON lines, each ended
 * by a line break, in the order of `ids` (ids no longer there have none): what an export writes
 * (`engine/export.ts`). The server neither parses the rows' columns nor builds and stringifies an object per
 * user — at a million users most of its time (bench/cli-import). The groups and markers of the whole batch
 * are aggregated once (`relationAggregate`), not in a subquery per user: a third less of the database's time.
 * The same values as `loadUsers` (the profile over the defaults, `created_at` as `toISOString` writes it:
 * UTC, milliseconds truncated); keys of `profile` in jsonb's order. JSON text has no raw line break.
 */
export async function loadUserLines(q: Kysely<DB>, ids: readonly number[]): Promise<string> {
  if (ids.length === 0) return '';
  const batch = sql`cast(${sql.val(preparedIds(ids))} as int[])`;
  const rows = await sql<{ id: number; line: string }>`${sql.raw(PREPARED)}
    select t.id, json_build_object('id', t.id, 'login', a.login, 'name', t.name, 'description', t.description,
      'email', a.email, 'role', json_build_object('id', r.id, 'name', r.name),
      'domains', coalesce(d.value, '[]'::json),
      'markers', coalesce(m.value, '[]'::json),
      'avatar_url', t.avatar_url, 'elevator_access_disabled', t.elevator_access_disabled,
      'profile', cast(${JSON.stringify(DefaultUserProfile)} as jsonb) || t.profile,
      'is_activated', a.activated_at is not null, 'is_invited', t.is_invited, 'is_group_admin', t.is_group_admin,
      'created_at', to_char(t.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      'created_by_user', case when cu.id is null then null
        else json_build_object('id', cu.id, 'name', coalesce(cu.name, '')) end)::text as line
    from users t
    join accounts a on a.id = t.account_id
    join roles r on r.id = t.role_id
    left join users cu on cu.id = t.created_by
    left join ${relationAggregate(relation('domains'), batch)} d on d.owner = t.id
    left join ${relationAggregate(relation('markers'), batch)} m on m.owner = t.id
    where t.id = any(${batch})`.execute(q);
  const byId = new Map(rows.rows.map((r) => [Number(r.id), r.line]));
  let text = '';
  for (const id of ids) {
    const line = byId.get(id);
    if (line !== undefined) text += `${line}\n`;
  }
  return text;
}

/**
 * Logins and e-mails are one namespace for sign-in (a login may be typed where an e-mail is, and back): a
 * login may equal no other account's login or e-mail, an e-mail no other account's e-mail or login. The
 * keys are locked for the transaction (auth/identities.ts), so two accounts taking the same name at once
 * cannot both pass, nor one beside an import.
 */
async function assertFreeLogin(
  q: Kysely<DB>,
  login: string | undefined,
  email: string | null | undefined,
  exceptAccount?: number,
) {
  await lockIdentities(q, [login, email]);
  const heldBy = async (key: string) =>
    q
      .selectFrom('accounts')
      .select('id')
      .where((eb) => eb.or([eb(sql`lower(login)`, '=', key), eb(sql`lower(email)`, '=', key)]))
      .$if(exceptAccount !== undefined, (qb) => qb.where('id', '!=', exceptAccount!))
      .limit(1)
      .executeTakeFirst();
  if (login && (await heldBy(login.toLowerCase())))
    throw new AppError('login_already_used', { field: 'login' });
  if (email && (await heldBy(email.toLowerCase())))
    throw new AppError('email_already_used', { field: 'email' });
}

/** The markers a write names are the project's (`invalid_related_entity` naming the others). */
const assertMarkers = (q: Kysely<DB>, projectId: number, ids: readonly number[]) =>
  assertRelated(q, userResource, projectId, { markers: ids });

/*
 * A user keeps a store of his own for what is particular to people, not for his relations (his groups and
 * markers come from the declaration): his account (login, e-mail, password) in another table shared between
 * projects, the authority rules over roles and groups (engine/grants.ts, a group administrator's
 * assignable groups rather than the create scope), his own record always his to see and edit, the last
 * administrator kept, and the invitation e-mailed after the create.
 */

/** What a user may change on his own record without "edit all". */
const SELF_EDITABLE = new Set(['name', 'description', 'email', 'profile']);

export const userStore: FamilyStore<typeof userResource> = {
  resource: userResource,
  entity: 'user',
  // a left join to a unique key: the planner drops it when a query does not read the account
  from: sql`users t left join accounts a on a.id = t.account_id`,
  // lists join the account only when a filter, the search or the sort reads it
  base: sql`users t`,
  joins: { a: sql`left join accounts a on a.id = t.account_id` },
  searchJoins: ['a'],
  filterable: userResource.filterable,
  sortable: userResource.sortable,
  columns: {
    id: { expr: sql`t.id` },
    login: { expr: sql`a.login`, joins: ['a'] },
    name: { expr: sql`t.name` },
    email: { expr: sql`a.email`, joins: ['a'] },
    description: { expr: sql`t.description` },
    role: { expr: sql`t.role_id` },
    domains: relationColumn(relation('domains')),
    markers: relationColumn(relation('markers')),
    // an unset phone shows as '' in the record (DefaultUserProfile), so filters read it as '' too
    phone: { expr: sql`coalesce(t.profile->>'phone', '')` },
    is_activated: { expr: sql`(a.activated_at is not null)`, joins: ['a'] },
    is_group_admin: { expr: sql`t.is_group_admin` },
    created_at: { expr: sql`t.created_at` },
  },
  search: [sql`t.name`, sql`a.login`, sql`a.email`],
  createdBy: sql`t.created_by`,
  scopes: {
    view: [
      { permission: 'users.view_all', scope: 'all' },
      { permission: 'users.view', scope: 'descendants' },
    ],
    edit: [
      { permission: 'users.edit_all', scope: 'all' },
      { permission: 'users.edit_profile', scope: 'self' },
    ],
    delete: [{ permission: 'users.delete', scope: 'all' }],
    ownAlwaysVisible: true,
    // "editing a user is allowed for oneself" (spec part 2 §6): one's own record, password and avatar
    always: { view: ['self'], edit: ['self'] },
  },
  // the declaration's placement (his groups, his creator), and his own record
  async scopeSql(scope, caller) {
    if (scope === 'self') return sql<boolean>`t.id = ${caller.userId}`;
    return placedScope(scope, caller);
  },
  load: loadUsers,
  loadLines: loadUserLines,
  // the groups a user may be given are the grants' (assertAssignableGroups, checked by create and update)
  placement: async () => {},

  async create(trx, args, ctx) {
    const { caller } = ctx;
    await assertAssignableGroups(trx, caller, args.domains);
    await assertMayGrantRole(trx, caller, args.role);
    await assertMarkers(trx, caller.projectId, args.markers ?? []);
    await assertUserLimit(trx, args.domains, null);
    // a new user has no number yet: the one named must be free
    await assertSipNumberChoice(trx, {
      projectId: caller.projectId,
      permissions: caller.auth.permissions,
      userId: 0,
      self: false,
      numberId: args.profile?.sip_number_id,
      before: null,
    });
    if (args.send_registration_link && !args.password && !args.email)
      throw new AppError('email_required_for_registration', { field: 'email' });
    await assertFreeLogin(trx, args.login, args.email);
    const account = await trx
      .insertInto('accounts')
      .values({
        login: args.login,
        email: args.email || null,
        password_hash: args.password ? await hashPassword(args.password) : null,
        activated_at: args.password ? ctx.app.clock.now() : null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const user = await trx
      .insertInto('users')
      .values({
        project_id: caller.projectId,
        account_id: account.id,
        role_id: args.role,
        name: args.name,
        description: args.description ?? '',
        profile: JSON.stringify({ ...DefaultUserProfile, ...args.profile }),
        elevator_access_disabled: args.elevator_access_disabled ?? false,
        is_group_admin: args.is_group_admin ?? false,
        created_by: caller.userId,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await writeRelations(trx, userResource, user.id, { domains: args.domains, markers: args.markers }, false);
    // last: across the two columns, beside an import (auth/identities.ts)
    await assertNoCrossAfterWrite(trx, account.id);
    return user.id;
  },

  async afterCreate(ctx, id, args) {
    // the person chooses a password through the e-mailed link (spec: send_registration_link defaults true)
    if (args.send_registration_link && !args.password) await sendInvitation(ctx.app, id);
  },

  async update(trx, id, args, ctx, before) {
    const { caller } = ctx;
    if (!caller.has('users.edit_all')) {
      const beyond = Object.keys(args).filter((k) => !SELF_EDITABLE.has(k));
      if (beyond.length) throw new AppError('method_prohibited', { reason: 'edit_all', fields: beyond });
    }
    await assertSipNumberChoice(trx, {
      projectId: caller.projectId,
      permissions: caller.auth.permissions,
      userId: id,
      self: id === caller.userId,
      numberId: args.profile?.sip_number_id,
      before: before.profile.sip_number_id,
    });
    const accountId = (
      await trx.selectFrom('users').select('account_id').where('id', '=', id).executeTakeFirstOrThrow()
    ).account_id;
    if (
      (args.login !== undefined && args.login !== before.login) ||
      (args.email !== undefined && (args.email || null) !== before.email)
    )
      await assertMayTakeOver(trx, caller, id);
    if (args.role !== undefined && args.role !== before.role.id) {
      await assertMayChangeRole(trx, caller, args.role);
      await assertNotLastAdministrator(trx, caller.projectId, id);
    }
    if (args.domains) {
      await assertAssignableGroups(trx, caller, args.domains);
      await assertUserLimit(trx, args.domains, id);
    }
    if (args.markers) await assertMarkers(trx, caller.projectId, args.markers);
    await assertFreeLogin(trx, args.login, args.email, accountId);
    if (args.login !== undefined || args.email !== undefined)
      await trx
        .updateTable('accounts')
        .set({
          ...(args.login !== undefined ? { login: args.login } : {}),
          ...(args.email !== undefined ? { email: args.email || null } : {}),
        })
        .where('id', '=', accountId)
        .execute();
    await trx
      .updateTable('users')
      .set({
        ...(args.name !== undefined ? { name: args.name } : {}),
        ...(args.description !== undefined ? { description: args.description } : {}),
        ...(args.role !== undefined ? { role_id: args.role } : {}),
        ...(args.elevator_access_disabled !== undefined
          ? { elevator_access_disabled: args.elevator_access_disabled }
          : {}),
        ...(args.is_group_admin !== undefined ? { is_group_admin: args.is_group_admin } : {}),
        ...(args.profile ? { profile: JSON.stringify({ ...before.profile, ...args.profile }) } : {}),
        updated_at: ctx.app.clock.now(),
      })
      .where('id', '=', id)
      .execute();
    // the user's consoles reload the profile: the menu and the permissions follow the new role at once
    if (args.role !== undefined && args.role !== before.role.id)
      await ctx.app.outbox.emit(trx, ProfileChangedEvent, { userId: id, projectId: caller.projectId });
    await writeRelations(trx, userResource, id, { domains: args.domains, markers: args.markers }, true);
    // last: across the two columns, beside an import (auth/identities.ts)
    if (args.login !== undefined || args.email !== undefined) await assertNoCrossAfterWrite(trx, accountId);
  },

  /** authority over the user as he is: his current role and groups (create checks only the new values) */
  async authority(q, id, ctx) {
    await assertAuthorityOverUser(q, ctx.caller, id);
  },

  async remove(trx, id, ctx) {
    if (id === ctx.caller.userId) return { reason: 'self' };
    await assertNotLastAdministrator(trx, ctx.caller.projectId, id);
    const { account_id } = await trx
      .selectFrom('users')
      .select('account_id')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    await trx.deleteFrom('users').where('id', '=', id).execute();
    const rest = await trx
      .selectFrom('users')
      .select('id')
      .where('account_id', '=', account_id)
      .limit(1)
      .executeTakeFirst();
    if (!rest) await trx.deleteFrom('accounts').where('id', '=', account_id).execute();
    return null;
  },
};
