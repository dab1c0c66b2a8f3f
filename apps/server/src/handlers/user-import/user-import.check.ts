import { sql, type Kysely } from 'kysely';
import { fieldErrors, mayAssignGroups, mayGrantRole, type CallerFacts } from '@lintel/core';
import {
  UserImportColumns,
  userResource,
  MULTI_VALUE_SEPARATOR,
  type ImportRow,
  type ImportRowError,
} from '@lintel/commands';
import type { DB } from '../../db/schema';
import type { Caller } from '../../engine/caller';
import { callerFacts } from '../../engine/grants';
import { DefaultUserProfile } from '../user/user.store';
import type { ImportDB } from './user-import.tables';

/** A problem of a row, before the line is attached. */
export type Problem = Omit<ImportRowError, 'line'>;

/** What a valid row will insert (names resolved to ids); the password still in clear until hashed. */
export interface RowValues {
  login: string;
  email: string | null;
  name: string;
  description: string;
  role_id: number;
  domain_ids: number[];
  marker_ids: number[];
  profile: Record<string, unknown>;
  elevator_access_disabled: boolean;
  is_group_admin: boolean;
  password: string | null;
}

export interface CheckedRow {
  line: number;
  /** lower-cased login and e-mail as given, also for invalid rows: the first line holding one keeps it */
  login_key: string | null;
  email_key: string | null;
  problems: Problem[];
  values: RowValues | null;
}

const MAX_ID = 2_147_483_647;
const COLUMNS = new Set<string>(UserImportColumns);
const PROFILE_COLUMNS = ['phone', 'address', 'time_zone', 'identifier_format', 'time_format'] as const;
const TEXT_COLUMNS = ['login', 'name', 'email', 'description', 'password', ...PROFILE_COLUMNS] as const;
const BOOLEAN_COLUMNS = ['elevator_access_disabled', 'is_group_admin'] as const;

type Cell = ImportRow[string];

// ----- cells -----------------------------------------------------------------------------------------------

/** A text cell: trimmed, empty as absent. Numbers and booleans read as their text; lists are refused. */
function textCell(v: Cell | undefined): { ok: true; value: string | undefined } | { ok: false } {
  if (v === undefined || v === null) return { ok: true, value: undefined };
  if (Array.isArray(v)) return { ok: false };
  const s = String(v).trim();
  return { ok: true, value: s === '' ? undefined : s };
}

const TRUE = new Set(['true', '1', 'yes', 'y', 'on']);
const FALSE = new Set(['false', '0', 'no', 'n', 'off']);

function booleanCell(v: Cell | undefined): { ok: true; value: boolean | undefined } | { ok: false } {
  if (v === undefined || v === null) return { ok: true, value: undefined };
  if (typeof v === 'boolean') return { ok: true, value: v };
  if (Array.isArray(v)) return { ok: false };
  const s = String(v).trim().toLowerCase();
  if (s === '') return { ok: true, value: undefined };
  if (TRUE.has(s)) return { ok: true, value: true };
  if (FALSE.has(s)) return { ok: true, value: false };
  return { ok: false };
}

/** How a cell names a related entity: by id, by name (or a group's logical address), by address only. */
type Ref =
  | { kind: 'id'; id: number; raw: string }
  | { kind: 'text'; text: string }
  | { kind: 'address'; text: string };

function refOf(item: string | number): Ref | null {
  if (typeof item === 'number')
    return Number.isInteger(item)
      ? { kind: 'id', id: item, raw: String(item) }
      : { kind: 'text', text: String(item) };
  const s = item.trim();
  if (s === '') return null;
  if (/^\d+$/.test(s)) return { kind: 'id', id: Number(s), raw: s };
  if (s.startsWith('@') && s.length > 1) return { kind: 'address', text: s.slice(1) };
  return { kind: 'text', text: s };
}

