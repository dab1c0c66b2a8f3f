-- Each time a device turned online or offline (devices/status.ts, with its DeviceStatusChangedEvent): the
-- home's "devices online over time" (issue 25 item 11) reads how many were online at each hour from it.
-- Kept 30 days (the events.prune job deletes older rows); a device deleted takes its changes with it.
create table device_status_changes (
  id bigint generated always as identity primary key,
  project_id integer not null references projects(id) on delete cascade,
  device_id integer not null references devices(id) on delete cascade,
  status text not null,
  at timestamptz not null
);
create index device_status_changes_device_at on device_status_changes (device_id, at desc);
create index device_status_changes_project_at on device_status_changes (project_id, at);
