-- Device tasks (issue 16 item 6): every change that must reach a device, with the spec's states (part 1 §4:
-- new, queued, started, stopped, error, completed, waiting). A device's tasks go to it one at a time, oldest
-- first; the one being sent has a durable job (`device.task`, jobs/queue.ts) that sends it through the gateway.
create table device_tasks (
  id integer generated always as identity primary key,
  project_id integer not null references projects(id) on delete cascade,
  device_id integer not null references devices(id) on delete cascade,
  domain_id integer not null,
  -- settings | restart | reinit
  kind text not null,
  -- what the device is sent, frozen when the task is made: {method, uri, body}; its request id is `task-{id}`
  request jsonb not null,
  state text not null default 'new',
  -- sends so far (each a request with the same request id: the device applies it once)
  attempts integer not null default 0,
  -- the catalogue code of the last failure
  error text,
  created_by integer,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  completed_at timestamptz
);
create index device_tasks_device on device_tasks (device_id, id);
create index device_tasks_project on device_tasks (project_id, id desc);
create index device_tasks_open on device_tasks (device_id, id) where state in ('new', 'queued', 'started', 'waiting');
