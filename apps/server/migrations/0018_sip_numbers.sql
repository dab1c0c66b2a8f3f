-- Virtual SIP numbers (spec part 1 §3 "Virtual SIP number"): the number, its name and its group. The
-- telephony that rings them (password, user, device, forwarding) adds its columns when it comes.
create table sip_numbers (
  id integer generated always as identity primary key,
  project_id integer not null references projects(id) on delete cascade,
  domain_id integer not null references domains(id) on delete cascade,
  number text not null,
  name text not null,
  created_by integer references users(id) on delete set null,
  created_at timestamptz not null default now(),
  unique (project_id, number)
);
create index sip_numbers_domain on sip_numbers (domain_id);
