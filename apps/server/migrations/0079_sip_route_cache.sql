-- The facts the routing of calls reads (numbers and their owners, forward rules, trunks, a user's number and
-- time zone, a device's group) are kept in memory by each server instance (apps/server/src/sip/calls.ts,
-- `routeCache`). Any change to those tables, made by whichever instance or by hand, tells every instance to
-- forget them: one NOTIFY per statement, delivered at commit. Users' groups and the group tree already notify
-- `lintel_auth` (migration 0028), which forgets them too.
create function lintel_sip_routes_changed() returns trigger language plpgsql as $$
begin
  perform pg_notify('lintel_sip_routes', '');
  return null;
end;
$$;

create trigger sip_numbers_routes_changed after insert or update or delete or truncate
  on sip_numbers for each statement execute function lintel_sip_routes_changed();
create trigger forward_rules_routes_changed after insert or update or delete or truncate
  on forward_rules for each statement execute function lintel_sip_routes_changed();
create trigger sip_number_forward_rules_routes_changed after insert or update or delete or truncate
  on sip_number_forward_rules for each statement execute function lintel_sip_routes_changed();
create trigger sip_trunks_routes_changed after insert or update or delete or truncate
  on sip_trunks for each statement execute function lintel_sip_routes_changed();
create trigger sip_trunk_groups_routes_changed after insert or update or delete or truncate
  on sip_trunk_groups for each statement execute function lintel_sip_routes_changed();
create trigger users_routes_changed after update of profile or delete or truncate
  on users for each statement execute function lintel_sip_routes_changed();
create trigger devices_routes_changed after update of domain_id or delete or truncate
  on devices for each statement execute function lintel_sip_routes_changed();
