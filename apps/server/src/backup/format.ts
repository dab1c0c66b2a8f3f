/**
 * The backup file (docs/decisions.md "Backups", "Backups as COPY text"): a zip holding
 *
 * - `manifest.json`: `{format: 'lintel-backup', format_version, created_at, server_version, source: {database,
 *   project_uid, project_name}, name, entities, tables: [{name, set, file, rows, columns}]}`;
 * - `tables/<table>.copy` (format 4): the table's rows as PostgreSQL's COPY writes them in its text format
 *   (https://www.postgresql.org/docs/current/sql-copy.html, "Text Format": one row a line, the columns in the
 *   order of the manifest's `columns` — the entry's header —, separated by tabs, `\N` for null, backslash, tab,
 *   new line and carriage return escaped by a backslash), each value as its type's text output under the
 *   settings of `COPY_SETTINGS` (ISO dates, timestamps in UTC with their offset, jsonb as JSON text);
 * - `tables/<table>.ndjson` (formats 1–3, still read): one JSON object per line per row, the row as PostgreSQL's
 *   `row_to_json` (or, before 2026-11-27, `to_jsonb`) writes it;
 * - `files/<kind>/<name>` (format 2): the stored files the rows name — face photos (`faces`, with `access`),
 *   avatars (`avatars`, with `users`), white-label logos (format 3: the project's `logos`, with `settings`; the
 *   groups' `group_logos`, with `groups`) — as they are stored, counted in the manifest's `files`.
 *
 * A reader takes a file whose `format_version` is at most its own; columns it does not know are ignored,
 * columns the file lacks take their defaults. Entity sets map to tables here: a family that lands later adds its
 * set and tables to `TABLES` (as access control did); older files simply lack them.
 */
import { sql, type RawBuilder } from 'kysely';
import { BackupEntitySets, type BackupEntitySet } from '@lintel/commands';

export const BACKUP_FORMAT = 'lintel-backup';
/**
 * 1: tables only; 2: and the stored files the rows name (`files/`); 3: and the white-label logos (kinds a
 * reader of 2 does not know); 4: the tables as COPY text (`tables/<table>.copy`) instead of NDJSON — what
 * PostgreSQL writes and reads fastest, so a make costs the server what pg_dump's does (bench/backup). A file of
 * format 1–3 applies as it did (its NDJSON, format 1 without files).
 */
export const BACKUP_FORMAT_VERSION = 4;

/** The first format whose tables are COPY text; before it, NDJSON. */
export const COPY_TEXT_FORMAT = 4;

/**
 * The session settings a make writes its COPY text under and an apply reads it under, whatever the server's
 * defaults: dates as ISO text (unambiguous to any DateStyle), timestamps in UTC with their offset, intervals
 * in PostgreSQL's own style, floating-point numbers exact, bytea as hex.
 */
export const COPY_SETTINGS: Readonly<Record<string, string>> = {
  datestyle: 'ISO, YMD',
  intervalstyle: 'postgres',
  timezone: 'UTC',
  extra_float_digits: '3',
  bytea_output: 'hex',
};

export interface BackupTable {
  /** the table's name, and its entry `tables/<name>.copy` */
  name: string;
  set: BackupEntitySet;
  /** the columns that name a row, in keyset order (its primary key: `id`, or a link's or a pass's own) */
  key: readonly string[];
  /** rows of project `p` (alias `t`) */
  scope: (p: number) => RawBuilder<unknown>;
  /** its project column, rewritten to the project a backup is applied to */
  projectColumn?: string;
  /** shared with other projects: upserted, never deleted by an apply */
  shared?: boolean;
  /**
   * a link table (no id of its own): the project's links are replaced as a whole (other columns: updated). Its
   * scope goes through a parent whose `project_id` is not null, so on a server of one project every row is the
   * project's: the make then reads it whole (make.ts, `rowsQuery`).
   */
  link?: boolean;
  /**
   * Columns naming who made the row (`on delete set null`): one naming no user of the project the backup is
   * applied to becomes null, so a set applied without `users` (or to a project whose users differ) keeps its
   * rows rather than failing on who made them.
   */
  madeBy?: readonly string[];
  /**
   * Columns referencing a table with a `project_id` (column → table): each must name a row of the project the
   * backup is applied to — a foreign key alone would let a row point at another project's user or device.
   */
  refs?: Readonly<Record<string, string>>;
  /**
   * Columns that are the server's, not the configuration's: in the file, never written by an apply (a new row
   * takes its default or its trigger's value, a row there keeps its own)
   */
  serverColumns?: readonly string[];
  /** the `projects` row itself: its name, description and settings only */
  projectRow?: boolean;
}