/** A many-valued cell: a list, or text split at `;`. */
function refsCell(v: Cell | undefined, many: boolean): { ok: true; refs: Ref[] } | { ok: false } {
  if (v === undefined || v === null) return { ok: true, refs: [] };
  if (typeof v === 'boolean') return { ok: false };
  if (Array.isArray(v)) {
    if (!many) return { ok: false };
    return { ok: true, refs: v.map(refOf).filter((r): r is Ref => r !== null) };
  }
  if (typeof v === 'number') return { ok: true, refs: [refOf(v)].filter((r): r is Ref => r !== null) };
  const parts = many ? v.split(MULTI_VALUE_SEPARATOR) : [v];
  return { ok: true, refs: parts.map(refOf).filter((r): r is Ref => r !== null) };
}

// ----- names to ids ----------------------------------------------------------------------------------------

interface Named {
  id: number;
  name: string;
  logic_address?: string | null;
}

type Resolved = { id: number } | { missing: string } | { ambiguous: string; count: number };

/** The entities of one kind the batch names, found in one query, and how each reference reads. */
class Lookup {
  private readonly byId = new Map<number, Named>();
  private readonly byText = new Map<string, Named[]>();
  private readonly byAddress = new Map<string, Named[]>();

  constructor(rows: readonly Named[]) {
    for (const r of rows) {
      this.byId.set(r.id, r);
      const key = r.name.toLowerCase();
      this.byText.set(key, [...(this.byText.get(key) ?? []), r]);
      if (r.logic_address)
        this.byAddress.set(r.logic_address, [...(this.byAddress.get(r.logic_address) ?? []), r]);
    }
  }

  resolve(ref: Ref): Resolved {
    if (ref.kind === 'id') return this.byId.has(ref.id) ? { id: ref.id } : { missing: ref.raw };
    const found = new Map<number, Named>();
    if (ref.kind === 'address') for (const r of this.byAddress.get(ref.text) ?? []) found.set(r.id, r);
    else
      for (const r of [
        ...(this.byAddress.get(ref.text) ?? []),
        ...(this.byText.get(ref.text.toLowerCase()) ?? []),
      ])
        found.set(r.id, r);
    if (found.size === 1) return { id: [...found.keys()][0]! };
    const shown = ref.kind === 'address' ? `@${ref.text}` : ref.text;
    return found.size === 0 ? { missing: shown } : { ambiguous: shown, count: found.size };
  }
}

function split(refs: readonly Ref[]) {
  const ids = new Set<number>();
  const texts = new Set<string>();
  const addresses = new Set<string>();
  for (const r of refs) {
    if (r.kind === 'id') {
      if (r.id >= 1 && r.id <= MAX_ID) ids.add(r.id);
    } else if (r.kind === 'address') addresses.add(r.text);
    else {
      texts.add(r.text.toLowerCase());
      addresses.add(r.text);
    }
  }
  return { ids: [...ids], texts: [...texts], addresses: [...addresses] };
}

async function groupLookup(q: Kysely<DB>, projectId: number, refs: readonly Ref[]): Promise<Lookup> {
  const { ids, texts, addresses } = split(refs);
  if (!ids.length && !texts.length && !addresses.length) return new Lookup([]);
  const rows = await q
    .selectFrom('domains')
    .select(['id', 'name', 'logic_address'])
    .where('project_id', '=', projectId)
    .where((eb) =>
      eb.or([
        ...(ids.length ? [eb('id', 'in', ids)] : []),
        ...(addresses.length ? [eb('logic_address', 'in', addresses)] : []),
        ...(texts.length ? [eb(sql<string>`lower(name)`, 'in', texts)] : []),
      ]),
    )
    .execute();
  return new Lookup(rows);
}

async function markerLookup(q: Kysely<DB>, projectId: number, refs: readonly Ref[]): Promise<Lookup> {
  const { ids, texts } = split(
    refs.map((r) => (r.kind === 'address' ? { kind: 'text' as const, text: `@${r.text}` } : r)),
  );
  if (!ids.length && !texts.length) return new Lookup([]);
  const rows = await q
    .selectFrom('markers')
    .select(['id', 'name'])
    .where('project_id', '=', projectId)
    .where((eb) =>
      eb.or([
        ...(ids.length ? [eb('id', 'in', ids)] : []),
        ...(texts.length ? [eb(sql<string>`lower(name)`, 'in', texts)] : []),
      ]),
    )
    .execute();
  return new Lookup(rows);
}

