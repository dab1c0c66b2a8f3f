/**
 * The list-filter language of spec part 2 §7 over real data: every rule on fields of every kind, match all
 * and any, free-text search, sort, paging and their bounds, and hostile input in values, field names and
 * sort, which must either match literally or be refused with 422 — never reach SQL.
 *
 * Expectations come from two places: literal names for the cases that matter most (wildcards, quotes,
 * unicode), and an oracle over the records the list itself returns unfiltered, so that what a filter finds
 * always agrees with what the records show.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import {
  getCommand,
  groupResource,
  roleResource,
  userResource,
  type Group,
  type Role,
  type User,
} from '@lintel/commands';
import { ErrorCatalogue, FilterRules, RulesByKind, type ApiClient, type Filter } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin, raw, rootGroup, type RawReply } from '../support/fixtures';

let ts: TestServer;
let api: ApiClient;

type GroupKey = 'N' | 'S' | 'E';
interface Seed {
  login: string;
  name: string;
  email?: string;
  phone?: string;
  description?: string;
  groups: GroupKey[];
  markers?: Array<'red' | 'blue'>;
  role: 'A' | 'B';
  groupAdmin?: boolean;
  active?: boolean;
}

const seeds: Seed[] = [
  {
    login: 'alice',
    name: 'Alice Anderson',
    email: 'Alice@Example.TEST',
    groups: ['N'],
    markers: ['red'],
    role: 'A',
    groupAdmin: true,
    active: true,
  },
  {
    login: 'albert',
    name: 'Albert Andrews',
    email: 'albert@example.test',
    groups: ['N', 'S'],
    markers: ['red', 'blue'],
    role: 'A',
  },
  { login: 'bob', name: 'Bob Brown', groups: ['S'], role: 'B', active: true },
  {
    login: 'barbara',
    name: 'Barbara Bell',
    email: 'barbara@other.test',
    phone: '+441234567890',
    groups: ['S'],
    markers: ['blue'],
    role: 'B',
  },
  {
    login: 'carol',
    name: 'Carol Carter',
    email: 'carol@example.test',
    phone: '+491701234567',
    groups: ['E'],
    role: 'A',
    groupAdmin: true,
  },
  { login: 'dan', name: 'Dan Dawson', email: 'dan@other.test', groups: ['E'], markers: ['red'], role: 'B' },
  {
    login: 'erin',
    name: 'Erin Evans',
    description: "Robert'); DROP TABLE users;--",
    groups: ['N'],
    role: 'B',
    active: true,
  },
  {
    login: 'frank',
    name: 'Frank Fisher',
    email: 'frank@example.test',
    phone: '+441111111111',
    groups: ['S', 'E'],
    markers: ['blue'],
    role: 'A',
  },
  // characters that mean something to LIKE, to SQL or to encodings
  { login: 'pct', name: 'a%b', groups: ['N'], role: 'B' },
  { login: 'axb', name: 'aXb', groups: ['N'], role: 'B' },
  { login: 'axxb', name: 'aXXb', groups: ['N'], role: 'B' },
  { login: 'und', name: 'a_b', groups: ['N'], role: 'B' },
  { login: 'bsl', name: 'a\\b', groups: ['N'], role: 'B' },
  { login: 'quote', name: "Quote ' or 1=1 --", groups: ['S'], role: 'B' },
  { login: 'pctlead', name: '%lead', groups: ['S'], role: 'B' },
  { login: 'zoe', name: 'Zoë Ünïcode', groups: ['E'], role: 'A' },
  { login: 'jpn', name: '日本語 名前', groups: ['E'], role: 'A' },
  { login: 'rocket', name: '🚀 Rocket', groups: ['E'], role: 'A' },
  // a block with one ordering in every collation, with equal names to show the tie-break by id
  { login: 'sorta', name: 'Sortalpha', groups: ['N'], role: 'A' },
  { login: 'sortd', name: 'Sortdelta', groups: ['S'], role: 'B' },
  { login: 'sorte1', name: 'Sortecho', groups: ['N'], role: 'A' },
  { login: 'sortb', name: 'Sortbravo', groups: ['E'], role: 'B' },
  { login: 'sorte2', name: 'Sortecho', groups: ['S'], role: 'A' },
  { login: 'sortc', name: 'Sortcharlie', groups: ['N'], role: 'B' },
  { login: 'sorte3', name: 'Sortecho', groups: ['E'], role: 'A' },
  ...Array.from({ length: 10 }, (_, i): Seed => ({
    login: `filler${String(i).padStart(2, '0')}`,
    name: `Filler ${String(i).padStart(2, '0')}`,
    email: i % 3 === 0 ? `filler${i}@example.test` : undefined,
    groups: [(['N', 'S', 'E'] as const)[i % 3]!],
    markers: i % 4 === 0 ? ['red'] : [],
    role: i % 2 ? 'A' : 'B',
    groupAdmin: i % 5 === 0,
    active: i % 2 === 0,
  })),
];

const w = {} as {
  root: number;
  groups: Record<GroupKey, number>;
  markers: { red: number; blue: number };
  roles: { A: number; B: number };
  typeEntrance: number;
  /** every user of the project, as the unfiltered list shows them, in id order */
  everyone: User[];
  byLogin: Map<string, User>;
  allGroups: Group[];
};