const own = (p: number) => sql`t.project_id = ${p}`;
const ofUsers = (p: number) => sql`t.user_id in (select id from users where project_id = ${p})`;
const ofRules = (p: number) => sql`t.access_rule_id in (select id from access_rules where project_id = ${p})`;
const ofAreas = (p: number) => sql`t.access_area_id in (select id from access_areas where project_id = ${p})`;
const madeBy = ['created_by'] as const;
const ruleLink = (name: string, column: string, table: string): BackupTable => ({
  name,
  set: 'access',
  key: ['access_rule_id', column],
  scope: ofRules,
  link: true,
  refs: { access_rule_id: 'access_rules', [column]: table },
});
const areaLink = (name: string): BackupTable => ({
  name,
  set: 'access',
  key: ['access_area_id', 'device_id'],
  scope: ofAreas,
  link: true,
  refs: { access_area_id: 'access_areas', device_id: 'devices' },
});

/**
 * Access control (`access`): schedules, holidays and their groups, identifiers, guest passes (the key's hash
 * with them, so a guest's link keeps working), the per-device pass counts (migration 0081), access rules and
 * their relations, anti-passback areas. It references `users` (identifiers' owners, rules' users), `devices`
 * and `groups` by id: applied without them, those must be the project's rows already. What the devices hold
 * (`device_access_ledger`), device tasks, ACS events and `access_sync_changes` are not configuration: an
 * apply asks the access sync to plan the project again instead (apply.ts).
 */
const ACCESS: readonly BackupTable[] = [
  { name: 'schedules', set: 'access', key: ['id'], scope: own, projectColumn: 'project_id', madeBy },
  { name: 'holidays', set: 'access', key: ['id'], scope: own, projectColumn: 'project_id', madeBy },
  {
    name: 'holiday_domains',
    set: 'access',
    key: ['holiday_id', 'domain_id'],
    scope: (p) => sql`t.holiday_id in (select id from holidays where project_id = ${p})`,
    link: true,
    refs: { holiday_id: 'holidays', domain_id: 'domains' },
  },
  {
    name: 'identifiers',
    set: 'access',
    key: ['id'],
    scope: own,
    projectColumn: 'project_id',
    madeBy,
    refs: { owner: 'users' },
  },
  {
    name: 'guest_passes',
    set: 'access',
    key: ['identifier_id'],
    scope: own,
    projectColumn: 'project_id',
    madeBy,
    refs: { identifier_id: 'identifiers' },
  },
  {
    name: 'identifier_device_passes',
    set: 'access',
    key: ['identifier_id', 'device_id'],
    scope: (p) => sql`t.identifier_id in (select id from identifiers where project_id = ${p})`,
    link: true,
    refs: { identifier_id: 'identifiers', device_id: 'devices' },
  },
  { name: 'access_rules', set: 'access', key: ['id'], scope: own, projectColumn: 'project_id', madeBy },
  ruleLink('access_rule_devices', 'device_id', 'devices'),
  ruleLink('access_rule_schedules', 'schedule_id', 'schedules'),
  ruleLink('access_rule_users', 'user_id', 'users'),
  ruleLink('access_rule_identifiers', 'identifier_id', 'identifiers'),
  ruleLink('access_rule_domains', 'domain_id', 'domains'),
  { name: 'access_areas', set: 'access', key: ['id'], scope: own, projectColumn: 'project_id', madeBy },
  areaLink('access_area_entry_devices'),
  areaLink('access_area_exit_devices'),
];

/**
 * Telephony (`telephony`, after `sip_numbers`): forward rules and the numbers that follow them, SIP trunks and
 * the groups whose calls they carry. A trunk's password is in the file as it is stored — Kamailio must present
 * it to the provider, so it is no hash, and a restored trunk must work (docs/decisions.md "Telephony and
 * administration in backups"). It names groups and numbers by id: applied without them, those must be the
 * project's rows already.
 */
const ofForwardRules = (p: number) =>
  sql`t.forward_rule_id in (select id from forward_rules where project_id = ${p})`;
const TELEPHONY: readonly BackupTable[] = [
  {
    name: 'forward_rules',
    set: 'telephony',
    key: ['id'],
    scope: own,
    projectColumn: 'project_id',
    madeBy,
    refs: { domain_id: 'domains' },
  },
  {
    name: 'sip_number_forward_rules',
    set: 'telephony',
    key: ['sip_number_id', 'forward_rule_id'],
    scope: ofForwardRules,
    link: true,
    refs: { sip_number_id: 'sip_numbers', forward_rule_id: 'forward_rules' },
  },
  { name: 'sip_trunks', set: 'telephony', key: ['id'], scope: own, projectColumn: 'project_id', madeBy },
  {
    name: 'sip_trunk_groups',
    set: 'telephony',
    key: ['sip_trunk_id', 'domain_id'],
    scope: (p) => sql`t.sip_trunk_id in (select id from sip_trunks where project_id = ${p})`,
    link: true,
    refs: { sip_trunk_id: 'sip_trunks', domain_id: 'domains' },
  },
];

