-- Foundation: projects, accounts and their per-project users, roles, groups, sessions, codes, mail, blocks, audit.

create table projects (
  id integer generated always as identity primary key,
  uid text not null unique,
  name text not null,
  description text not null default '',
  settings jsonb not null default '{}'::jsonb,
  created_at timestamptz not null default now()
);

-- A login: the credentials, shared by every project the person belongs to.
create table accounts (
  id integer generated always as identity primary key,
  login text not null,
  email text,
  password_hash text,
  locale text not null default 'en',
  activated_at timestamptz,
  created_at timestamptz not null default now()
);
create unique index accounts_login_key on accounts (lower(login));
create unique index accounts_email_key on accounts (lower(email)) where email is not null;

create table roles (
  id integer generated always as identity primary key,
  project_id integer not null references projects(id) on delete cascade,
  name text not null,
  description text not null default '',
  permissions jsonb not null default '[]'::jsonb,
  available_roles jsonb not null default '[]'::jsonb,
  is_system boolean not null default false,
  created_by integer,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (project_id, name)
);

create table domains (
  id integer generated always as identity primary key,
  project_id integer not null references projects(id) on delete cascade,
  parent_id integer references domains(id) on delete restrict,
  name text not null,
  description text not null default '',
  logic_address text,
  domain_type_id integer,
  settings jsonb not null default '{}'::jsonb,
  created_by integer,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index domains_project_parent on domains (project_id, parent_id);

-- A person inside one project.
create table users (
  id integer generated always as identity primary key,
  project_id integer not null references projects(id) on delete cascade,
  account_id integer not null references accounts(id) on delete cascade,
  role_id integer not null references roles(id),
  name text not null,
  description text not null default '',
  profile jsonb not null default '{}'::jsonb,
  is_invited boolean not null default false,
  created_by integer,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (project_id, account_id)
);

create table user_domains (
  user_id integer not null references users(id) on delete cascade,
  domain_id integer not null references domains(id) on delete cascade,
  primary key (user_id, domain_id)
);

-- One signed-in session of one user in one project. Tokens are stored as SHA-256 hashes only.
create table sessions (
  id integer generated always as identity primary key,
  user_id integer not null references users(id) on delete cascade,
  token_hash text not null unique,
  token_expires_at timestamptz not null,
  refresh_hash text not null unique,
  refresh_expires_at timestamptz not null,
  ip text,
  user_agent text,
  created_at timestamptz not null default now(),
  last_used_at timestamptz not null default now(),
  revoked_at timestamptz,
  revoked_reason text
);

-- Refresh tokens already exchanged: seeing one again means it was stolen, and its session is revoked.
create table used_refresh_tokens (
  hash text primary key,
  session_id integer not null references sessions(id) on delete cascade,
  used_at timestamptz not null default now()
);

-- Invitation, confirmation, recovery and self-registration codes (hashed).
create table auth_codes (
  id integer generated always as identity primary key,
  kind text not null,
  token_hash text not null unique,
  code_hash text,
  account_id integer references accounts(id) on delete cascade,
  project_id integer references projects(id) on delete cascade,
  payload jsonb not null default '{}'::jsonb,
  attempts integer not null default 0,
  expires_at timestamptz not null,
  last_sent_at timestamptz,
  used_at timestamptz,
  created_at timestamptz not null default now()
);

create table outbox (
  id integer generated always as identity primary key,
  project_id integer references projects(id) on delete set null,
  to_address text not null,
  subject text not null,
  body text not null,
  status text not null,
  error text,
  created_at timestamptz not null default now(),
  sent_at timestamptz
);

-- Failed attempts and blocks per address and service (login now; SIP and others later).
create table ip_blocks (
  ip text not null,
  service text not null,
  failures integer not null default 0,
  window_started_at timestamptz not null default now(),
  blocked_until timestamptz,
  cause text not null default 'auth_failed',
  primary key (ip, service)
);

create table server_settings (
  key text primary key,
  value jsonb not null
);

create table audit_events (
  id integer generated always as identity primary key,
  project_id integer references projects(id) on delete cascade,
  user_id integer,
  action text not null,
  entity text,
  entity_id text,
  ip text,
  data jsonb not null default '{}'::jsonb,
  created_at timestamptz not null default now()
);
create index audit_events_project_created on audit_events (project_id, created_at desc);
