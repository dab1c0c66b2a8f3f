-- SIP trunks (issue 22 item 4; spec part 1 §3 "SIP trunk"): a provider's line out, with the number calls
-- leave with, the provider's URI, and the credentials Kamailio presents to it. The password is kept as given
-- (Kamailio must present it: it cannot be a hash) and never returned by the API.
create table sip_trunks (
  id integer generated always as identity primary key,
  project_id integer not null references projects(id) on delete cascade,
  name text not null,
  outgoing_number text not null,
  termination_uri text not null,
  login text not null default '',
  password text,
  created_by integer references users(id) on delete set null,
  created_at timestamptz not null default now(),
  unique (project_id, name)
);
-- the groups whose calls it carries (at least one)
create table sip_trunk_groups (
  sip_trunk_id integer not null references sip_trunks(id) on delete cascade,
  domain_id integer not null references domains(id) on delete cascade,
  primary key (sip_trunk_id, domain_id)
);
create index sip_trunk_groups_domain on sip_trunk_groups (domain_id);