beforeAll(async () => {
  ts = await startTestServer();
  api = await admin(ts);
  w.root = await rootGroup(api);
  w.typeEntrance = (
    await getCommand('domain_type.create').run({ api }, { type: 'entrance', name: 'Entrance' })
  ).data.id;
  const mkGroup = async (name: string, extra: Record<string, unknown> = {}) =>
    (await getCommand('group.create').run({ api }, { name, parent_id: w.root, ...extra })).data.id;
  w.groups = {
    N: await mkGroup('North', { logic_address: '101', domain_type_id: w.typeEntrance }),
    S: await mkGroup('South', { logic_address: '102', description: 'the south side' }),
    E: await mkGroup('East', { logic_address: '201', domain_type_id: w.typeEntrance }),
  };
  w.markers = {
    red: (await getCommand('marker.create').run({ api }, { name: 'Red', color: '#ff0000' })).data.id,
    blue: (await getCommand('marker.create').run({ api }, { name: 'Blue', color: '#0000ff' })).data.id,
  };
  w.roles = {
    A: (
      await getCommand('role.create').run(
        { api },
        { name: 'Filter role A', description: 'first of two', permissions: ['users.view'] },
      )
    ).data.id,
    B: (
      await getCommand('role.create').run(
        { api },
        { name: 'Filter role B', description: 'second of two', permissions: [] },
      )
    ).data.id,
  };
  const db = ts.server.context.db;
  const base = Date.parse('2024-01-01T00:00:00Z');
  for (const [i, s] of seeds.entries()) {
    const u = await getCommand('user.create').run(
      { api },
      {
        login: s.login,
        name: s.name,
        email: s.email,
        description: s.description,
        role: w.roles[s.role],
        domains: s.groups.map((g) => w.groups[g]),
        markers: (s.markers ?? []).map((m) => w.markers[m]),
        is_group_admin: s.groupAdmin,
        profile: s.phone ? { phone: s.phone } : undefined,
        send_registration_link: false,
      },
    );
    // a day apart, and some of them activated: neither can be set through the API
    await sql`update users set created_at = ${new Date(base + i * 86_400_000).toISOString()}::timestamptz where id = ${u.data.id}`.execute(
      db,
    );
    if (s.active)
      await sql`update accounts set activated_at = now() where id = (select account_id from users where id = ${u.data.id})`.execute(
        db,
      );
  }
  w.everyone = (await getCommand('user.list').run({ api }, { limit: 1000, sort: 'id' })).data;
  w.byLogin = new Map(w.everyone.map((u) => [u.login, u]));
  w.allGroups = (await getCommand('group.list').run({ api }, { limit: 1000 })).data;
});
afterAll(async () => {
  await ts?.close();
});

// ----- helpers -----------------------------------------------------------------------------------------

type Match = 'all' | 'any';
const lc = (s: string | null | undefined) => (s ?? '').toLowerCase();
const user = (login: string) => w.byLogin.get(login)!;
const namesOf = (list: { name: string }[]) => list.map((u) => u.name);

/** The users a query finds (every page), checked against the list's result schema by the command. */
async function users(
  filters: Filter[],
  match: Match = 'all',
  extra: Record<string, unknown> = {},
): Promise<User[]> {
  return (await getCommand('user.list').run({ api }, { filters, match, limit: 1000, ...extra })).data;
}
async function userIds(filters: Filter[], match: Match = 'all', extra: Record<string, unknown> = {}) {
  return (await users(filters, match, extra)).map((u) => u.id);
}
const oracle = (pred: (u: User) => boolean) => w.everyone.filter(pred).map((u) => u.id);

/** A raw list call; a 200 reply must satisfy the command's result schema. */
async function rawList(segment: string, query: Record<string, unknown>): Promise<RawReply> {
  const r = await raw(ts, api, 'GET', `/${segment}`, { query });
  if (r.status === 200) {
    const cmd = [userResource, groupResource, roleResource].find((f) => f.segment === segment)?.commands.list;
    if (cmd) cmd.result.parse(r.body);
  }
  return r;
}

/** A 422 check_fields_data whose fields include exactly these field names. */
function expect422(r: RawReply, fields: string[]) {
  expect(r.status, JSON.stringify(r.body)).toBe(422);
  expect(r.body).toMatchObject({ message: 'check_fields_data', error_code: 'check_fields_data' });
  expect((r.body.data.fields as Array<{ field: string }>).map((f) => f.field).sort()).toEqual(
    [...fields].sort(),
  );
}

// ----- every rule, every kind ----------------------------------------------------------------------------

