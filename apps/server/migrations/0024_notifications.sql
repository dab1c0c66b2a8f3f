-- Notifications (issue 16 item 3): one row per recipient user. A plain table, not a journal: rows change
-- (read_at), each user reads only their own, and the spec's list pages by offset (docs/decisions.md).
create table notifications (
  id integer generated always as identity primary key,
  project_id integer not null references projects(id) on delete cascade,
  user_id integer not null references users(id) on delete cascade,
  type text not null,
  -- the tab it falls under besides All (normal, acs, alarm) and whether it pops up (important, other)
  category text not null,
  significance text not null,
  icon text not null,
  color text not null,
  popup_action text not null,
  sound text,
  data jsonb not null default '{}'::jsonb,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  read_at timestamptz
);
create index notifications_user_time on notifications (user_id, created_at desc, id desc);
create index notifications_user_unread on notifications (user_id, id desc) where read_at is null;
