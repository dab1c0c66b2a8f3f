import { sql, type Transaction } from 'kysely';
import { addDemoDevices, writeDemoDevicesFile } from '../../devices/demo';
import { queueBrokerReconcile } from '../../devices/dynsec';
import type { DB } from '../../db/schema';
import { audit } from '../../audit/audit';
import { BuiltInRoles } from '../../bootstrap';
import { callerOf } from '../../engine/family';
import type { SomeHandlers } from '../../pipeline/handler';

/** First names with whether they are a woman's: Russian surnames take the feminine ending to match. */
const FIRST: [string, boolean][] = [
  ['Anna', true],
  ['Boris', false],
  ['Daria', true],
  ['Egor', false],
  ['Fyodor', false],
  ['Galina', true],
  ['Hanna', true],
  ['Igor', false],
  ['Julia', true],
  ['Kirill', false],
  ['Lena', true],
  ['Maxim', false],
  ['Nina', true],
  ['Oleg', false],
  ['Polina', true],
  ['Roman', false],
  ['Sofia', true],
  ['Timur', false],
  ['Ulyana', true],
  ['Viktor', false],
  ['Yana', true],
  ['Zakhar', false],
  ['Alice', true],
  ['Ben', false],
  ['Clara', true],
  ['David', false],
  ['Emma', true],
  ['Frank', false],
  ['Grace', true],
  ['Henry', false],
];
const LAST = [
  'Ivanov',
  'Petrov',
  'Smirnov',
  'Kuznetsov',
  'Popov',
  'Sokolov',
  'Lebedev',
  'Kozlov',
  'Novikov',
  'Morozov',
  'Volkov',
  'Pavlov',
  'Semenov',
  'Golubev',
  'Vinogradov',
  'Miller',
  'Schmidt',
  'Brown',
  'Wilson',
  'Taylor',
  'Anderson',
  'Thomas',
  'Moore',
  'Martin',
  'Jackson',
  'White',
  'Harris',
  'Clark',
  'Lewis',
  'Walker',
];

/** "Anna Ivanova", "Boris Ivanov", "Emma Brown": the first name's index, the surname's index. */
function personName(first: number, last: number): string {
  const [given, woman] = FIRST[first % FIRST.length]!;
  const surname = LAST[last % LAST.length]!;
  return `${given} ${woman && /(ov|ev|in)$/.test(surname) ? `${surname}a` : surname}`;
}

const DEMO_ADDRESS = 'demo';

async function rootGroup(trx: Transaction<DB>, projectId: number) {
  return trx
    .selectFrom('domains')
    .select('id')
    .where('project_id', '=', projectId)
    .where('parent_id', 'is', null)
    .orderBy('id')
    .limit(1)
    .executeTakeFirstOrThrow();
}