interface RoleInfo extends Named {
  permissions: string[];
}

/** Why the caller may not give this role (the grant predicate user.create uses), or null. */
function roleRefusal(facts: CallerFacts, role: RoleInfo): Problem | null {
  const v = mayGrantRole(facts, role);
  return v.ok ? null : { field: 'role', key: 'method_prohibited', params: v.data };
}

// ----- rows ------------------------------------------------------------------------------------------------

interface Parsed {
  line: number;
  problems: Problem[];
  /** fields whose problems are already known: the create schema's complaints about them are dropped */
  settled: Set<string>;
  text: Partial<Record<(typeof TEXT_COLUMNS)[number], string>>;
  flags: Partial<Record<(typeof BOOLEAN_COLUMNS)[number], boolean>>;
  role: Ref[];
  domains: Ref[];
  markers: Ref[];
}

function parseCells(row: ImportRow): Parsed {
  const p: Parsed = {
    line: row.line,
    problems: [],
    settled: new Set(),
    text: {},
    flags: {},
    role: [],
    domains: [],
    markers: [],
  };
  for (const key of Object.keys(row)) {
    if (key !== 'line' && !COLUMNS.has(key)) p.problems.push({ field: key, rule: 'unknown_field' });
  }
  for (const col of TEXT_COLUMNS) {
    const r = textCell(row[col]);
    if (r.ok) {
      if (r.value !== undefined) p.text[col] = r.value;
    } else {
      p.problems.push({ field: col, rule: 'invalid_type', params: { expected: 'string' } });
      p.settled.add(col);
    }
  }
  for (const col of BOOLEAN_COLUMNS) {
    const r = booleanCell(row[col]);
    if (r.ok) {
      if (r.value !== undefined) p.flags[col] = r.value;
    } else {
      p.problems.push({ field: col, rule: 'invalid_type', params: { expected: 'boolean' } });
      p.settled.add(col);
    }
  }
  for (const col of ['role', 'domains', 'markers'] as const) {
    const r = refsCell(row[col], col !== 'role');
    if (r.ok) p[col] = r.refs;
    else {
      p.problems.push({
        field: col,
        rule: 'invalid_type',
        params: { expected: col === 'role' ? 'id or name' : 'ids or names' },
      });
      p.settled.add(col);
    }
  }
  return p;
}

/** `profile.phone` → `phone`, `domains.3` → `domains`: problems name the file's columns. */
function columnOf(field: string): string {
  if (field.startsWith('profile.')) return field.slice('profile.'.length);
  return field.split('.')[0]!;
}

function resolveMany(p: Parsed, col: 'domains' | 'markers', lookup: Lookup, entity: string): number[] {
  const ids: number[] = [];
  const missing: string[] = [];
  for (const ref of p[col]) {
    const r = lookup.resolve(ref);
    if ('id' in r) ids.push(r.id);
    else if ('missing' in r) missing.push(r.missing);
    else {
      p.problems.push({ field: col, rule: 'ambiguous_name', params: { value: r.ambiguous, count: r.count } });
      p.settled.add(col);
    }
  }
  if (missing.length) {
    p.problems.push({ field: col, key: 'invalid_related_entity', params: { entity, values: missing } });
    p.settled.add(col);
  }
  return [...new Set(ids)];
}

/**
 * Checks a batch like `user.create` checks one user: the same create schema, a grantable role, assignable
 * groups, existing markers, a login and e-mail free in the database. Uniqueness inside the import is the
 * caller's next step (it needs the staging table).
 */
