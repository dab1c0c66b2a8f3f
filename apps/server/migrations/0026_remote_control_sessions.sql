-- Remote-control sessions (issue 16 item 9): the short-lived handle a remote-control tab is opened with
-- (spec part 2 §7 "remote-control session PUT … and PATCH"). The tab's address holds the session id; only its
-- hash is stored. A session is its opener's, for one device, and ends at `expires_at` (60 s after it was
-- opened or last kept alive, by the server's clock) — docs/decisions.md "Remote control".
create table remote_control_sessions (
  id integer generated always as identity primary key,
  project_id integer not null references projects(id) on delete cascade,
  device_id integer not null references devices(id) on delete cascade,
  user_id integer not null,
  token_hash text not null unique,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null
);
create index remote_control_sessions_expiry on remote_control_sessions (expires_at);