describe('users: every rule on every kind of field', () => {
  it('the seed is what the tests think it is', () => {
    expect(w.everyone.length).toBe(seeds.length + 1); // and the administrator
    expect(user('alice').email).toBe('alice@example.test'); // e-mails are kept in lower case
    expect(user('barbara').profile.phone).toBe('+441234567890');
  });

  type Case = [string, Filter[], (u: User) => boolean];
  const text: Case[] = [
    [
      'name contains (any case)',
      [{ field: 'name', rule: 'contains', value: 'AND' }],
      (u) => lc(u.name).includes('and'),
    ],
    [
      'name contains, lower case',
      [{ field: 'name', rule: 'contains', value: 'an' }],
      (u) => lc(u.name).includes('an'),
    ],
    [
      'name begins_with',
      [{ field: 'name', rule: 'begins_with', value: 'al' }],
      (u) => lc(u.name).startsWith('al'),
    ],
    [
      'name begins_with (upper case)',
      [{ field: 'name', rule: 'begins_with', value: 'SORT' }],
      (u) => u.name.startsWith('Sort'),
    ],
    [
      'name equals ignores case',
      [{ field: 'name', rule: 'equals', value: 'alice ANDERSON' }],
      (u) => u.login === 'alice',
    ],
    ['name equals is not contains', [{ field: 'name', rule: 'equals', value: 'Alice' }], () => false],
    [
      'name not_equals ignores case',
      [{ field: 'name', rule: 'not_equals', value: 'ALICE anderson' }],
      (u) => u.login !== 'alice',
    ],
    ['login contains', [{ field: 'login', rule: 'contains', value: 'ORT' }], (u) => u.login.includes('ort')],
    [
      'login begins_with',
      [{ field: 'login', rule: 'begins_with', value: 'fill' }],
      (u) => u.login.startsWith('fill'),
    ],
    ['login equals', [{ field: 'login', rule: 'equals', value: 'BOB' }], (u) => u.login === 'bob'],
    ['login not_equals', [{ field: 'login', rule: 'not_equals', value: 'bob' }], (u) => u.login !== 'bob'],
    [
      'email contains',
      [{ field: 'email', rule: 'contains', value: 'EXAMPLE' }],
      (u) => lc(u.email).includes('example'),
    ],
    [
      'email begins_with',
      [{ field: 'email', rule: 'begins_with', value: 'Alice@' }],
      (u) => u.login === 'alice',
    ],
    [
      'email equals ignores case',
      [{ field: 'email', rule: 'equals', value: 'ALICE@example.Test' }],
      (u) => u.login === 'alice',
    ],
    [
      'email not_equals keeps users without e-mail',
      [{ field: 'email', rule: 'not_equals', value: 'alice@example.test' }],
      (u) => u.login !== 'alice',
    ],
    [
      'description contains',
      [{ field: 'description', rule: 'contains', value: 'drop table USERS;--' }],
      (u) => u.login === 'erin',
    ],
    [
      'description begins_with',
      [{ field: 'description', rule: 'begins_with', value: "robert')" }],
      (u) => u.login === 'erin',
    ],
    [
      'description equals',
      [{ field: 'description', rule: 'equals', value: "ROBERT'); drop table users;--" }],
      (u) => u.login === 'erin',
    ],
    [
      'description not_equals',
      [{ field: 'description', rule: 'not_equals', value: '' }],
      (u) => u.description !== '',
    ],
    [
      'phone begins_with',
      [{ field: 'phone', rule: 'begins_with', value: '+44' }],
      (u) => u.profile.phone.startsWith('+44'),
    ],
    [
      'phone contains',
      [{ field: 'phone', rule: 'contains', value: '1701' }],
      (u) => u.profile.phone.includes('1701'),
    ],
    [
      'phone equals',
      [{ field: 'phone', rule: 'equals', value: '+491701234567' }],
      (u) => u.profile.phone === '+491701234567',
    ],
    // what a record shows is what a filter reads: a phone shown empty equals ''
    ['phone equals empty', [{ field: 'phone', rule: 'equals', value: '' }], (u) => u.profile.phone === ''],
    [
      'phone not_equals empty',
      [{ field: 'phone', rule: 'not_equals', value: '' }],
      (u) => u.profile.phone !== '',
    ],
  ];
  it.each(text)('text: %s', async (_, filters, pred) => {
    expect(await userIds(filters)).toEqual(oracle(pred));
  });

  it('text: the literal expectations hold too', async () => {
    expect(namesOf(await users([{ field: 'name', rule: 'begins_with', value: 'al' }]))).toEqual([
      'Alice Anderson',
      'Albert Andrews',
    ]);
    const noMail = await users([{ field: 'email', rule: 'not_equals', value: 'alice@example.test' }]);
    expect(noMail.map((u) => u.login)).toContain('bob'); // no e-mail at all: not equal to one
    expect(noMail.map((u) => u.login)).not.toContain('alice');
    expect(namesOf(await users([{ field: 'phone', rule: 'begins_with', value: '+44' }]))).toEqual([
      'Barbara Bell',
      'Frank Fisher',
    ]);
    // a number where text is expected is read as text
    expect(namesOf(await users([{ field: 'name', rule: 'contains', value: 7 }]))).toEqual(['Filler 07']);
  });

  it('number: equals, not_equals, above, below on id', async () => {
    const mid = user('carol').id;
    expect(await userIds([{ field: 'id', rule: 'equals', value: mid }])).toEqual([mid]);
    expect(await userIds([{ field: 'id', rule: 'equals', value: String(mid) }])).toEqual([mid]);
    expect(await userIds([{ field: 'id', rule: 'not_equals', value: mid }])).toEqual(
      oracle((u) => u.id !== mid),
    );
    expect(await userIds([{ field: 'id', rule: 'above', value: mid }])).toEqual(oracle((u) => u.id > mid));
    expect(await userIds([{ field: 'id', rule: 'below', value: mid }])).toEqual(oracle((u) => u.id < mid));
    expect(await userIds([{ field: 'id', rule: 'below', value: -5 }])).toEqual([]);
    expect(
      await userIds([
        { field: 'id', rule: 'above', value: mid },
        { field: 'id', rule: 'below', value: mid + 3 },
      ]),
    ).toEqual([mid + 1, mid + 2]);
  });

  it('date: above, below, equals, not_equals on created_at', async () => {
    const at = (s: string) => Date.parse(s);
    const cut = '2024-01-10T12:00:00Z';
    expect(await userIds([{ field: 'created_at', rule: 'above', value: cut }])).toEqual(
      oracle((u) => at(u.created_at) > at(cut)),
    );
    expect(await userIds([{ field: 'created_at', rule: 'below', value: cut }])).toEqual(
      oracle((u) => at(u.created_at) < at(cut)),
    );
    expect((await userIds([{ field: 'created_at', rule: 'below', value: cut }])).length).toBe(10); // days 0 to 9
    // a date alone is midnight UTC; a window of two rules
    expect(
      namesOf(
        await users([
          { field: 'created_at', rule: 'above', value: '2024-01-02' },
          { field: 'created_at', rule: 'below', value: '2024-01-05' },
        ]),
      ),
    ).toEqual(['Bob Brown', 'Barbara Bell']);
    const carol = user('carol');
    expect(await userIds([{ field: 'created_at', rule: 'equals', value: carol.created_at }])).toEqual([
      carol.id,
    ]);
    expect(await userIds([{ field: 'created_at', rule: 'not_equals', value: carol.created_at }])).toEqual(
      oracle((u) => u.id !== carol.id),
    );
    // the whole range PostgreSQL and the ISO format agree on
    expect(await userIds([{ field: 'created_at', rule: 'above', value: '0001-01-01T00:00:00Z' }])).toEqual(
      oracle(() => true),
    );
    expect(await userIds([{ field: 'created_at', rule: 'below', value: '9999-12-31T23:59:59Z' }])).toEqual(
      oracle(() => true),
    );
  });

  it('boolean: equals and not_equals, as JSON booleans or their text', async () => {
    expect(await userIds([{ field: 'is_group_admin', rule: 'equals', value: true }])).toEqual(
      oracle((u) => u.is_group_admin),
    );
    expect(await userIds([{ field: 'is_group_admin', rule: 'equals', value: 'true' }])).toEqual(
      oracle((u) => u.is_group_admin),
    );
    expect(await userIds([{ field: 'is_group_admin', rule: 'equals', value: false }])).toEqual(
      oracle((u) => !u.is_group_admin),
    );
    expect(await userIds([{ field: 'is_group_admin', rule: 'not_equals', value: true }])).toEqual(
      oracle((u) => !u.is_group_admin),
    );
    expect(await userIds([{ field: 'is_activated', rule: 'equals', value: true }])).toEqual(
      oracle((u) => u.is_activated),
    );
    expect(await userIds([{ field: 'is_activated', rule: 'equals', value: 'false' }])).toEqual(
      oracle((u) => !u.is_activated),
    );
    expect(namesOf(await users([{ field: 'is_group_admin', rule: 'equals', value: true }]))).toEqual([
      'Alice Anderson',
      'Carol Carter',
      'Filler 00',
      'Filler 05',
    ]);
  });

  it('ref: equals and not_equals on role, including null', async () => {
    const { A, B } = w.roles;
    expect(await userIds([{ field: 'role', rule: 'equals', value: A }])).toEqual(
      oracle((u) => u.role.id === A),
    );
    expect(await userIds([{ field: 'role', rule: 'equals', value: String(B) }])).toEqual(
      oracle((u) => u.role.id === B),
    );
    expect(await userIds([{ field: 'role', rule: 'not_equals', value: A }])).toEqual(
      oracle((u) => u.role.id !== A),
    );
    // every user has a role: "no role" finds nobody, "some role" finds everyone
    expect(await userIds([{ field: 'role', rule: 'equals', value: null }])).toEqual([]);
    expect(await userIds([{ field: 'role', rule: 'not_equals', value: null }])).toEqual(oracle(() => true));
    expect(await userIds([{ field: 'role', rule: 'equals', value: 2_000_000_000 }])).toEqual([]);
  });

  it('refs: has on domains and markers', async () => {
    for (const key of ['N', 'S', 'E'] as const) {
      const g = w.groups[key];
      expect(await userIds([{ field: 'domains', rule: 'has', value: g }])).toEqual(
        oracle((u) => u.domains.some((d) => d.id === g)),
      );
    }
    expect(await userIds([{ field: 'domains', rule: 'has', value: String(w.root) }])).toEqual(
      oracle((u) => u.domains.some((d) => d.id === w.root)),
    );
    for (const m of [w.markers.red, w.markers.blue])
      expect(await userIds([{ field: 'markers', rule: 'has', value: m }])).toEqual(
        oracle((u) => u.markers.some((x) => x.id === m)),
      );
    expect(namesOf(await users([{ field: 'markers', rule: 'has', value: w.markers.blue }]))).toEqual([
      'Albert Andrews',
      'Barbara Bell',
      'Frank Fisher',
    ]);
    expect(await userIds([{ field: 'markers', rule: 'has', value: 2_000_000_000 }])).toEqual([]);
  });
});