export async function checkRows(
  q: Kysely<DB>,
  caller: Caller,
  rows: readonly ImportRow[],
): Promise<CheckedRow[]> {
  const parsed = rows.map(parseCells);
  const projectId = caller.projectId;
  const [groups, markers, roles, facts] = await Promise.all([
    groupLookup(
      q,
      projectId,
      parsed.flatMap((p) => p.domains),
    ),
    markerLookup(
      q,
      projectId,
      parsed.flatMap((p) => p.markers),
    ),
    q.selectFrom('roles').select(['id', 'name', 'permissions']).where('project_id', '=', projectId).execute(),
    callerFacts(caller),
  ]);
  const roleLookup = new Lookup(roles);
  const roleById = new Map(roles.map((r) => [r.id, r]));

  const out: CheckedRow[] = parsed.map((p) => {
    // role: one reference
    let roleId: number | undefined;
    if (p.role.length > 1) {
      p.problems.push({ field: 'role', rule: 'invalid_type', params: { expected: 'id or name' } });
      p.settled.add('role');
    } else if (p.role.length === 1) {
      const r = roleLookup.resolve(p.role[0]!);
      if ('id' in r) {
        roleId = r.id;
        const refusal = roleRefusal(facts, roleById.get(r.id)!);
        if (refusal) p.problems.push(refusal);
      } else {
        p.problems.push(
          'missing' in r
            ? {
                field: 'role',
                key: 'invalid_related_entity',
                params: { entity: 'roles', values: [r.missing] },
              }
            : { field: 'role', rule: 'ambiguous_name', params: { value: r.ambiguous, count: r.count } },
        );
        p.settled.add('role');
      }
    }
    const domainIds = resolveMany(p, 'domains', groups, 'domains');
    const groupsVerdict = mayAssignGroups(facts, domainIds);
    if (!groupsVerdict.ok)
      p.problems.push({ field: 'domains', key: 'method_prohibited', params: groupsVerdict.data });
    const markerIds = resolveMany(p, 'markers', markers, 'markers');

    const profile: Record<string, unknown> = {};
    for (const col of PROFILE_COLUMNS) if (p.text[col] !== undefined) profile[col] = p.text[col];
    // the body `user.create` would get, checked by its own schema; a reference that did not resolve stands
    // in as a valid id, since its problem is reported already
    const input: Record<string, unknown> = {
      login: p.text.login,
      name: p.text.name,
      description: p.text.description,
      email: p.text.email,
      role: p.settled.has('role') ? 1 : roleId,
      domains: p.settled.has('domains') ? [1] : domainIds,
      markers: p.settled.has('markers') ? [] : markerIds,
      elevator_access_disabled: p.flags.elevator_access_disabled,
      is_group_admin: p.flags.is_group_admin,
      profile,
      password: p.text.password,
      send_registration_link: false,
    };
    const result = userResource.createArgs.safeParse(input);
    if (!result.success) {
      const seen = new Set<string>();
      for (const f of fieldErrors(result.error, input)) {
        const field = columnOf(f.field);
        if (p.settled.has(field)) continue;
        const id = `${field}:${f.rule}`;
        if (seen.has(id)) continue;
        seen.add(id);
        p.problems.push({ field, rule: f.rule, ...(f.params ? { params: f.params } : {}) });
      }
    }
    const login_key = p.text.login?.toLowerCase() ?? null;
    const email_key = p.text.email?.toLowerCase() ?? null;
    const values: RowValues | null =
      result.success && !p.problems.length
        ? {
            login: result.data.login,
            email: result.data.email || null,
            name: result.data.name,
            description: result.data.description ?? '',
            role_id: result.data.role,
            domain_ids: [...new Set(result.data.domains)],
            marker_ids: [...new Set(result.data.markers ?? [])],
            profile: { ...DefaultUserProfile, ...result.data.profile },
            elevator_access_disabled: result.data.elevator_access_disabled ?? false,
            is_group_admin: result.data.is_group_admin ?? false,
            password: result.data.password ?? null,
          }
        : null;
    return { line: p.line, login_key, email_key, problems: p.problems, values };
  });

  // logins and e-mails taken anywhere on the server (a new login is a new account: docs/decisions.md)
  const logins = [...new Set(out.map((r) => r.login_key).filter((k): k is string => k !== null))];
  const emails = [...new Set(out.map((r) => r.email_key).filter((k): k is string => k !== null))];
  const [takenLogins, takenEmails] = await Promise.all([
    logins.length
      ? sql<{
          k: string;
        }>`select lower(login) as k from accounts where lower(login) = any(array(select jsonb_array_elements_text(${JSON.stringify(logins)}::jsonb)))
          union select lower(email) from accounts where lower(email) = any(array(select jsonb_array_elements_text(${JSON.stringify(logins)}::jsonb)))`
          .execute(q)
          .then((r) => r.rows)
      : [],
    emails.length
      ? sql<{
          k: string;
        }>`select lower(email) as k from accounts where lower(email) = any(array(select jsonb_array_elements_text(${JSON.stringify(emails)}::jsonb)))
          union select lower(login) from accounts where lower(login) = any(array(select jsonb_array_elements_text(${JSON.stringify(emails)}::jsonb)))`
          .execute(q)
          .then((r) => r.rows)
      : [],
  ]);
  const loginTaken = new Set(takenLogins.map((r) => r.k));
  const emailTaken = new Set(takenEmails.map((r) => r.k));
  for (const r of out) {
    if (r.login_key && loginTaken.has(r.login_key))
      r.problems.push({ field: 'login', key: 'login_already_used' });
    if (r.email_key && emailTaken.has(r.email_key))
      r.problems.push({ field: 'email', key: 'email_already_used' });
  }
  return out;
}

