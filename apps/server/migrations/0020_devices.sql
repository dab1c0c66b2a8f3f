-- Devices (issue 16 item 4): door panels, monitors, access and lift controllers, cameras and barriers.

create table devices (
  id integer generated always as identity primary key,
  project_id integer not null references projects(id) on delete cascade,
  domain_id integer not null references domains(id) on delete restrict,
  name text not null,
  description text not null default '',
  type text not null,
  model text not null default '',
  ip_address text,
  port integer not null default 80,
  -- the device's login (to the platform and its broker) and the topics under its name: one device per serial
  -- number across the whole installation, since the broker's topics are shared by every project
  serial_number text not null,
  -- the password the device presents (broker and HTTP pushes); issued by Lintel, never returned by a list
  password text not null,
  device_login text not null default '',
  device_password text not null default '',
  protocol text not null default 'http',
  location_latitude double precision,
  location_longitude double precision,
  get_logs boolean not null default true,
  management jsonb not null default '{"heartbeat": true, "realtime_logging": true}'::jsonb,
  device_settings jsonb not null default '{}'::jsonb,
  -- what the gateway saw: online/offline, the last heartbeat (server's clock), when the status last changed
  status text not null default 'offline',
  last_heartbeat_at timestamptz,
  status_changed_at timestamptz,
  firmware_version text,
  created_by integer,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index devices_serial_number on devices (serial_number);
create index devices_project_domain on devices (project_id, domain_id);
create index devices_project_name on devices (project_id, name);
-- the offline sweep: online devices by their last heartbeat
create index devices_online_heartbeat on devices (last_heartbeat_at) where status = 'online';