describe('users: match all and any', () => {
  const nAndBlue: Filter[] = [
    { field: 'domains', rule: 'has', value: 0 },
    { field: 'markers', rule: 'has', value: 0 },
  ];
  const both = () => nAndBlue.map((f, i) => ({ ...f, value: i === 0 ? w.groups.N : w.markers.blue }));

  it('all (the default) needs every filter, any needs one', async () => {
    const inN = (u: User) => u.domains.some((d) => d.id === w.groups.N);
    const blue = (u: User) => u.markers.some((m) => m.id === w.markers.blue);
    expect(namesOf(await users(both()))).toEqual(['Albert Andrews']);
    expect(await userIds(both(), 'all')).toEqual(oracle((u) => inN(u) && blue(u)));
    expect(await userIds(both(), 'any')).toEqual(oracle((u) => inN(u) || blue(u)));
    // without match in the query at all: all
    const r = await rawList('users', { filters: both(), limit: 1000 });
    expect(r.body.data.map((u: User) => u.name)).toEqual(['Albert Andrews']);
  });

  it('mixes kinds, and contradictions find nothing under all', async () => {
    const filters: Filter[] = [
      { field: 'name', rule: 'begins_with', value: 'sort' },
      { field: 'role', rule: 'equals', value: w.roles.B },
      { field: 'login', rule: 'equals', value: 'alice' },
    ];
    expect(await userIds(filters, 'all')).toEqual([]);
    expect(await userIds(filters, 'any')).toEqual(
      oracle((u) => u.name.startsWith('Sort') || u.role.id === w.roles.B || u.login === 'alice'),
    );
    expect(
      await userIds(
        [
          { field: 'id', rule: 'equals', value: 1 },
          { field: 'id', rule: 'not_equals', value: 1 },
        ],
        'any',
      ),
    ).toEqual(oracle(() => true));
  });

  it('no filters, or an empty list, finds everyone', async () => {
    expect(await userIds([])).toEqual(oracle(() => true));
    expect(await userIds([], 'any')).toEqual(oracle(() => true));
  });
});