/**
 * Uniqueness inside the import: a login or e-mail an earlier line holds (in the staging table, or earlier in
 * this batch) is `duplicate_in_file {line}`. Lines of this batch already staged (a batch sent again) do not count.
 */
export async function checkDuplicates(
  q: Kysely<ImportDB>,
  importId: string,
  rows: CheckedRow[],
): Promise<void> {
  const lines = rows.map((r) => r.line);
  const logins = [...new Set(rows.map((r) => r.login_key).filter((k): k is string => k !== null))];
  const emails = [...new Set(rows.map((r) => r.email_key).filter((k): k is string => k !== null))];
  const first = { login: new Map<string, number>(), email: new Map<string, number>() };
  if (logins.length || emails.length) {
    // each key through its own index, the list as one JSON parameter: `= any(array(...))` reaches the index
    // even before the staging table has statistics (it grows from nothing to the whole file in one import)
    const batch = new Set(lines);
    const keyed = (column: 'login_key' | 'email_key', keys: string[]) =>
      keys.length
        ? sql<{
            line: number;
            login_key: string | null;
            email_key: string | null;
          }>`select line, login_key, email_key from user_import_rows
            where import_id = ${importId} and ${sql.ref(column)} = any(array(select jsonb_array_elements_text(${JSON.stringify(keys)}::jsonb)))`.execute(
            q,
          )
        : Promise.resolve({ rows: [] });
    const [byLogin, byEmail] = await Promise.all([keyed('login_key', logins), keyed('email_key', emails)]);
    const staged = [...byLogin.rows, ...byEmail.rows]
      .filter((s) => !batch.has(s.line))
      .sort((a, b) => a.line - b.line);
    for (const s of staged) {
      if (s.login_key && !first.login.has(s.login_key)) first.login.set(s.login_key, s.line);
      if (s.email_key && !first.email.has(s.email_key)) first.email.set(s.email_key, s.line);
    }
  }
  for (const r of [...rows].sort((a, b) => a.line - b.line)) {
    for (const field of ['login', 'email'] as const) {
      const key = field === 'login' ? r.login_key : r.email_key;
      if (!key) continue;
      const held = first[field].get(key);
      if (held !== undefined && held < r.line)
        r.problems.push({ field, rule: 'duplicate_in_file', params: { line: held } });
      else if (held === undefined || held > r.line) first[field].set(key, r.line);
    }
  }
}
