-- Issue 21 item 4, the sync to the devices (docs/decisions.md "Access control: the sync to the devices").
--
-- The ledger: what each device holds of the platform's identifiers and time profiles, by key (an identifier's
-- uid `identifier-{id}`, a profile's key `schedule-{id}`), with the digest of the body it holds. `state`:
--   held    the device acknowledged this body (digest null: it holds something by that key, body unknown —
--           a write whose outcome was lost, or an item its own list showed that the platform cannot read);
--   put     a device task (`task_id`) carries this body to it: the next difference counts it as held;
--   delete  a device task (`task_id`) removes it: the next difference counts it as gone;
--   refused the device refused this body (a sync error): not sent again until the body changes or a resync.
-- Written in the transaction that makes the tasks, so a restart never plans the same difference twice.
create table device_access_ledger (
  device_id integer not null references devices(id) on delete cascade,
  -- identifier | profile
  kind text not null check (kind in ('identifier', 'profile')),
  key text not null,
  digest text,
  state text not null check (state in ('held', 'put', 'delete', 'refused')),
  task_id integer,
  primary key (device_id, kind, key)
);
create index device_access_ledger_task on device_access_ledger (task_id) where task_id is not null;

-- What changed since the devices were last planned: one row per statement that touched what a device must
-- hold (identifiers, rules and their relations, schedules, holidays, group memberships, groups' places,
-- devices' groups, owners' names), written by the triggers below in the change's own transaction — so a
-- change is planned if and only if it committed, whichever code path made it (a command, an import, a
-- restored backup, a cascade). Only inserted here (no row is updated: changes never wait for each other);
-- the planner deletes the rows it planned (apps/server/src/access/planner.ts).
create table access_sync_changes (
  id bigint generated always as identity primary key,
  project_id integer not null,
  created_at timestamptz not null default now()
);
create index access_sync_changes_project on access_sync_changes (project_id, id);

create function access_sync_new_rows() returns trigger language plpgsql as $$
begin
  insert into access_sync_changes (project_id) select distinct project_id from new_rows;
  return null;
end $$;
create function access_sync_old_rows() returns trigger language plpgsql as $$
begin
  insert into access_sync_changes (project_id) select distinct project_id from old_rows;
  return null;
end $$;
-- the relations of a rule: its project is the rule's (a rule deleted says so itself)
create function access_sync_rule_new() returns trigger language plpgsql as $$
begin
  insert into access_sync_changes (project_id)
    select distinct r.project_id from new_rows n join access_rules r on r.id = n.access_rule_id;
  return null;
end $$;
create function access_sync_rule_old() returns trigger language plpgsql as $$
begin
  insert into access_sync_changes (project_id)
    select distinct r.project_id from old_rows n join access_rules r on r.id = n.access_rule_id;
  return null;
end $$;
create function access_sync_holiday_new() returns trigger language plpgsql as $$
begin
  insert into access_sync_changes (project_id)
    select distinct h.project_id from new_rows n join holidays h on h.id = n.holiday_id;
  return null;
end $$;
create function access_sync_holiday_old() returns trigger language plpgsql as $$
begin
  insert into access_sync_changes (project_id)
    select distinct h.project_id from old_rows n join holidays h on h.id = n.holiday_id;
  return null;
end $$;
create function access_sync_member_new() returns trigger language plpgsql as $$
begin
  insert into access_sync_changes (project_id)
    select distinct u.project_id from new_rows n join users u on u.id = n.user_id;
  return null;
end $$;
create function access_sync_member_old() returns trigger language plpgsql as $$
begin
  insert into access_sync_changes (project_id)
    select distinct u.project_id from old_rows n join users u on u.id = n.user_id;
  return null;
end $$;

-- an update that changed one of the columns named (TG_ARGV[1], comma-separated) of a row of a project (the
-- project's column: TG_ARGV[0]); an update of other columns (the devices' pass counter) is no change here
create function access_sync_changed() returns trigger language plpgsql as $$
declare
  cols text[] := string_to_array(TG_ARGV[1], ',');
  n text;
  o text;
begin
  select string_agg('n.' || c, ', '), string_agg('o.' || c, ', ') into n, o from unnest(cols) c;
  execute format('insert into access_sync_changes (project_id) select distinct n.%I from new_rows n '
    'join old_rows o on o.id = n.id where row(%s) is distinct from row(%s)', TG_ARGV[0], n, o);
  return null;
end $$;

