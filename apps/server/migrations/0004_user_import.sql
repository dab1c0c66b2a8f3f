-- Bulk import of users: an import is a session holding its rows in a staging table until it is committed
-- (in one transaction, set-based) or cancelled. Sessions idle for a day are removed with their rows.

create table user_imports (
  id uuid primary key,
  project_id integer not null references projects(id) on delete cascade,
  user_id integer not null references users(id) on delete cascade,
  file_name text not null default '',
  -- open: taking rows; committed: the rows went in (the report is kept so a repeated commit answers it)
  status text not null default 'open',
  rows_total integer not null default 0,
  rows_invalid integer not null default 0,
  report jsonb,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index user_imports_updated on user_imports (updated_at);

-- One row of the file, checked: what it will insert (names already resolved to ids, the password already
-- hashed), or its problems in `errors` (null when the row is valid).
create table user_import_rows (
  import_id uuid not null references user_imports(id) on delete cascade,
  line integer not null,
  login text,
  login_key text,
  email text,
  email_key text,
  name text,
  description text not null default '',
  role_id integer,
  domain_ids jsonb not null default '[]'::jsonb,
  marker_ids jsonb not null default '[]'::jsonb,
  profile jsonb not null default '{}'::jsonb,
  elevator_access_disabled boolean not null default false,
  is_group_admin boolean not null default false,
  password_hash text,
  errors jsonb,
  primary key (import_id, line)
);
-- uniqueness inside one import: the first line holding a login or e-mail keeps it
create index user_import_rows_login on user_import_rows (import_id, login_key);
create index user_import_rows_email on user_import_rows (import_id, email_key);
