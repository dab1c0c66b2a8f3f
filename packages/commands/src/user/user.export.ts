import { MULTI_VALUE_SEPARATOR, UserExportColumns } from './user.import';
import type { User } from './user.resource';

/**
 * Export of users, the part every surface shares (`lintel users export`, the console's Export button): how a
 * user of `user.export`'s stream becomes a row of the import's columns, and how groups, roles and markers
 * are named so that the file imports back (`lintel users import`) to the same entities. Writing the file
 * (CSV, XLSX, JSON; a stream or a Blob) is each surface's own.
 */

export type UserExportColumn = (typeof UserExportColumns)[number];

/** A cell of an exported row: text, a number, a boolean, empty, or a list (`domains`, `markers`). */
export type ExportCell = string | number | boolean | null | Array<string | number>;

/** One exported user: the import columns (lists as lists; CSV and XLSX join them with `;`). */
export type UserExportRow = Record<UserExportColumn, ExportCell>;

/** Whether a name reads back as a name: digits are ids, `@` starts an address, `;` separates values. */
export const plainName = (n: string): boolean =>
  n.trim() === n && n !== '' && !/^\d+$/.test(n) && !n.startsWith('@') && !n.includes(';');

/** How a reference is written: by id, or by a name the import resolves to the same entity. */
export type RefNamer = (ref: { id: number; name: string }) => string | number;

export const byId: RefNamer = (ref) => ref.id;
/** Roles and markers: names are unique in a project. */
export const byName: RefNamer = (ref) => (plainName(ref.name) ? ref.name : ref.id);

/** What naming groups needs to know of every group (`group.full` gives it). */
export type GroupNames = ReadonlyArray<{ id: number; name: string; logic_address: string | null }>;

/**
 * Groups by name only where the name is unique (case-insensitively) and no group has it as its address;
 * else by `@address` where that is unique; else by id — so the file imports back to the same groups.
 */
export function groupNamer(groups: GroupNames): RefNamer {
  const names = new Map<string, number>();
  const addresses = new Map<string, number>();
  for (const g of groups) {
    names.set(g.name.toLowerCase(), (names.get(g.name.toLowerCase()) ?? 0) + 1);
    if (g.logic_address) addresses.set(g.logic_address, (addresses.get(g.logic_address) ?? 0) + 1);
  }
  const byGroup = new Map(groups.map((g) => [g.id, g]));
  return (ref) => {
    const g = byGroup.get(ref.id);
    if (!g) return byName(ref);
    if (plainName(g.name) && names.get(g.name.toLowerCase()) === 1 && !addresses.has(g.name)) return g.name;
    const a = g.logic_address;
    if (a && addresses.get(a) === 1 && !a.includes(';') && a.trim() === a) return `@${a}`;
    return g.id;
  };
}

/** `--refs`: references by id, or by name. */
export const ExportRefs = ['id', 'name'] as const;
export type ExportRefs = (typeof ExportRefs)[number];

export interface ExportNamers {
  role: RefNamer;
  group: RefNamer;
  marker: RefNamer;
}

/**
 * The namers of an export. By name, `groups` (every group the caller sees) tells which group names are
 * unique; without them (no right to list groups) groups are named like roles.
 */
export function exportNamers(refs: ExportRefs, groups: GroupNames | null = null): ExportNamers {
  if (refs === 'id') return { role: byId, group: byId, marker: byId };
  return { role: byName, group: groups ? groupNamer(groups) : byName, marker: byName };
}

/** A user as a row of the import columns: export → import round-trips. */
export function exportRow(u: User, refs: ExportNamers): UserExportRow {
  return {
    login: u.login,
    name: u.name,
    email: u.email ?? '',
    description: u.description,
    role: refs.role(u.role),
    domains: u.domains.map(refs.group),
    markers: u.markers.map(refs.marker),
    phone: u.profile.phone,
    address: u.profile.address,
    time_zone: u.profile.time_zone,
    identifier_format: u.profile.identifier_format,
    time_format: u.profile.time_format,
    elevator_access_disabled: u.elevator_access_disabled,
    is_group_admin: u.is_group_admin,
  };
}

/**
 * A row as the cells of a CSV line, in the order of `UserExportColumns`: lists joined by `;`, booleans as
 * `true`/`false`, nothing as an empty cell (what the CLI's CSV writer writes and its reader reads).
 */
export function csvCells(row: UserExportRow): Array<string | number> {
  return UserExportColumns.map((c) => {
    const v = row[c];
    if (Array.isArray(v)) return v.join(MULTI_VALUE_SEPARATOR);
    if (v === null) return '';
    return typeof v === 'boolean' ? String(v) : v;
  });
}
