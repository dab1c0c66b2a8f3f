-- Issue 21 item 5, the access-control log (docs/decisions.md "Access control: the sync to the devices").
-- Every decision at a door a device pushed (an identifier used or refused), with the identifier, its owner,
-- the decision and the refusal's reason as a catalogue code. A journal: keyset by (created_at, id), a
-- retention. The device's own event id is unique per device (as device_events), so a push sent again is
-- stored once. Names are kept on the row as they were (an identifier or user deleted later leaves them).
create table acs_events (
  id integer generated always as identity primary key,
  project_id integer not null references projects(id) on delete cascade,
  created_at timestamptz not null default now(),
  received_at timestamptz not null default now(),
  device_id integer references devices(id) on delete set null,
  serial_number text not null,
  domain_id integer,
  identifier_id integer references identifiers(id) on delete set null,
  identifier_name text,
  identifier_type text,
  identifier_number text,
  owner_id integer references users(id) on delete set null,
  owner_name text,
  -- user | guest | null (not an identifier the platform knows)
  owner_type text,
  -- granted | denied
  decision text not null,
  -- a refusal's catalogue code
  reason text,
  rule_id integer references access_rules(id) on delete set null,
  rule_name text,
  lock smallint,
  event_id text not null,
  constraint acs_events_device_event unique (device_id, event_id)
);
create index acs_events_project_time on acs_events (project_id, created_at desc, id desc);
create index acs_events_project_device_time on acs_events (project_id, device_id, created_at desc, id desc);
create index acs_events_project_identifier_time on acs_events (project_id, identifier_id, created_at desc, id desc);
create index acs_events_project_owner_time on acs_events (project_id, owner_id, created_at desc, id desc);
