-- Device events (issue 16 item 7): what devices push — identifiers used or refused, doors opened, calls,
-- alarm sensors — as a journal (keyset by (created_at, id), a retention). A device's own event id is unique
-- per device, so a push sent again after a lost answer stores nothing twice. The device's group is kept on
-- the row (who may read it); a deleted device leaves its events, with its serial number.
create table device_events (
  id integer generated always as identity primary key,
  project_id integer not null references projects(id) on delete cascade,
  device_id integer references devices(id) on delete set null,
  serial_number text not null,
  domain_id integer,
  -- when it happened by the device's clock (never later than received_at)
  created_at timestamptz not null default now(),
  received_at timestamptz not null default now(),
  -- identifier_used | identifier_refused | door_opened | call | alarm
  kind text not null,
  identifier_type text,
  identifier_number text,
  lock smallint,
  result text,
  reason text,
  number text,
  -- the picture's file name under storage/logs/ (served at /storage/logs/{image})
  image text,
  -- the device's own id of the event
  event_id text not null,
  constraint device_events_device_event unique (device_id, event_id)
);
create index device_events_project_time on device_events (project_id, created_at desc, id desc);
create index device_events_project_device_time on device_events (project_id, device_id, created_at desc, id desc);
create index device_events_project_domain_time on device_events (project_id, domain_id, created_at desc, id desc);
