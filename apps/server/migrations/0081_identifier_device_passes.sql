-- An identifier's pass limit across its devices (docs/decisions.md "A pass limit across devices").
--
-- Each device counts its own passes per identifier and refuses once its count reaches the `max_passes` it
-- holds; `passes_count` is the identifier's passes everywhere (the devices' granted ACS events and the guest
-- page's openings). A device must hold `max_passes = limit - (passes counted elsewhere)`, and so must know
-- how many passes it counted itself: this table, written with `passes_count` in the ACS log's transaction
-- (apps/server/src/access-sync/acs.ts). The guest page's openings count for no device.
create table identifier_device_passes (
  identifier_id integer not null references identifiers(id) on delete cascade,
  device_id integer not null references devices(id) on delete cascade,
  passes integer not null check (passes >= 0),
  primary key (identifier_id, device_id)
);
create index identifier_device_passes_device on identifier_device_passes (device_id);

-- the passes the devices counted so far, from their granted ACS events (the page's openings are the server's
-- own, `guest-open-…`), never more than the identifier's whole count
insert into identifier_device_passes (identifier_id, device_id, passes)
  select e.identifier_id, e.device_id, least(count(*), max(i.passes_count))::int
  from acs_events e join identifiers i on i.id = e.identifier_id
  where e.decision = 'granted' and e.device_id is not null and e.event_id not like 'guest-open-%'
  group by e.identifier_id, e.device_id
  having least(count(*), max(i.passes_count)) > 0;

-- a pass anywhere changes what the identifier's other devices must hold when it has a pass limit: its project
-- is planned again (the planner sends only the items whose body changed)
create function access_sync_passes_counted() returns trigger language plpgsql as $$
begin
  insert into access_sync_changes (project_id)
    select distinct n.project_id from new_rows n join old_rows o on o.id = n.id
    where n.passes_restrict_active and n.passes_count is distinct from o.passes_count;
  return null;
end $$;
create trigger access_sync_identifiers_passes after update on identifiers
  referencing old table as old_rows new table as new_rows for each statement
  execute function access_sync_passes_counted();
