-- Identity families: groups' own fields, domain types, markers, user fields, licences.

create table domain_types (
  id integer generated always as identity primary key,
  project_id integer not null references projects(id) on delete cascade,
  type text not null,
  name text not null,
  created_at timestamptz not null default now(),
  unique (project_id, type)
);

alter table domains add constraint domains_domain_type_fk foreign key (domain_type_id) references domain_types(id) on delete set null;
alter table domains add column whitelabel_settings jsonb not null default '{}'::jsonb;
alter table domains add column guest_identifier_limits jsonb not null default '{}'::jsonb;
alter table domains add column device_status_notify jsonb not null default '[]'::jsonb;
alter table domains add column license_settings jsonb not null default '{}'::jsonb;
-- "domain with same type and logical address exists"
create unique index domains_type_logic_address on domains (project_id, coalesce(domain_type_id, 0), logic_address) where logic_address is not null and logic_address <> '';
create index domains_name on domains (project_id, lower(name));

create table markers (
  id integer generated always as identity primary key,
  project_id integer not null references projects(id) on delete cascade,
  name text not null,
  color text not null,
  created_by integer references users(id) on delete set null,
  created_at timestamptz not null default now(),
  unique (project_id, name)
);

create table user_markers (
  user_id integer not null references users(id) on delete cascade,
  marker_id integer not null references markers(id) on delete cascade,
  primary key (user_id, marker_id)
);
create index user_markers_marker on user_markers (marker_id);

alter table users add column elevator_access_disabled boolean not null default false;
alter table users add column is_group_admin boolean not null default false;
alter table users add column avatar_url text;
create index users_project_name on users (project_id, name, id);
create index users_project_created on users (project_id, created_at, id);
create index user_domains_domain on user_domains (domain_id, user_id);
create index users_role on users (role_id);

-- The server licence of a project: which features, how many, from when to when.
create table licenses (
  id integer generated always as identity primary key,
  project_id integer not null references projects(id) on delete cascade,
  issuer text not null default '',
  valid_from timestamptz,
  valid_to timestamptz,
  is_active boolean not null default true,
  features jsonb not null default '{}'::jsonb,
  created_at timestamptz not null default now()
);
