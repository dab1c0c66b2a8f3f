-- Device commands, the rest (issue 16 item 4; docs/decisions.md "Device commands, the rest").
-- The entities a device refused at its last entities task (identifiers, schedules): replaced by each
-- entities task the device answers, so what is here is what the device does not hold now.
create table device_sync_errors (
  id integer generated always as identity primary key,
  project_id integer not null references projects(id) on delete cascade,
  device_id integer not null references devices(id) on delete cascade,
  -- identifier | schedule
  entity text not null,
  -- the entity's key as the device knows it (an identifier's uid, a schedule's id)
  item_key text not null,
  -- the device's reason, as it gave it
  error text not null,
  task_id integer,
  created_at timestamptz not null default now(),
  unique (device_id, entity, item_key)
);

-- The pool: devices that called the platform over HTTP with a serial number no device has, kept (at most
-- POOL_LIMIT) for an installer to register into a group (`device.from_pool`). Installation-wide, as serial
-- numbers are.
create table device_pool (
  serial_number text primary key,
  ip_address text,
  firmware_version text,
  contacts integer not null default 1,
  first_seen_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now()
);
create index device_pool_seen on device_pool (last_seen_at desc);