-- identifiers: any change but the devices' pass counter (`passes_count`, written by the ACS log)
create trigger access_sync_identifiers_ins after insert on identifiers
  referencing new table as new_rows for each statement execute function access_sync_new_rows();
create trigger access_sync_identifiers_upd after update on identifiers
  referencing old table as old_rows new table as new_rows for each statement
  execute function access_sync_changed('project_id', 'name,type,value,is_active,owner_type,owner,period_restrict_active,period_restrict_from_u,period_restrict_to_u,passes_restrict_active,passes_restrict_max_count');
create trigger access_sync_identifiers_del after delete on identifiers
  referencing old table as old_rows for each statement execute function access_sync_old_rows();

create trigger access_sync_rules_ins after insert on access_rules
  referencing new table as new_rows for each statement execute function access_sync_new_rows();
create trigger access_sync_rules_upd after update on access_rules
  referencing old table as old_rows new table as new_rows for each statement
  execute function access_sync_changed('project_id', 'prohibition');
create trigger access_sync_rules_del after delete on access_rules
  referencing old table as old_rows for each statement execute function access_sync_old_rows();

create trigger access_sync_schedules_upd after update on schedules
  referencing new table as new_rows for each statement execute function access_sync_new_rows();
create trigger access_sync_schedules_del after delete on schedules
  referencing old table as old_rows for each statement execute function access_sync_old_rows();

create trigger access_sync_holidays_ins after insert on holidays
  referencing new table as new_rows for each statement execute function access_sync_new_rows();
create trigger access_sync_holidays_upd after update on holidays
  referencing new table as new_rows for each statement execute function access_sync_new_rows();
create trigger access_sync_holidays_del after delete on holidays
  referencing old table as old_rows for each statement execute function access_sync_old_rows();
create trigger access_sync_holiday_domains_ins after insert on holiday_domains
  referencing new table as new_rows for each statement execute function access_sync_holiday_new();
create trigger access_sync_holiday_domains_del after delete on holiday_domains
  referencing old table as old_rows for each statement execute function access_sync_holiday_old();

create trigger access_sync_rule_devices_ins after insert on access_rule_devices
  referencing new table as new_rows for each statement execute function access_sync_rule_new();
create trigger access_sync_rule_devices_del after delete on access_rule_devices
  referencing old table as old_rows for each statement execute function access_sync_rule_old();
create trigger access_sync_rule_schedules_ins after insert on access_rule_schedules
  referencing new table as new_rows for each statement execute function access_sync_rule_new();
create trigger access_sync_rule_schedules_del after delete on access_rule_schedules
  referencing old table as old_rows for each statement execute function access_sync_rule_old();
create trigger access_sync_rule_users_ins after insert on access_rule_users
  referencing new table as new_rows for each statement execute function access_sync_rule_new();
create trigger access_sync_rule_users_del after delete on access_rule_users
  referencing old table as old_rows for each statement execute function access_sync_rule_old();
create trigger access_sync_rule_identifiers_ins after insert on access_rule_identifiers
  referencing new table as new_rows for each statement execute function access_sync_rule_new();
create trigger access_sync_rule_identifiers_del after delete on access_rule_identifiers
  referencing old table as old_rows for each statement execute function access_sync_rule_old();
create trigger access_sync_rule_domains_ins after insert on access_rule_domains
  referencing new table as new_rows for each statement execute function access_sync_rule_new();
create trigger access_sync_rule_domains_del after delete on access_rule_domains
  referencing old table as old_rows for each statement execute function access_sync_rule_old();

-- group membership, a group's place in the tree, a device's group or protocol, an owner's name
create trigger access_sync_user_domains_ins after insert on user_domains
  referencing new table as new_rows for each statement execute function access_sync_member_new();
create trigger access_sync_user_domains_del after delete on user_domains
  referencing old table as old_rows for each statement execute function access_sync_member_old();
create trigger access_sync_domains_upd after update on domains
  referencing old table as old_rows new table as new_rows for each statement
  execute function access_sync_changed('project_id', 'parent_id');
create trigger access_sync_devices_upd after update on devices
  referencing old table as old_rows new table as new_rows for each statement
  execute function access_sync_changed('project_id', 'domain_id,protocol');
create trigger access_sync_users_upd after update on users
  referencing old table as old_rows new table as new_rows for each statement
  execute function access_sync_changed('project_id', 'name');
-- the project's time zone (its settings) is the zone of every time profile
create trigger access_sync_projects_upd after update on projects
  referencing old table as old_rows new table as new_rows for each statement
  execute function access_sync_changed('id', 'settings');