async function ensureRole(
  trx: Transaction<DB>,
  projectId: number,
  name: string,
  description: string,
  permissions: string[],
) {
  const found = await trx
    .selectFrom('roles')
    .select('id')
    .where('project_id', '=', projectId)
    .where('name', '=', name)
    .executeTakeFirst();
  if (found) return found.id;
  const row = await trx
    .insertInto('roles')
    .values({ project_id: projectId, name, description, permissions: JSON.stringify(permissions) })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

async function ensureType(trx: Transaction<DB>, projectId: number, type: string, name: string) {
  const found = await trx
    .selectFrom('domain_types')
    .select('id')
    .where('project_id', '=', projectId)
    .where('type', '=', type)
    .executeTakeFirst();
  if (found) return found.id;
  return (
    await trx
      .insertInto('domain_types')
      .values({ project_id: projectId, type, name })
      .returning('id')
      .executeTakeFirstOrThrow()
  ).id;
}

export const seedHandlers = {
  /**
   * "Riverside Residence": 4 buildings × 2 entrances × 30 apartments, one or two residents in each, a
   * concierge and a manager per building, markers. Nothing is added when it exists already. Accounts get
   * no password: an administrator sends registration links (no known passwords on a real server).
   */
  'seed.demo': async (ctx) => {
    const caller = callerOf(ctx);
    const projectId = caller.projectId;
    const existing = await ctx.app.db
      .selectFrom('domains')
      .select('id')
      .where('project_id', '=', projectId)
      .where('logic_address', '=', DEMO_ADDRESS)
      .executeTakeFirst();
    if (existing) return { created: false, groups: 0, users: 0, roles: 0, markers: 0, devices: 0 };
    const counts = await ctx.app.db.transaction().execute(async (trx) => {
      const root = await rootGroup(trx, projectId);
      const types = {
        complex: await ensureType(trx, projectId, 'complex', 'Residential complex'),
        building: await ensureType(trx, projectId, 'building', 'Building'),
        entrance: await ensureType(trx, projectId, 'entrance', 'Entrance'),
        apartment: await ensureType(trx, projectId, 'apartment', 'Apartment'),
      };
      const roles = {
        resident: await ensureRole(trx, projectId, 'Resident', 'Lives in the complex', [
          ...BuiltInRoles.private.permissions,
        ]),
        concierge: await ensureRole(trx, projectId, 'Concierge', 'Answers door-panel calls', [
          'users.view',
          'calls.call_all',
          'calls.concierge_receive',
          'calls.history',
          'calls.can_intercept_call_like_concierge',
        ]),
        manager: await ensureRole(trx, projectId, 'Building manager', 'Runs a building', [
          'users.view',
          'users.create',
          'users.edit_all',
          'domains.create_descendant',
          'domains.edit_descendant',
          'markers.view',
          'markers.apply_to_user',
          'audit.view',
        ]),
      };
      const markers: number[] = [];
      for (const [name, color] of [
        ['VIP', '#c026d3'],
        ['New tenant', '#16a34a'],
        ['Debtor', '#dc2626'],
      ] as const) {
        const m = await trx
          .selectFrom('markers')
          .select('id')
          .where('project_id', '=', projectId)
          .where('name', '=', name)
          .executeTakeFirst();
        markers.push(
          m?.id ??
            (
              await trx
                .insertInto('markers')
                .values({ project_id: projectId, name, color })
                .returning('id')
                .executeTakeFirstOrThrow()
            ).id,
        );
      }
      const addGroup = async (name: string, parent: number, type: number, logic: string) =>
        (
          await trx
            .insertInto('domains')
            .values({
              project_id: projectId,
              parent_id: parent,
              name,
              logic_address: logic,
              domain_type_id: type,
              created_by: caller.userId,
            })
            .returning('id')
            .executeTakeFirstOrThrow()
        ).id;
      const complex = await addGroup('Riverside Residence', root.id, types.complex, DEMO_ADDRESS);
      let groups = 1;
      let devices = 0;
      let n = 0;
      const people: Array<{ login: string; name: string; role: number; domain: number; marker?: number }> =
        [];
      for (let b = 1; b <= 4; b++) {
        const building = await addGroup(`Building ${b}`, complex, types.building, `${b}`);
        groups++;
        // building 1 has devices: simulated ones, which `npm start` runs (devices/demo.ts)
        if (b === 1) {
          devices = await addDemoDevices(trx, projectId, building, caller.userId);
          // their accounts on an external broker (MQTT_DYNSEC)
          if (devices) await queueBrokerReconcile(ctx.app, trx);
        }
        people.push({
          login: `concierge.b${b}`,
          name: personName(b * 7, b * 3),
          role: roles.concierge,
          domain: building,
        });
        people.push({
          login: `manager.b${b}`,
          name: personName(b * 11, b * 5),
          role: roles.manager,
          domain: building,
        });
        for (let e = 1; e <= 2; e++) {
          const entrance = await addGroup(`Entrance ${e}`, building, types.entrance, `${b}.${e}`);
          groups++;
          const flats = await trx
            .insertInto('domains')
            .values(
              Array.from({ length: 30 }, (_, i) => ({
                project_id: projectId,
                parent_id: entrance,
                name: `Apartment ${(e - 1) * 30 + i + 1}`,
                logic_address: `${b}.${e}.${(e - 1) * 30 + i + 1}`,
                domain_type_id: types.apartment,
                created_by: caller.userId,
              })),
            )
            .returning('id')
            .execute();
          groups += flats.length;
          for (const flat of flats) {
            const residents = 1 + (n % 3 === 0 ? 1 : 0);
            for (let r = 0; r < residents; r++, n++)
              people.push({
                login: `resident.${String(n + 1).padStart(4, '0')}`,
                name: personName(n, Math.floor(n / FIRST.length) * 7 + n * 3 + r),
                role: roles.resident,
                domain: flat.id,
                marker: n % 17 === 0 ? markers[n % 3] : undefined,
              });
          }
        }
      }
      const accounts = await trx
        .insertInto('accounts')
        .values(
          people.map((p) => ({
            login: p.login,
            email: `${p.login}@riverside.example`,
            password_hash: null,
            activated_at: null,
          })),
        )
        .returning(['id', 'login'])
        .execute();
      const accountOf = new Map(accounts.map((a) => [a.login, a.id]));
      const users = await trx
        .insertInto('users')
        .values(
          people.map((p) => ({
            project_id: projectId,
            account_id: accountOf.get(p.login)!,
            role_id: p.role,
            name: p.name,
            created_by: caller.userId,
            is_group_admin: p.role === roles.manager,
          })),
        )
        .returning(['id', 'account_id'])
        .execute();
      const userOf = new Map(users.map((u) => [u.account_id, u.id]));
      await trx
        .insertInto('user_domains')
        .values(people.map((p) => ({ user_id: userOf.get(accountOf.get(p.login)!)!, domain_id: p.domain })))
        .execute();
      const marked = people.filter((p) => p.marker !== undefined);
      if (marked.length)
        await trx
          .insertInto('user_markers')
          .values(
            marked.map((p) => ({ user_id: userOf.get(accountOf.get(p.login)!)!, marker_id: p.marker! })),
          )
          .execute();
      await audit(trx, {
        projectId,
        userId: caller.userId,
        action: 'seed_demo',
        entity: 'group',
        entityId: complex,
        ip: ctx.caller.ip,
        data: { groups, users: people.length },
      });
      return { groups, users: people.length, roles: 3, markers: markers.length, devices };
    });
    await writeDemoDevicesFile(ctx.app).catch((err: unknown) =>
      ctx.app.log.warn({ err }, 'the demo devices file could not be written'),
    );
    return { created: true, ...counts };
  },

  /** Scale users `scale-0000001`… in the group "Scale test", inserted by the database itself. */
  'seed.scale': async (ctx, args) => {
    const caller = callerOf(ctx);
    const projectId = caller.projectId;
    const result = await ctx.app.db.transaction().execute(async (trx) => {
      const root = await rootGroup(trx, projectId);
      let scaleGroup = await trx
        .selectFrom('domains')
        .select('id')
        .where('project_id', '=', projectId)
        .where('logic_address', '=', 'scale')
        .executeTakeFirst();
      scaleGroup ??= await trx
        .insertInto('domains')
        .values({
          project_id: projectId,
          parent_id: root.id,
          name: 'Scale test',
          logic_address: 'scale',
          created_by: caller.userId,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const role = await trx
        .selectFrom('roles')
        .select('id')
        .where('project_id', '=', projectId)
        .where('name', '=', BuiltInRoles.private.name)
        .executeTakeFirstOrThrow();
      const have = Number(
        (
          await sql<{
            n: number;
          }>`select count(*)::int as n from users u join accounts a on a.id = u.account_id where u.project_id = ${projectId} and a.login like 'scale-%'`.execute(
            trx,
          )
        ).rows[0]!.n,
      );
      const from = have + 1;
      const to = args.users;
      if (to >= from) {
        const first = sql.val(FIRST.map(([given]) => given));
        const woman = sql.val(FIRST.map(([, w]) => w));
        const last = sql.val(LAST);
        await sql`insert into accounts (login, email, activated_at)
          select 'scale-' || lpad(i::text, 7, '0'), 'scale-' || lpad(i::text, 7, '0') || '@scale.example', now()
          from generate_series(${from}::int, ${to}::int) i`.execute(trx);
        await sql`insert into users (project_id, account_id, role_id, name, created_by, created_at)
          select ${projectId}, a.id, ${role.id},
            n.given || ' ' || case when n.woman and n.surname ~ '(ov|ev|in)$' then n.surname || 'a' else n.surname end || ' ' || n.i,
            ${caller.userId}, now() - (n.i || ' seconds')::interval
          from accounts a
          cross join lateral (
            select substr(a.login, 7)::int as i,
              (${first}::text[])[1 + (substr(a.login, 7)::int * 7) % ${FIRST.length}] as given,
              (${woman}::boolean[])[1 + (substr(a.login, 7)::int * 7) % ${FIRST.length}] as woman,
              (${last}::text[])[1 + (substr(a.login, 7)::int * 13) % ${LAST.length}] as surname
          ) n
          where a.login like 'scale-%' and substr(a.login, 7)::int between ${from} and ${to}`.execute(trx);
        await sql`insert into user_domains (user_id, domain_id)
          select u.id, ${scaleGroup.id} from users u join accounts a on a.id = u.account_id
          where u.project_id = ${projectId} and a.login like 'scale-%' and substr(a.login, 7)::int between ${from} and ${to}`.execute(
          trx,
        );
        await audit(trx, {
          projectId,
          userId: caller.userId,
          action: 'seed_scale',
          entity: 'group',
          entityId: scaleGroup.id,
          ip: ctx.caller.ip,
          data: { from, to },
        });
      }
      return { users: Math.max(have, to), created: Math.max(0, to - have), group_id: scaleGroup.id };
    });
    // after a bulk insert: fold the trigram indexes' pending lists in and refresh the statistics, so the
    // planner picks the indexes at once (outside the transaction: VACUUM cannot run inside one)
    if (result.created) await sql`vacuum analyze accounts, users, user_domains`.execute(ctx.app.db);
    return result;
  },
} satisfies SomeHandlers;
