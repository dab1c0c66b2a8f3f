-- Network search (issue 16 item 8): one row per search a user started, keyed by the client's request_id, so a
-- console that reconnects (or a CLI, or another instance) reads what was found so far (docs/decisions.md).
create table device_searches (
  id integer generated always as identity primary key,
  project_id integer not null references projects(id) on delete cascade,
  user_id integer not null references users(id) on delete cascade,
  request_id text not null,
  start_ip text not null,
  end_ip text not null,
  port integer not null,
  total integer not null,
  probed integer not null default 0,
  timed_out integer not null default 0,
  -- running, done, interrupted (its instance stopped or died before the end)
  state text not null default 'running',
  found jsonb not null default '[]'::jsonb,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  -- past this a search still "running" is reported interrupted: its instance died
  deadline_at timestamptz not null,
  finished_at timestamptz,
  unique (user_id, request_id)
);
create index device_searches_created on device_searches (created_at);