describe('users: free-text search', () => {
  const hit = (needle: string) => (u: User) =>
    [u.name, u.login, u.email].some((s) => lc(s).includes(needle.toLowerCase()));
  it('looks in name, login and e-mail, ignoring case', async () => {
    for (const needle of ['example.test', 'ALICE', 'ander', 'sorte', 'Filler 0'])
      expect(await userIds([], 'all', { search: needle }), needle).toEqual(oracle(hit(needle)));
    expect(namesOf(await users([], 'all', { search: 'other.test' }))).toEqual(['Barbara Bell', 'Dan Dawson']);
  });
  it('reads wildcards literally', async () => {
    expect(namesOf(await users([], 'all', { search: '%' }))).toEqual(['a%b', '%lead']);
    expect(namesOf(await users([], 'all', { search: '_' }))).toEqual(['a_b']);
    expect(namesOf(await users([], 'all', { search: '\\' }))).toEqual(['a\\b']);
    expect(namesOf(await users([], 'all', { search: "' or 1=1 --" }))).toEqual(["Quote ' or 1=1 --"]);
  });
  it('combines with filters, and blank search is no search', async () => {
    expect(
      await userIds([{ field: 'domains', rule: 'has', value: w.groups.N }], 'all', { search: 'a' }),
    ).toEqual(oracle((u) => hit('a')(u) && u.domains.some((d) => d.id === w.groups.N)));
    expect(await userIds([], 'all', { search: '   ' })).toEqual(oracle(() => true));
    expect(await userIds([], 'all', { search: 'no such person anywhere' })).toEqual([]);
  });
});

describe('users: sort and paging', () => {
  const sortBlock: Filter[] = [{ field: 'name', rule: 'begins_with', value: 'Sort' }];
  const echoIds = () => ['sorte1', 'sorte2', 'sorte3'].map((l) => user(l).id);

  it('sorts by name both ways, equal names by id in the same direction', async () => {
    const asc = await users(sortBlock, 'all', { sort: 'name' });
    expect(namesOf(asc)).toEqual([
      'Sortalpha',
      'Sortbravo',
      'Sortcharlie',
      'Sortdelta',
      'Sortecho',
      'Sortecho',
      'Sortecho',
    ]);
    expect(asc.slice(4).map((u) => u.id)).toEqual(echoIds());
    const desc = await users(sortBlock, 'all', { sort: '-name' });
    expect(namesOf(desc)).toEqual([
      'Sortecho',
      'Sortecho',
      'Sortecho',
      'Sortdelta',
      'Sortcharlie',
      'Sortbravo',
      'Sortalpha',
    ]);
    expect(desc.slice(0, 3).map((u) => u.id)).toEqual(echoIds().reverse());
  });

  it('sorts by every sortable field of the family, ties by id', async () => {
    // PostgreSQL's default null order: nulls sort as the largest value (last ascending, first descending)
    const cmp = (a: string | number | null, b: string | number | null) =>
      a === b ? 0 : a === null ? 1 : b === null ? -1 : a < b ? -1 : 1;
    const key: Record<string, (u: User) => string | number | null> = {
      id: (u) => u.id,
      login: (u) => u.login,
      name: (u) => u.name,
      email: (u) => u.email,
      role: (u) => u.role.id,
      created_at: (u) => Date.parse(u.created_at),
    };
    expect(Object.keys(key).sort()).toEqual([...userResource.sortable].sort());
    for (const [field, k] of Object.entries(key)) {
      const asc = [...w.everyone].sort((a, b) => cmp(k(a), k(b)) || a.id - b.id).map((u) => u.id);
      const desc = [...w.everyone].sort((a, b) => cmp(k(b), k(a)) || b.id - a.id).map((u) => u.id);
      expect(await userIds([], 'all', { sort: field }), field).toEqual(asc);
      expect(await userIds([], 'all', { sort: `-${field}` }), `-${field}`).toEqual(desc);
    }
  });

  it('pages: total, page and limit; the last page is short; past it is empty', async () => {
    const all = (await users(sortBlock, 'all', { sort: 'name' })).map((u) => u.id);
    const got: number[] = [];
    for (const page of [1, 2, 3]) {
      const r = await getCommand('user.list').run(
        { api },
        { filters: sortBlock, sort: 'name', page, limit: 3 },
      );
      expect(r.meta).toEqual({ total: 7, total_is_estimate: false, page, limit: 3 });
      expect(r.data.length).toBe(page < 3 ? 3 : 1);
      got.push(...r.data.map((u) => u.id));
    }
    expect(got).toEqual(all); // nothing skipped or repeated across pages, even among equal names
    const past = await getCommand('user.list').run(
      { api },
      { filters: sortBlock, sort: 'name', page: 4, limit: 3 },
    );
    expect(past).toEqual({ data: [], meta: { total: 7, total_is_estimate: false, page: 4, limit: 3 } });
    const defaults = await getCommand('user.list').run({ api }, {});
    expect(defaults.meta).toEqual({ total: w.everyone.length, total_is_estimate: false, page: 1, limit: 50 });
    expect(defaults.data.length).toBe(Math.min(50, w.everyone.length));
    const one = await getCommand('user.list').run({ api }, { sort: '-id', limit: 1 });
    expect(one.data.map((u) => u.id)).toEqual([Math.max(...w.everyone.map((u) => u.id))]);
    expect((await getCommand('user.list').run({ api }, { limit: 1000 })).meta.limit).toBe(1000);
  });

  it('refuses page and limit out of bounds (422 naming the field)', async () => {
    expect422(await rawList('users', { limit: 0 }), ['limit']);
    expect((await rawList('users', { limit: 0 })).body.data.fields[0]).toEqual({
      field: 'limit',
      rule: 'greater_or_equal',
      params: { min: 1 },
    });
    expect((await rawList('users', { limit: 1001 })).body.data.fields[0]).toEqual({
      field: 'limit',
      rule: 'less_or_equal',
      params: { max: 1000 },
    });
    for (const limit of ['-1', '2.5', 'abc', '1e9']) expect422(await rawList('users', { limit }), ['limit']);
    for (const page of ['0', '-1', 'x', '1.5']) expect422(await rawList('users', { page }), ['page']);
    expect((await rawList('users', { limit: 1000, page: 1 })).status).toBe(200);
  });
});

