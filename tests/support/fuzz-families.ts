/**
 * The fuzzing of the families' writes (tests/api/fuzz-families.test.ts runs it over the registry, a fixture
 * registry's test over its family): random bodies at the create and update route of each family — a 2xx whose
 * body satisfies the command's result schema, or a 4xx with a catalogue key, never a 5xx; a 4xx writes
 * nothing (checksums of every table the families write, derived from their declarations, and the audit count
 * are unchanged); a 2xx is audited, and its reply is what a get then reads. Values mix plausible ones (real ids
 * from the pools, by family: a reference field draws from its family's pool; well-formed names, logins,
 * colours) with garbage, so that a share of the calls succeeds and feeds later ones.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { ZodType } from 'zod';
import { sql } from 'kysely';
import { toRequest, type AnyResource, type Command } from '@lintel/commands';
import { AllPermissions, ErrorCatalogue, type ApiClient } from '@lintel/core';
import { familyTables } from '@lintel/server';
import { arbitraryOf } from './schema-arbitrary';
import type { TestServer } from './server';
import { raw } from './fixtures';

export interface FuzzWorld {
  ts: TestServer;
  /** the administrator, who makes every call */
  api: ApiClient;
}

/** Ids the generators pick from, by family; successful creates add to them. */
const pools: Record<string, number[]> = {};
export const poolOf = (family: string): number[] => (pools[family] ??= []);
/** groups that may be a parent or a user's group, but are never updated (the root) */
export const fixedGroups: number[] = [];
/** built-in roles other than the administrator's: assigned and listed, never updated */
export const assignableRoles: number[] = [];

/** property runs per route; FUZZ_RUNS=400 for a long hunt */
export const RUNS = Number(process.env.FUZZ_RUNS ?? 40);

/** A reference field without hand-written values: ids from its family's pool, or ids that are none. */
function refValues(family: AnyResource, key: string) {
  const ref = family.refs[key];
  if (!ref) return undefined;
  const list = () => (ref.family === 'group' ? groupsAny() : poolOf(ref.family));
  return ref.many
    ? { ok: fc.array(from(list), { minLength: 1, maxLength: 3 }), near: fc.constantFrom([], [2_000_000_000]) }
    : { ok: from(list), near: fc.constantFrom(0, 2_000_000_000) };
}

// ----- values ------------------------------------------------------------------------------------------

/** Something from a pool, chosen when the call is made (pools grow as the test runs). */
const from = (list: () => number[]) => fc.nat().map((i) => ({ pick: i, list }));
type Pick = { pick: number; list: () => number[] };
const isPick = (v: unknown): v is Pick => typeof v === 'object' && v !== null && 'pick' in v && 'list' in v;
/** Replaces pool picks by real ids, anywhere in a body. */
function resolve(v: unknown): unknown {
  if (isPick(v)) {
    const l = v.list();
    return l.length ? l[v.pick % l.length] : 0;
  }
  if (Array.isArray(v)) return v.map(resolve);
  if (v && typeof v === 'object')
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolve(x)]));
  return v;
}

