-- Backups of a project (issue 24 item 1): each a zip under the backups folder, made by a job; the schedule of
-- a project's scheduled backups. The file format: docs/decisions.md "Backups" and apps/server/src/backup/format.ts.
create table backups (
  id integer generated always as identity primary key,
  project_id integer not null references projects(id) on delete cascade,
  name text not null,
  entities jsonb not null,
  state text not null default 'making' check (state in ('making', 'ready', 'failed')),
  scheduled boolean not null default false,
  -- the zip's name inside the backups folder
  file text not null,
  size bigint not null default 0,
  rows bigint not null default 0,
  tables jsonb not null default '{}'::jsonb,
  format_version integer not null,
  error text,
  created_by integer references users(id) on delete set null,
  created_at timestamptz not null default now(),
  finished_at timestamptz
);
create index backups_project_created on backups (project_id, created_at desc, id desc);

create table backup_schedules (
  project_id integer primary key references projects(id) on delete cascade,
  enabled boolean not null default false,
  every_hours integer not null default 24,
  keep integer not null default 7,
  entities jsonb not null,
  next_run_at timestamptz
);
