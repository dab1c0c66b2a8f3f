/**
 * The backup file (docs/decisions.md "Backups"): a zip holding
 *
 * - `manifest.json`: `{format: 'lintel-backup', format_version, created_at, server_version, source: {database,
 *   project_uid, project_name}, name, entities, tables: [{name, set, file, rows, columns}]}`;
 * - `tables/<table>.ndjson`: one JSON object per line per row, the row as PostgreSQL's `to_jsonb` writes it
 *   (timestamps as ISO text with their offset, jsonb as JSON), every column of the table at the time.
 *
 * A reader takes a file whose `format_version` is at most its own; columns it does not know are ignored,
 * columns the file lacks take their defaults. Entity sets map to tables here: a family that lands later
 * (identifiers, access rules, schedules) adds its set and tables to `TABLES`; older files simply lack them.
 */
import { sql, type RawBuilder } from 'kysely';
import { BackupEntitySets, type BackupEntitySet } from '@lintel/commands';

export const BACKUP_FORMAT = 'lintel-backup';
export const BACKUP_FORMAT_VERSION = 1;

export interface BackupTable {
  /** the table's name, and its file `tables/<name>.ndjson` */
  name: string;
  set: BackupEntitySet;
  /** the columns that name a row, in keyset order */
  key: readonly string[];
  /** rows of project `p` (alias `t`) */
  scope: (p: number) => RawBuilder<unknown>;
  /** its project column, rewritten to the project a backup is applied to */
  projectColumn?: string;
  /** shared with other projects: upserted, never deleted by an apply */
  shared?: boolean;
  /** a link table (no id of its own): the project's links are replaced as a whole */
  link?: boolean;
  /** the `projects` row itself: its name, description and settings only */
  projectRow?: boolean;
}

const own = (p: number) => sql`t.project_id = ${p}`;
const ofUsers = (p: number) => sql`t.user_id in (select id from users where project_id = ${p})`;

/** Every table a backup may hold, in the order they are applied (parents first); deletes go in reverse. */
export const TABLES: readonly BackupTable[] = [
  {
    name: 'projects',
    set: 'settings',
    key: ['id'],
    scope: (p) => sql`t.id = ${p}`,
    projectRow: true,
  },
  { name: 'domain_types', set: 'groups', key: ['id'], scope: own, projectColumn: 'project_id' },
  { name: 'domains', set: 'groups', key: ['id'], scope: own, projectColumn: 'project_id' },
  { name: 'roles', set: 'roles', key: ['id'], scope: own, projectColumn: 'project_id' },
  { name: 'markers', set: 'markers', key: ['id'], scope: own, projectColumn: 'project_id' },
  {
    name: 'accounts',
    set: 'users',
    key: ['id'],
    scope: (p) => sql`t.id in (select account_id from users where project_id = ${p})`,
    shared: true,
  },
  { name: 'users', set: 'users', key: ['id'], scope: own, projectColumn: 'project_id' },
  { name: 'user_domains', set: 'users', key: ['user_id', 'domain_id'], scope: ofUsers, link: true },
  { name: 'user_markers', set: 'users', key: ['user_id', 'marker_id'], scope: ofUsers, link: true },
  { name: 'devices', set: 'devices', key: ['id'], scope: own, projectColumn: 'project_id' },
  { name: 'sip_numbers', set: 'sip_numbers', key: ['id'], scope: own, projectColumn: 'project_id' },
  { name: 'licenses', set: 'licences', key: ['id'], scope: own, projectColumn: 'project_id' },
];

/** The project row's columns a backup carries (the rest — uid, instance id — belong to the server). */
export const PROJECT_COLUMNS = ['name', 'description', 'settings'] as const;

export function tablesOf(sets: readonly BackupEntitySet[]): BackupTable[] {
  return TABLES.filter((t) => sets.includes(t.set));
}

/** Sets in their canonical order, without repeats. */
export function orderedSets(sets: readonly string[]): BackupEntitySet[] {
  return BackupEntitySets.filter((s) => sets.includes(s));
}

export interface ManifestTable {
  name: string;
  set: BackupEntitySet;
  file: string;
  rows: number;
  columns: string[];
}

export interface Manifest {
  format: typeof BACKUP_FORMAT;
  format_version: number;
  created_at: string;
  server_version: string;
  source: { database: 'pglite' | 'postgres'; project_uid: string; project_name: string };
  name: string;
  entities: BackupEntitySet[];
  tables: ManifestTable[];
}

export const fileOf = (table: string) => `tables/${table}.ndjson`;
