-- Issue 21 item 8, anti-passback areas (docs/decisions.md "Anti-passback areas"): a group of entry devices and
-- exit devices; an identifier that entered by an entry device is refused at them until it left by an exit
-- device. `reset_after_min`: minutes after which a passage no longer counts (null: until the next one).
create table access_areas (
  id integer generated always as identity primary key,
  project_id integer not null references projects(id) on delete cascade,
  name text not null,
  description text not null default '',
  reset_after_min integer,
  created_by integer references users(id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (project_id, name)
);
create index on access_areas (project_id);

create table access_area_entry_devices (
  access_area_id integer not null references access_areas(id) on delete cascade,
  device_id integer not null references devices(id) on delete cascade,
  primary key (access_area_id, device_id)
);
create index on access_area_entry_devices (device_id);

create table access_area_exit_devices (
  access_area_id integer not null references access_areas(id) on delete cascade,
  device_id integer not null references devices(id) on delete cascade,
  primary key (access_area_id, device_id)
);
create index on access_area_exit_devices (device_id);

-- A change of an area is a change of the project's access control: the planner reads it again (it sends
-- devices nothing for it — anti-passback is the server's — but the decisions' cached data is read anew).
create trigger access_sync_areas_ins after insert on access_areas
  referencing new table as new_rows for each statement execute function access_sync_new_rows();
create trigger access_sync_areas_upd after update on access_areas
  referencing old table as old_rows new table as new_rows for each statement
  execute function access_sync_changed('project_id', 'reset_after_min');
create trigger access_sync_areas_del after delete on access_areas
  referencing old table as old_rows for each statement execute function access_sync_old_rows();
create function access_sync_area_new() returns trigger language plpgsql as $$
begin
  insert into access_sync_changes (project_id)
    select distinct a.project_id from new_rows n join access_areas a on a.id = n.access_area_id;
  return null;
end $$;
create function access_sync_area_old() returns trigger language plpgsql as $$
begin
  insert into access_sync_changes (project_id)
    select distinct a.project_id from old_rows n join access_areas a on a.id = n.access_area_id;
  return null;
end $$;
create trigger access_sync_area_entry_ins after insert on access_area_entry_devices
  referencing new table as new_rows for each statement execute function access_sync_area_new();
create trigger access_sync_area_entry_del after delete on access_area_entry_devices
  referencing old table as old_rows for each statement execute function access_sync_area_old();
create trigger access_sync_area_exit_ins after insert on access_area_exit_devices
  referencing new table as new_rows for each statement execute function access_sync_area_new();
create trigger access_sync_area_exit_del after delete on access_area_exit_devices
  referencing old table as old_rows for each statement execute function access_sync_area_old();
