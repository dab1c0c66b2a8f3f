-- Call interception (issue 22 item 7; spec part 1 §3 "Interception settings", §4 "Interception"): a
-- concierge's settings — whether he intercepts now, and the groups whose panels' calls come to him. Kept
-- when he stops (the groups are there for the next start). A group deleted leaves his list.
create table call_interceptions (
  user_id integer primary key references users(id) on delete cascade,
  project_id integer not null references projects(id) on delete cascade,
  is_active boolean not null default false,
  updated_at timestamptz not null default now()
);
create index call_interceptions_active on call_interceptions (project_id) where is_active;
create table call_interception_domains (
  user_id integer not null references call_interceptions(user_id) on delete cascade,
  domain_id integer not null references domains(id) on delete cascade,
  primary key (user_id, domain_id)
);

-- the routing keeps what it reads in memory (migration 0079): a change tells every instance to forget it
create trigger call_interceptions_routes_changed after insert or update or delete or truncate
  on call_interceptions for each statement execute function lintel_sip_routes_changed();
create trigger call_interception_domains_routes_changed after insert or update or delete or truncate
  on call_interception_domains for each statement execute function lintel_sip_routes_changed();
