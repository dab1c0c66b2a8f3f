-- Licences (issue 15): signed licence files, the evaluation licence, the warning's notification schedule.

-- Each project is one licensed instance: a licence file names the instance id it was issued for.
alter table projects add column instance_id text;
update projects set instance_id = gen_random_uuid()::text where instance_id is null;
alter table projects alter column instance_id set not null;
alter table projects alter column instance_id set default gen_random_uuid()::text;
create unique index projects_instance_id on projects (instance_id);

-- kind: file (a signed file), cloud (fetched from the licence server, signed), evaluation (made by the server
-- itself at first start, unsigned), manual (rows written by tests and older code)
alter table licenses add column kind text not null default 'manual';
alter table licenses add column licence_id text;
alter table licenses add column instance_id text;
alter table licenses add column units_per_licence integer not null default 1;
alter table licenses add column document text;
create unique index licenses_project_licence_id on licenses (project_id, licence_id) where licence_id is not null;

-- The licence warning's notifications (spec part 2 §9: notify before 14 days, mode everyday).
create table licence_notify (
  project_id integer primary key references projects(id) on delete cascade,
  notify_before integer not null default 14,
  mode text not null default 'everyday',
  last_notified_at timestamptz,
  -- the warning last notified (status and licence end), so "once" notifies once per warning
  last_warning text
);