/**
 * Administration (`administration`, last): mail templates (a group's, or the project's), integrations and
 * the groups they serve, and webhooks with their secrets (the key of their signatures: a restored webhook signs as before). A webhook's delivery log is
 * history, not configuration; `from_event_id` is the server's (the insert's trigger sets it to the outbox's
 * last event, so a webhook copied to another server starts there).
 */
const ADMINISTRATION: readonly BackupTable[] = [
  {
    name: 'mail_templates',
    set: 'administration',
    key: ['id'],
    scope: own,
    projectColumn: 'project_id',
    madeBy,
    refs: { domain_id: 'domains' },
  },
  {
    name: 'webhooks',
    set: 'administration',
    key: ['id'],
    scope: own,
    projectColumn: 'project_id',
    madeBy,
    serverColumns: ['from_event_id'],
  },
  // integrations with their servers' passwords and certificates (presented to the server: no hash), owned
  // by a group or the project, and the groups they serve
  {
    name: 'integrations',
    set: 'administration',
    key: ['id'],
    scope: own,
    projectColumn: 'project_id',
    madeBy,
    refs: { domain_id: 'domains' },
  },
  {
    name: 'integration_domains',
    set: 'administration',
    key: ['integration_id', 'domain_id'],
    scope: (p) => sql`t.integration_id in (select id from integrations where project_id = ${p})`,
    link: true,
    refs: { integration_id: 'integrations', domain_id: 'domains' },
  },
];

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
  ...ACCESS,
  { name: 'sip_numbers', set: 'sip_numbers', key: ['id'], scope: own, projectColumn: 'project_id' },
  ...TELEPHONY,
  { name: 'licenses', set: 'licences', key: ['id'], scope: own, projectColumn: 'project_id' },
  ...ADMINISTRATION,
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

/**
 * A kind of stored file the rows of a set name (docs/decisions.md "Files in backups"): its folder under the
 * storage folder and in the zip (`files/<name>/`), the names a project's rows hold, and what a name may be.
 */
export interface BackupFileKind {
  name: 'faces' | 'avatars' | 'logos' | 'group_logos';
  /** its folder under the storage folder, when not its name (the project's and the groups' logos share one) */
  dir?: string;
  set: BackupEntitySet;
  /** a stored file's name as it may be written into the storage folder (no path, no dot first) */
  pattern: RegExp;
  /** the names of the files the project's rows name, one column `name` */
  names: (p: number) => RawBuilder<{ name: string }>;
  /** stored by content: the name is the SHA-256 of the bytes, checked on apply */
  byContent?: boolean;
}

const AVATAR_URL = '/storage/avatars/';
const LOGO_URL = '/storage/logos/';
const LOGO_NAME = /^[0-9A-Za-z_-]{1,128}\.png$/;

export const FILE_KINDS: readonly BackupFileKind[] = [
  {
    name: 'avatars',
    set: 'users',
    pattern: /^[0-9A-Za-z_-]{1,128}\.jpg$/,
    names: (p) => sql`select distinct substr(avatar_url, ${AVATAR_URL.length + 1}) as name from users
      where project_id = ${p} and avatar_url like ${`${AVATAR_URL}%`}`,
  },
  {
    name: 'faces',
    set: 'access',
    pattern: /^[0-9a-f]{64}\.jpg$/,
    byContent: true,
    names: (p) => sql`select distinct photo_sha256 || '.jpg' as name from identifiers
      where project_id = ${p} and photo_sha256 is not null`,
  },
  {
    name: 'logos',
    dir: 'logos',
    set: 'settings',
    pattern: LOGO_NAME,
    names: (p) => sql`select substr(logo, ${LOGO_URL.length + 1}) as name from (
      select settings->'whitelabel_settings'->>'logo' as logo from projects where id = ${p}) l
      where logo like ${`${LOGO_URL}%`}`,
  },
  {
    name: 'group_logos',
    dir: 'logos',
    set: 'groups',
    pattern: LOGO_NAME,
    names: (p) => sql`select distinct substr(whitelabel_settings->>'logo', ${LOGO_URL.length + 1}) as name
      from domains where project_id = ${p} and whitelabel_settings->>'logo' like ${`${LOGO_URL}%`}`,
  },
];

/** The folder of a kind's files under the storage folder. */
export const storedDirOf = (kind: BackupFileKind) => kind.dir ?? kind.name;

export const filesDirOf = (kind: string) => `files/${kind}/`;

export interface ManifestFiles {
  kind: BackupFileKind['name'];
  set: BackupEntitySet;
  /** the entries `files/<kind>/…` the zip holds */
  count: number;
  bytes: number;
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
  /** format 2: the stored files of each kind the zip holds (absent in format 1) */
  files?: ManifestFiles[];
}

/** The entry of a table's rows: COPY text (format 4). */
export const fileOf = (table: string) => `tables/${table}.copy`;
