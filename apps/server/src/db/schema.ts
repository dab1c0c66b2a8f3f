import type { ColumnType, Generated } from 'kysely';

type Id = Generated<number>;
type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
type Timestamp = ColumnType<Date, Date | string, Date | string>;
type TimestampDefault = ColumnType<Date, Date | string | undefined, Date | string>;
/** jsonb: read as the value, written as its JSON text */
type Json<T> = ColumnType<T, string, string>;
type JsonDefault<T> = ColumnType<T, string | undefined, string>;

export interface ProjectsTable {
  id: Id;
  uid: string;
  name: string;
  description: Generated<string>;
  settings: JsonDefault<Record<string, unknown>>;
  created_at: CreatedAt;
  /** the licensed instance id a licence file names (0017) */
  instance_id: Generated<string>;
}
export interface AccountsTable {
  id: Id;
  login: string;
  email: string | null;
  password_hash: string | null;
  locale: Generated<string>;
  activated_at: Timestamp | null;
  created_at: CreatedAt;
}
export interface RolesTable {
  id: Id;
  project_id: number;
  name: string;
  description: Generated<string>;
  permissions: JsonDefault<string[]>;
  available_roles: JsonDefault<number[]>;
  is_system: Generated<boolean>;
  created_by: number | null;
  created_at: CreatedAt;
  updated_at: TimestampDefault;
}
export interface DomainsTable {
  id: Id;
  project_id: number;
  parent_id: number | null;
  name: string;
  description: Generated<string>;
  logic_address: string | null;
  domain_type_id: number | null;
  settings: JsonDefault<Record<string, unknown>>;
  whitelabel_settings: JsonDefault<Record<string, unknown>>;
  guest_identifier_limits: JsonDefault<Record<string, unknown>>;
  device_status_notify: JsonDefault<unknown[]>;
  license_settings: JsonDefault<Record<string, unknown>>;
  /** the group's maximums of counted things: `{virtual_numbers, mobile_apps, ukey2_keys, users, …}` */
  license_limits: JsonDefault<Record<string, unknown>>;
  created_by: number | null;
  created_at: CreatedAt;
  updated_at: TimestampDefault;
}
export interface UsersTable {
  id: Id;
  project_id: number;
  account_id: number;
  role_id: number;
  name: string;
  description: Generated<string>;
  profile: JsonDefault<Record<string, unknown>>;
  is_invited: Generated<boolean>;
  elevator_access_disabled: Generated<boolean>;
  is_group_admin: Generated<boolean>;
  avatar_url: string | null;
  created_by: number | null;
  created_at: CreatedAt;
  updated_at: TimestampDefault;
}
export interface UserDomainsTable {
  user_id: number;
  domain_id: number;
}
export interface SessionsTable {
  id: Id;
  user_id: number;
  token_hash: string;
  token_expires_at: Timestamp;
  refresh_hash: string;
  refresh_expires_at: Timestamp;
  ip: string | null;
  user_agent: string | null;
  created_at: CreatedAt;
  last_used_at: TimestampDefault;
  revoked_at: Timestamp | null;
  revoked_reason: string | null;
}
export interface UsedRefreshTokensTable {
  hash: string;
  session_id: number;
  used_at: TimestampDefault;
  /** the pair this token was exchanged for, sealed with a key only the token makes (auth/crypto.ts) */
  successor: string | null;
}
export interface AuthCodesTable {
  id: Id;
  kind: 'invitation' | 'confirm' | 'recovery' | 'self_registration';
  token_hash: string;
  code_hash: string | null;
  account_id: number | null;
  project_id: number | null;
  payload: JsonDefault<Record<string, unknown>>;
  attempts: Generated<number>;
  expires_at: Timestamp;
  last_sent_at: Timestamp | null;
  used_at: Timestamp | null;
  created_at: CreatedAt;
}
export interface OutboxTable {
  id: Id;
  project_id: number | null;
  to_address: string;
  subject: string;
  body: string;
  status: 'kept' | 'queued' | 'sent' | 'failed';
  error: string | null;
  created_at: CreatedAt;
  sent_at: Timestamp | null;
}
export interface RateLimitsTable {
  key: string;
  window_start: Timestamp;
  window_end: Timestamp;
  count: number;
}
export interface ServerSettingsTable {
  key: string;
  value: Json<unknown>;
}
export interface AuditEventsTable {
  id: Id;
  project_id: number | null;
  user_id: number | null;
  action: string;
  entity: string | null;
  entity_id: string | null;
  ip: string | null;
  data: JsonDefault<Record<string, unknown>>;
  created_at: CreatedAt;
}

export interface DomainTypesTable {
  id: Id;
  project_id: number;
  type: string;
  name: string;
  created_at: CreatedAt;
}
export interface MarkersTable {
  id: Id;
  project_id: number;
  name: string;
  color: string;
  created_by: number | null;
  created_at: CreatedAt;
}
export interface UserMarkersTable {
  user_id: number;
  marker_id: number;
}
export interface SipNumbersTable {
  id: Id;
  project_id: number;
  domain_id: number;
  number: string;
  name: string;
  /** HA1 of `number:realm:password` (migration 0046); the password itself is never stored */
  password_ha1: string | null;
  ha1_realm: string | null;
  is_active: Generated<boolean>;
  created_by: number | null;
  created_at: CreatedAt;
}
export interface LicensesTable {
  id: Id;
  project_id: number;
  issuer: Generated<string>;
  valid_from: Timestamp | null;
  valid_to: Timestamp | null;
  is_active: Generated<boolean>;
  features: JsonDefault<Record<string, unknown>>;
  created_at: CreatedAt;
  /** file | cloud | evaluation | manual (0017) */
  kind: Generated<string>;
  licence_id: string | null;
  instance_id: string | null;
  units_per_licence: Generated<number>;
  /** the signed file as received */
  document: string | null;
}

export interface LicenceNotifyTable {
  project_id: number;
  notify_before: Generated<number>;
  mode: Generated<string>;
  last_notified_at: Timestamp | null;
  last_warning: string | null;
}

/** One notification of one user (0024). */
export interface NotificationsTable {
  id: Id;
  project_id: number;
  user_id: number;
  type: string;
  category: string;
  significance: string;
  icon: string;
  color: string;
  popup_action: string;
  sound: string | null;
  data: JsonDefault<Record<string, unknown>>;
  created_at: TimestampDefault;
  updated_at: TimestampDefault;
  read_at: Timestamp | null;
}

export interface DB {
  notifications: NotificationsTable;
  domain_types: DomainTypesTable;
  markers: MarkersTable;
  user_markers: UserMarkersTable;
  sip_numbers: SipNumbersTable;
  licenses: LicensesTable;
  licence_notify: LicenceNotifyTable;
  projects: ProjectsTable;
  accounts: AccountsTable;
  roles: RolesTable;
  domains: DomainsTable;
  users: UsersTable;
  user_domains: UserDomainsTable;
  sessions: SessionsTable;
  used_refresh_tokens: UsedRefreshTokensTable;
  auth_codes: AuthCodesTable;
  outbox: OutboxTable;
  rate_limits: RateLimitsTable;
  server_settings: ServerSettingsTable;
  audit_events: AuditEventsTable;
  schema_migrations: { name: string; applied_at: Generated<Date> };
}
