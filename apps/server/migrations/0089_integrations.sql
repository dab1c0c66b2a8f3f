-- Integrations (issue 24 item 5; spec part 1 §3 "Integration"): a third-party server the project uses, today
-- Axxon One (video management). Owned by a group (its administrators manage it) or by the project (no group);
-- it serves the groups of integration_domains. The server's password is kept as given (it is presented to the
-- server: it cannot be a hash) and never returned by the API; its certificate is the PEM uploaded, with what
-- it says (certificate_info) read once at the upload. docs/decisions.md "Integrations (issue 24 item 5)".
create table integrations (
  id integer generated always as identity primary key,
  project_id integer not null references projects(id) on delete cascade,
  type text not null,
  name text not null,
  domain_id integer references domains(id) on delete cascade,
  server_url text not null,
  login text not null default '',
  password text,
  certificate text,
  certificate_info jsonb,
  created_by integer references users(id) on delete set null,
  created_at timestamptz not null default now(),
  unique (project_id, name)
);
-- one integration per server in a project (spec part 2 §8 "server URL exists")
create unique index integrations_server_url on integrations (project_id, lower(server_url));
create index integrations_domain on integrations (domain_id);
-- the groups it serves: their devices may use it
create table integration_domains (
  integration_id integer not null references integrations(id) on delete cascade,
  domain_id integer not null references domains(id) on delete cascade,
  primary key (integration_id, domain_id)
);
create index integration_domains_domain on integration_domains (domain_id);