describe('users: refused queries', () => {
  it('an unknown field is 422 naming filters.<i>.field and listing the allowed ones', async () => {
    const r = await rawList('users', { filters: [{ field: 'nope', rule: 'equals', value: 'x' }] });
    expect422(r, ['filters.0.field']);
    expect(r.body.data.fields[0]).toEqual({
      field: 'filters.0.field',
      rule: 'one_of',
      params: { values: Object.keys(userResource.filterable) },
    });
    expect422(
      await rawList('users', {
        filters: [
          { field: 'name', rule: 'contains', value: 'a' },
          { field: 'avatar_url', rule: 'equals', value: 'x' },
        ],
      }),
      ['filters.1.field'],
    );
  });

  it('every rule that does not fit the kind of every field is 422 naming filters.0.rule', async () => {
    const sample: Record<string, unknown> = {
      text: 'a',
      number: 1,
      date: '2024-01-01',
      boolean: true,
      ref: 1,
      refs: 1,
      enum: 'a',
    };
    let checked = 0;
    for (const [field, def] of Object.entries(userResource.filterable)) {
      for (const rule of FilterRules.filter((r) => !RulesByKind[def.kind].includes(r))) {
        const r = await rawList('users', { filters: [{ field, rule, value: sample[def.kind] }] });
        expect422(r, ['filters.0.rule']);
        expect(r.body.data.fields[0]).toEqual({
          field: 'filters.0.rule',
          rule: 'one_of',
          params: { values: [...RulesByKind[def.kind]] },
        });
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(40);
    expect422(await rawList('users', { filters: [{ field: 'name', rule: 'like', value: 'a' }] }), [
      'filters.0.rule',
    ]);
  });

  it('a value that does not fit the kind is 422 naming filters.<i>.value', async () => {
    const bad: Array<[string, string, unknown]> = [
      ['id', 'equals', 'abc'],
      ['id', 'above', '1; drop table users'],
      ['id', 'equals', null],
      ['created_at', 'above', 'not a date'],
      ['created_at', 'below', 5],
      ['is_group_admin', 'equals', 'yes'],
      ['is_activated', 'equals', 1],
      ['role', 'equals', 'admin'],
      ['domains', 'has', null],
      ['markers', 'has', 'red'],
      ['name', 'contains', null],
      ['name', 'contains', true],
      ['name', 'contains', { $ne: 1 }],
      ['name', 'contains', ['a']],
    ];
    for (const [field, rule, value] of bad)
      expect422(await rawList('users', { filters: [{ field, rule, value }] }), ['filters.0.value']);
  });

  it('dates PostgreSQL cannot read are refused, not a server error', async () => {
    for (const value of ['+010000-01-01T00:00:00Z', '-000001-01-01T00:00:00Z', '+275760-09-13T00:00:00Z'])
      expect422(await rawList('users', { filters: [{ field: 'created_at', rule: 'above', value }] }), [
        'filters.0.value',
      ]);
  });

  it('numbers beyond what a column holds are a 4xx with a catalogue key', async () => {
    for (const value of [1e308, 2.5, '2.5', 99_999_999_999, -99_999_999_999]) {
      for (const field of ['id', 'role', 'domains']) {
        const rule = field === 'domains' ? 'has' : 'equals';
        const r = await rawList('users', { filters: [{ field, rule, value }] });
        if (r.status === 200) continue;
        expect(r.status, `${field} ${value}`).toBeGreaterThanOrEqual(400);
        expect(r.status, `${field} ${value}`).toBeLessThan(500);
        expect(Object.keys(ErrorCatalogue)).toContain(r.body.message);
      }
    }
  });

  it('an unknown or unsortable sort field is 422 naming sort', async () => {
    for (const sort of ['nope', 'domains', 'phone', 'description', '-is_group_admin']) {
      const r = await rawList('users', { sort });
      expect422(r, ['sort']);
      expect(r.body.data.fields[0]).toEqual({
        field: 'sort',
        rule: 'one_of',
        params: { values: userResource.sortable },
      });
    }
  });

  it('malformed filters, match and unknown parameters are 422', async () => {
    expect422(await rawList('users', { filters: 'garbage' }), ['filters']);
    expect422(await rawList('users', { filters: { field: 'name', rule: 'equals', value: 'a' } }), [
      'filters',
    ]);
    expect422(
      await rawList('users', {
        filters: Array.from({ length: 21 }, () => ({ field: 'id', rule: 'above', value: 0 })),
      }),
      ['filters'],
    );
    expect422(
      await rawList('users', { filters: [{ field: 'name', rule: 'equals', value: 'a', extra: 1 }] }),
      ['filters.0.extra'],
    );
    expect422(await rawList('users', { filters: [{ field: 'name', rule: 'equals' }] }), ['filters.0.value']);
    expect422(await rawList('users', { filters: [{ field: '', rule: 'equals', value: 'a' }] }), [
      'filters.0.field',
    ]);
    expect422(await rawList('users', { match: 'some' }), ['match']);
    expect422(await rawList('users', { where: '1=1' }), ['where']);
  });
});

describe('users: injection attempts', () => {
  const names = async (rule: Filter['rule'], value: string, field = 'name') =>
    namesOf(await users([{ field, rule, value }]));

  it('SQL in a value is matched literally', async () => {
    expect(await names('contains', "' or 1=1 --")).toEqual(["Quote ' or 1=1 --"]);
    expect(await names('equals', "' or 1=1 --")).toEqual([]);
    expect(await names('equals', "quote ' OR 1=1 --")).toEqual(["Quote ' or 1=1 --"]);
    expect(await names('not_equals', "' or 1=1 --")).toEqual(namesOf(w.everyone));
    expect(await names('contains', "'); drop table users;--", 'description')).toEqual(['Erin Evans']);
    expect(await names('begins_with', "x' or 'a'='a")).toEqual([]);
  });

  it('LIKE wildcards % and _ and the escape \\ are matched literally', async () => {
    expect(await names('contains', '%')).toEqual(['a%b', '%lead']);
    expect(await names('contains', 'a%b')).toEqual(['a%b']); // not aXb, aXXb, a_b, a\b
    expect(await names('begins_with', '%')).toEqual(['%lead']);
    expect(await names('equals', '%')).toEqual([]);
    expect(await names('contains', '_')).toEqual(['a_b']);
    expect(await names('contains', 'a_b')).toEqual(['a_b']); // not aXb
    expect(await names('begins_with', '_')).toEqual([]);
    expect(await names('contains', '\\')).toEqual(['a\\b']);
    expect(await names('contains', 'a\\b')).toEqual(['a\\b']);
    expect(await names('contains', '\\%')).toEqual([]);
    expect(await names('contains', '%%')).toEqual([]);
    expect(await names('equals', 'A%B')).toEqual(['a%b']);
  });

  it('unicode is matched as it is', async () => {
    expect(await names('contains', 'Ünï')).toEqual(['Zoë Ünïcode']);
    expect(await names('begins_with', 'zoë')).toEqual(['Zoë Ünïcode']);
    expect(await names('contains', '日本')).toEqual(['日本語 名前']);
    expect(await names('contains', '🚀')).toEqual(['🚀 Rocket']);
    expect(await names('equals', '🚀 rocket')).toEqual(['🚀 Rocket']);
    expect(await names('contains', '\uD800')).toEqual([]); // a lone surrogate
  });

  it('a value of 255 characters is read, 256 is refused', async () => {
    expect(await names('contains', 'x'.repeat(255))).toEqual([]);
    const r = await rawList('users', {
      filters: [{ field: 'name', rule: 'contains', value: 'x'.repeat(256) }],
    });
    expect422(r, ['filters.0.value']);
    expect422(await rawList('users', { search: 'x'.repeat(256) }), ['search']);
  });

  it('a NUL character in a value or the search is refused, not a server error', async () => {
    expect422(await rawList('users', { filters: [{ field: 'name', rule: 'contains', value: 'a\u0000b' }] }), [
      'filters.0.value',
    ]);
    expect422(await rawList('users', { search: 'a\u0000' }), ['search']);
  });

  it('SQL, prototype keys and odd names in field names and sort are 422, and the table is intact', async () => {
    const db = ts.server.context.db;
    const count = async () =>
      Number((await sql<{ n: number }>`select count(*)::int as n from users`.execute(db)).rows[0]!.n);
    const before = await count();
    const hostile = [
      'name; drop table users',
      'name)',
      'name --',
      'name OR 1=1',
      't.id',
      'a.login',
      'name"',
      "name'",
      '__proto__',
      'constructor',
      'prototype',
      'toString',
      'hasOwnProperty',
      'valueOf',
    ];
    for (const field of hostile) {
      const r = await rawList('users', { filters: [{ field, rule: 'equals', value: 'a' }] });
      expect422(r, ['filters.0.field']);
      const s = await rawList('users', { sort: field });
      expect422(s, ['sort']);
      const d = await rawList('users', { sort: `-${field}` });
      expect422(d, ['sort']);
    }
    for (const sort of ['id desc', 'name,id', 'name asc; select 1', '--name', '-', 'NAME', 'name\u0000'])
      expect422(await rawList('users', { sort }), ['sort']);
    expect(await count()).toBe(before);
    const table = await sql<{ t: string | null }>`select to_regclass('public.users')::text as t`.execute(db);
    expect(table.rows[0]!.t).toBe('users');
    expect((await getCommand('user.list').run({ api }, { limit: 1000 })).meta.total).toBe(w.everyone.length);
  });
});

describe('groups, roles and markers: the same language', () => {
  const groupIds = async (filters: Filter[], extra: Record<string, unknown> = {}) =>
    (await getCommand('group.list').run({ api }, { filters, limit: 1000, ...extra })).data.map((g) => g.id);
  const groupOracle = (pred: (g: Group) => boolean) => w.allGroups.filter(pred).map((g) => g.id);

  it('groups: text, ref with null, number, date and sort', async () => {
    expect(await groupIds([{ field: 'name', rule: 'contains', value: 'ORTH' }])).toEqual([w.groups.N]);
    expect(await groupIds([{ field: 'parent_id', rule: 'equals', value: w.root }])).toEqual(
      groupOracle((g) => g.parent_id === w.root),
    );
    expect(await groupIds([{ field: 'parent_id', rule: 'equals', value: null }])).toEqual([w.root]);
    expect(await groupIds([{ field: 'parent_id', rule: 'not_equals', value: null }])).toEqual(
      groupOracle((g) => g.parent_id !== null),
    );
    expect(await groupIds([{ field: 'logic_address', rule: 'begins_with', value: '10' }])).toEqual([
      w.groups.N,
      w.groups.S,
    ]);
    expect(await groupIds([{ field: 'logic_address', rule: 'not_equals', value: '101' }])).toEqual(
      groupOracle((g) => g.logic_address !== '101'),
    );
    expect(await groupIds([{ field: 'type', rule: 'equals', value: 'ENTRANCE' }])).toEqual([
      w.groups.N,
      w.groups.E,
    ]);
    expect(await groupIds([{ field: 'domain_type_id', rule: 'equals', value: w.typeEntrance }])).toEqual([
      w.groups.N,
      w.groups.E,
    ]);
    expect(await groupIds([{ field: 'domain_type_id', rule: 'equals', value: null }])).toEqual(
      groupOracle((g) => g.domain_type_id === null),
    );
    expect(await groupIds([{ field: 'description', rule: 'contains', value: 'south' }])).toEqual([
      w.groups.S,
    ]);
    expect(await groupIds([{ field: 'id', rule: 'above', value: w.groups.N }])).toEqual(
      groupOracle((g) => g.id > w.groups.N),
    );
    expect(await groupIds([{ field: 'created_at', rule: 'below', value: '2000-01-01' }])).toEqual([]);
    expect(
      await groupIds(
        [
          { field: 'name', rule: 'equals', value: 'east' },
          { field: 'name', rule: 'equals', value: 'west' },
          { field: 'logic_address', rule: 'equals', value: '102' },
        ],
        { match: 'any' },
      ),
    ).toEqual([w.groups.S, w.groups.E]);
    const byUsers = await getCommand('group.list').run({ api }, { sort: '-users_count', limit: 1000 });
    const counts = byUsers.data.map((g) => g.users_count);
    expect(counts).toEqual([...counts].sort((a, b) => b - a));
    expect(
      (await getCommand('group.list').run({ api }, { sort: 'name', limit: 1000 })).data.map((g) => g.name),
    ).toEqual(
      [...w.allGroups]
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id - b.id))
        .map((g) => g.name),
    );
  });

  it('groups: refused filters and sort', async () => {
    expect422(await rawList('domains', { filters: [{ field: 'users_count', rule: 'above', value: 1 }] }), [
      'filters.0.field',
    ]); // sortable, not filterable
    expect422(await rawList('domains', { filters: [{ field: 'name', rule: 'has', value: 1 }] }), [
      'filters.0.rule',
    ]);
    expect422(await rawList('domains', { filters: [{ field: 'parent_id', rule: 'above', value: 1 }] }), [
      'filters.0.rule',
    ]);
    expect422(
      await rawList('domains', { filters: [{ field: 'parent_id', rule: 'equals', value: 'root' }] }),
      ['filters.0.value'],
    );
    expect422(await rawList('domains', { sort: 'description' }), ['sort']);
    expect422(await rawList('domains', { sort: '__proto__' }), ['sort']);
    expect422(await rawList('domains', { limit: 1001 }), ['limit']);
    expect(
      namesOf(
        (await rawList('domains', { filters: [{ field: 'name', rule: 'contains', value: '%' }] })).body.data,
      ),
    ).toEqual([]);
  });

  it('roles: text, boolean, sort and refusals', async () => {
    const roles = async (filters: Filter[], extra: Record<string, unknown> = {}) =>
      (await getCommand('role.list').run({ api }, { filters, limit: 1000, ...extra })).data as Role[];
    expect(
      namesOf(await roles([{ field: 'name', rule: 'begins_with', value: 'filter ROLE' }], { sort: '-name' })),
    ).toEqual(['Filter role B', 'Filter role A']);
    expect(
      namesOf(await roles([{ field: 'is_system', rule: 'equals', value: true }], { sort: 'name' })),
    ).toEqual(['Administrator', 'Installer', 'Private client']);
    expect(
      namesOf(await roles([{ field: 'is_system', rule: 'not_equals', value: true }], { sort: 'name' })),
    ).toEqual(['Filter role A', 'Filter role B']);
    expect(namesOf(await roles([{ field: 'description', rule: 'contains', value: 'SECOND' }]))).toEqual([
      'Filter role B',
    ]);
    expect(
      namesOf(
        await roles(
          [
            { field: 'name', rule: 'equals', value: 'installer' },
            { field: 'name', rule: 'equals', value: 'private client' },
          ],
          { match: 'any' },
        ),
      ),
    ).toEqual(['Installer', 'Private client']);
    expect(namesOf(await roles([], { search: 'first of' }))).toEqual(['Filter role A']);
    const byUsers = (await roles([], { sort: '-users_count' })).map((r) => r.users_count);
    expect(byUsers).toEqual([...byUsers].sort((a, b) => b - a));
    expect422(await rawList('roles', { filters: [{ field: 'users_count', rule: 'above', value: 0 }] }), [
      'filters.0.field',
    ]);
    expect422(
      await rawList('roles', { filters: [{ field: 'is_system', rule: 'contains', value: 'true' }] }),
      ['filters.0.rule'],
    );
    expect422(
      await rawList('roles', { filters: [{ field: 'permissions', rule: 'has', value: 'users.view' }] }),
      ['filters.0.field'],
    );
    expect422(await rawList('roles', { sort: 'permissions' }), ['sort']);
    expect422(
      await rawList('roles', { filters: [{ field: 'name; drop table roles', rule: 'equals', value: 'a' }] }),
      ['filters.0.field'],
    );
  });

  it('markers: text and its refusals', async () => {
    const markers = async (filters: Filter[]) =>
      namesOf((await getCommand('marker.list').run({ api }, { filters, limit: 1000 })).data);
    expect(await markers([{ field: 'name', rule: 'equals', value: 'RED' }])).toEqual(['Red']);
    expect(await markers([{ field: 'color', rule: 'begins_with', value: '#0000' }])).toEqual(['Blue']);
    expect(await markers([{ field: 'color', rule: 'contains', value: '_' }])).toEqual([]);
    expect422(await rawList('markers', { filters: [{ field: 'users_count', rule: 'equals', value: 1 }] }), [
      'filters.0.field',
    ]);
  });
});