const garbage: fc.Arbitrary<unknown> = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ maxLength: 12, unit: 'binary' }), // NUL, astral planes, anything
  fc.string({ minLength: 250, maxLength: 300 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(''),
  fc.constantFrom(
    0,
    -1,
    2_147_483_648,
    1e308,
    "' or 1=1 --",
    '1; drop table users',
    '%',
    '__proto__',
    '\u0000',
    '+0',
  ),
  fc.array(fc.oneof(fc.integer(), fc.string({ maxLength: 4 })), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
);
const n = fc.integer({ min: 0, max: 9_999_999 });
const ids = (list: () => number[], max = 3) => fc.array(from(list), { maxLength: max });
const groupsAny = () => [...poolOf('group'), ...fixedGroups];
const rolesAny = () => [...poolOf('role'), ...assignableRoles];
const permissions = AllPermissions.filter((_, i) => i % 5 === 0);

/** Per field: values that should pass, and near misses that look right but break one rule. */
const values: Record<string, { ok: fc.Arbitrary<unknown>; near: fc.Arbitrary<unknown> }> = {
  name: {
    ok: fc.oneof(
      n.map((x) => `Fuzz ${x}`),
      fc
        .tuple(fc.constantFrom('Flat', 'Entrance B', 'Зелёный', '日本', 'a_b', 'O-Neil'), n)
        .map(([a, x]) => `${a} ${x}`),
    ),
    near: fc.constantFrom('', '   ', 'x'.repeat(256), 'a<b', 'a%b', "O'Neil", 'Fuzz red', 'Administrator'),
  },
  login: {
    ok: fc.tuple(fc.stringMatching(/^[a-z][a-z0-9._-]{2,10}$/), n).map(([a, x]) => `${a}${x}`),
    near: fc.constantFrom('ab', 'has space', 'юзер', 'x'.repeat(65), 'fuzz1', 'FUZZ2', 'admin'),
  },
  email: {
    ok: fc.oneof(
      n.map((x) => `f${x}@example.test`),
      fc.constant(''),
      fc.constant(null),
    ),
    near: fc.constantFrom('not-an-email', 'a@', '@b.test'),
  },
  description: { ok: fc.string({ maxLength: 60 }), near: fc.constant('x'.repeat(2001)) },
  role: { ok: from(rolesAny), near: fc.constantFrom(0, 2_000_000_000) },
  domains: {
    ok: fc.array(from(groupsAny), { minLength: 1, maxLength: 3 }),
    near: fc.constantFrom([], [2_000_000_000]),
  },
  markers: { ok: ids(() => poolOf('marker')), near: fc.constant([2_000_000_000]) },
  elevator_access_disabled: { ok: fc.boolean(), near: fc.constant('true') },
  is_group_admin: { ok: fc.boolean(), near: fc.constant(1) },
  profile: {
    ok: fc.record(
      {
        phone: fc.constantFrom('+491701234567', ''),
        address: fc.string({ maxLength: 30 }),
        time_zone: fc.constantFrom('+01:00', '-05:00'),
        identifier_format: fc.constantFrom('dec', 'hex'),
        time_format: fc.constantFrom('DD-MM-YYYY', 'YYYY-MM-DD'),
        sip_number_id: fc.constantFrom(null, 1),
      },
      { requiredKeys: [] },
    ),
    near: fc.constantFrom(
      { phone: '+44 20' },
      { phone: '12345' },
      { identifier_format: 'oct' },
      { time_format: 'nope' },
      { extra: 1 },
    ),
  },
  password: { ok: fc.constant('long-enough-pw'), near: fc.constantFrom('short', 'x'.repeat(129)) },
  send_registration_link: {
    ok: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    near: fc.constant('no'),
  },
  permissions: {
    ok: fc.subarray(permissions, { maxLength: 6 }),
    near: fc.constantFrom(['users.view', 'nope.code'], ['USERS.VIEW']),
  },
  available_roles: { ok: ids(rolesAny), near: fc.constant([2_000_000_000]) },
  parent_id: {
    ok: fc.oneof({ weight: 6, arbitrary: from(groupsAny) }, { weight: 1, arbitrary: fc.constant(null) }),
    near: fc.constantFrom(0, 2_000_000_000),
  },
  logic_address: {
    ok: fc.oneof(fc.stringMatching(/^[0-9]{1,3}(\.[0-9])?$/), fc.constant(''), fc.constant(null)),
    near: fc.constantFrom('a b', '1/2', 'x'.repeat(65)),
  },
  domain_type_id: {
    ok: fc.oneof(
      from(() => poolOf('domain_type')),
      fc.constant(null),
    ),
    near: fc.constant(2_000_000_000),
  },
  guest_identifier_limits: {
    ok: fc.record(
      {
        max_passes_count: fc.oneof(fc.integer({ min: 0, max: 100 }), fc.constant(null)),
        max_period_days: fc.oneof(fc.integer({ min: 0, max: 3650 }), fc.constant(null)),
      },
      { requiredKeys: [] },
    ),
    near: fc.constantFrom({ max_passes_count: -1 }, { max_period_days: 3651 }),
  },
  device_status_notify: {
    ok: fc.array(
      fc.record({
        user_id: from(() => poolOf('user')),
        notify_about_offline_device: fc.boolean(),
        notify_about_device_task_failed: fc.boolean(),
      }),
      { maxLength: 2 },
    ),
    near: fc.constant([
      { user_id: 2_000_000_000, notify_about_offline_device: true, notify_about_device_task_failed: false },
    ]),
  },
  license_settings: {
    ok: fc.record(
      {
        is_enabled: fc.boolean(),
        notifications: fc.record({
          period: fc.constantFrom('never', 'once', 'everyday'),
          notify_before: fc.integer({ min: 0, max: 365 }),
        }),
        licenses: fc.array(
          fc.record({
            is_active: fc.boolean(),
            features: fc.record(
              {
                sip: fc.record({ is_enabled: fc.boolean(), is_web_dialer_enabled: fc.boolean() }),
                mobile_app: fc.record({ is_enabled: fc.boolean() }, { requiredKeys: [] }),
              },
              { requiredKeys: [] },
            ),
            restrict_period: fc.record({
              is_active: fc.boolean(),
              from: fc.constantFrom(null, '2024-01-01'),
              to: fc.constantFrom(null, '2099-12-31'),
            }),
          }),
          { maxLength: 2 },
        ),
      },
      { requiredKeys: [] },
    ),
    near: fc.constantFrom(
      { notifications: { period: 'sometimes', notify_before: 1 } },
      { licenses: [{ is_active: true, features: { sip: 'yes' } }] },
      {
        licenses: [
          {
            is_active: true,
            features: {},
            restrict_period: { is_active: true, from: '2025-02-30', to: null },
          },
        ],
      },
    ),
  },
  license_limits: {
    ok: fc.record(
      {
        virtual_numbers: fc.oneof(fc.integer({ min: 0, max: 1000 }), fc.constant(null), fc.constant('')),
        users: fc.oneof(fc.integer({ min: 1000, max: 100_000 }), fc.constant(null), fc.constant('5000')),
      },
      { requiredKeys: [] },
    ),
    near: fc.constantFrom({ users: -1 }, { nonsense: 3 }, { mobile_apps: 'ten' }),
  },
  color: {
    ok: fc.integer({ min: 0, max: 0xffffff }).map((c) => `#${c.toString(16).padStart(6, '0')}`),
    near: fc.constantFrom('red', '#12345', '#GGGGGG'),
  },
  number: {
    ok: n.map((x) => String(x)),
    near: fc.constantFrom('', '12a', '+100', '1'.repeat(21), '1 2'),
  },
  domain_id: { ok: from(groupsAny), near: fc.constantFrom(0, 2_000_000_000) },
  type: {
    ok: fc.tuple(fc.stringMatching(/^[a-z][a-z0-9_]{0,8}$/), n).map(([a, x]) => `${a}${x}`),
    near: fc.constantFrom('Has Space', 'entrance', ''),
  },
};

/** Fields whose name another family uses for something else (a device's `type` is no group type). */
const familyValues: Record<string, typeof values> = {
  device: {
    type: {
      ok: fc.constantFrom('panel', 'monitor', 'accesscontroller', 'liftcontroller', 'ip_camera', 'barrier'),
      near: fc.constantFrom('toaster', 'Panel', ''),
    },
    serial_number: {
      ok: n.map((x) => `FZ-${x}`),
      near: fc.constantFrom('', 'a/b', 'a+b', 'a#', 'x'.repeat(65), 'has space'),
    },
    domain_id: { ok: from(groupsAny), near: fc.constantFrom(0, 2_000_000_000) },
    ip_address: {
      ok: fc.oneof(
        fc.tuple(fc.nat(255), fc.nat(255)).map(([a, b]) => `10.0.${a}.${b}`),
        fc.constantFrom('fe80::1', null),
      ),
      near: fc.constantFrom('300.1.1.1', '10.0.0', 'panel.local', '1.2.3.4 '),
    },
    port: { ok: fc.integer({ min: 1, max: 65_535 }), near: fc.constantFrom(0, 65_536, '80') },
    location_latitude: {
      ok: fc.oneof(fc.double({ min: -90, max: 90, noNaN: true }), fc.constantFrom('55,75', '-12,5', null)),
      near: fc.constantFrom(91, '1,2,3', 'north'),
    },
  },
};

/**
 * Mostly a value that should pass; now and then a near miss or garbage. A field without hand-written
 * generators draws its values from its schema (tests/support/schema-arbitrary.ts).
 */
const field = (key: string, schema: ZodType, family: AnyResource) => {
  const v = familyValues[family.noun]?.[key] ?? values[key] ?? refValues(family, key);
  return fc.oneof(
    { weight: 20, arbitrary: v?.ok ?? arbitraryOf(schema) },
    ...(v ? [{ weight: 1, arbitrary: v.near }] : []),
    { weight: 1, arbitrary: garbage },
  );
};

/** A body for a create or update schema: its own keys, plausible or not, all or some, sometimes one extra. */
function bodyFor(shape: Record<string, ZodType>, family: AnyResource): fc.Arbitrary<Record<string, unknown>> {
  const model = Object.fromEntries(Object.entries(shape).map(([k, s]) => [k, field(k, s, family)]));
  return fc
    .tuple(
      fc.oneof(
        { weight: 3, arbitrary: fc.record(model) },
        { weight: 2, arbitrary: fc.record(model, { requiredKeys: [] }) },
      ),
      // one body in ten carries a key the schema does not know
      fc.oneof(
        { weight: 9, arbitrary: fc.constant(null) },
        {
          weight: 1,
          arbitrary: fc.tuple(
            fc.constantFrom('id', 'project_id', 'created_by', 'is_system', '__proto__', 'constructor', 'x'),
            garbage,
          ),
        },
      ),
    )
    .map(([body, extra]) => (extra ? { ...body, [extra[0]]: extra[1] } : body));
}

// ----- the checks --------------------------------------------------------------------------------------

/** A checksum of every row of the families' tables, and the number of audit events. */
async function snapshotOf(
  ts: TestServer,
  tables: readonly string[],
): Promise<Record<string, string | number>> {
  const parts = tables.map(
    (t) =>
      sql`(select md5(coalesce(string_agg(x::text, '|' order by x::text), '')) from ${sql.table(t)} x) as ${sql.ref(t)}`,
  );
  const r = await sql<
    Record<string, string | number>
  >`select ${sql.join(parts)}, (select count(*)::int from audit_events) as audit_events`.execute(
    ts.server.context.db,
  );
  return r.rows[0]!;
}

const catalogue = new Set(Object.keys(ErrorCatalogue));
export const tally: Record<string, { ok: number; refused: number; keys: Set<string> }> = {};

async function attempt(
  w: FuzzWorld,
  tables: readonly string[],
  family: AnyResource,
  cmd: Command,
  id: unknown,
  body: Record<string, unknown>,
) {
  const { ts, api } = w;
  const snapshot = () => snapshotOf(ts, tables);
  const args = resolve(body) as Record<string, unknown>;
  const req = toRequest(cmd, id === undefined ? args : { ...args, id: resolve(id) });
  const before = await snapshot();
  const r = await raw(ts, api, cmd.http.method, req.path, {
    body: req.body === undefined ? undefined : JSON.stringify(req.body),
  });
  const what = `${cmd.id} ${req.path} ${JSON.stringify(req.body)} -> ${r.status} ${JSON.stringify(r.body)}`;
  const t = (tally[cmd.id] ??= { ok: 0, refused: 0, keys: new Set() });
  expect(r.status, what).toBeLessThan(500);
  if (r.status >= 400) {
    expect(catalogue.has(r.body?.message), what).toBe(true);
    expect(r.body.error_code, what).toBe(r.body.message);
    expect(await snapshot(), `a refused call wrote something: ${what}`).toEqual(before);
    t.refused++;
    if (process.env.FUZZ_DEBUG) console.log(what.slice(0, 400));
    t.keys.add(r.body.message);
    return;
  }
  expect(r.status, what).toBe(200);
  const saved = cmd.result.parse(r.body) as { data: { id: number } };
  const after = await snapshot();
  expect(after.audit_events, `a write without an audit event: ${what}`).toBe(Number(before.audit_events) + 1);
  // what the reply says was saved is what is stored
  expect(await family.commands.get.run({ api }, { id: saved.data.id }), what).toEqual(saved.data);
  if (cmd.id.endsWith('.create')) poolOf(family.noun).push(saved.data.id);
  t.ok++;
}

export function fuzzFamilies(families: readonly AnyResource[], world: () => FuzzWorld): void {
  // every table the families write: a refused call must have changed none of them
  const tables = [...new Set(families.flatMap((f) => familyTables(f)))];
  describe.each(families.map((r) => [r.noun, r] as const))('%s', (_, family) => {
    const createKeys = family.createArgs.shape as Record<string, ZodType>;
    const updateKeys = family.updateArgs.shape as Record<string, ZodType>;

    it(`create (${family.commands.create.http.method} /${family.segment}): 2xx or a catalogued 4xx that wrote nothing`, async () => {
      await fc.assert(
        fc.asyncProperty(bodyFor(createKeys, family), (body) =>
          attempt(world(), tables, family, family.commands.create, undefined, body),
        ),
        { numRuns: RUNS },
      );
    });

    it(`update (${family.commands.update.http.method} /${family.segment}/:id): 2xx or a catalogued 4xx that wrote nothing`, async () => {
      const id = fc.oneof(
        { weight: 8, arbitrary: from(() => poolOf(family.noun)) },
        { weight: 1, arbitrary: fc.constantFrom(0, -1, 2_000_000_000, 'abc', 1.5) },
      );
      await fc.assert(
        fc.asyncProperty(id, bodyFor(updateKeys, family), (target, body) =>
          attempt(world(), tables, family, family.commands.update, target, body),
        ),
        { numRuns: RUNS },
      );
    });
  });
}
