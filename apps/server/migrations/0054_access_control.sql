-- Issue 21, access control: the families the one decision (packages/core/src/access/) reads and the device
-- sync derives from. Each table maps onto the core's types without a translation layer: a schedule's columns
-- are `ScheduleSpec`'s, an identifier's are `Identifier`'s, an access rule's relations are `AccessRuleSpec`'s
-- id lists, one join table each. The other ends' `access_rules` (an identifier's, a schedule's) are the same
-- join tables read from the other side, never a second copy (docs/decisions.md "Access control: the families").

-- Schedules (spec part 1 §3 "Schedule"): a calendar event in the project's time zone. Dates are local dates
-- as text (`YYYY-MM-DD`, what the core reads; a `date` column would come back as a JS Date at some midnight).
create table schedules (
  id integer generated always as identity primary key,
  project_id integer not null references projects(id) on delete cascade,
  name text not null,
  description text not null default '',
  valid_from text not null check (valid_from ~ '^\d{4}-\d{2}-\d{2}$'),
  valid_to text check (valid_to ~ '^\d{4}-\d{2}-\d{2}$'),
  is_all_day boolean not null default false,
  repeat_mode text not null default 'weekly'
    check (repeat_mode in ('never', 'daily', 'weekly', 'every_2_weeks', 'monthly', 'yearly')),
  -- weekdays `mon` … `sun` (a JSON array of them)
  repeat_days jsonb not null default '[]'::jsonb,
  time_from integer not null default 32400 check (time_from between 0 and 86400),
  time_to integer not null default 64800 check (time_to between 0 and 86400),
  created_by integer references users(id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (project_id, name)
);

-- Holidays (beyond the spec, as Kisi and Brivo): a local date on which no schedule's window opens, at the
-- devices of its groups and the groups below them; a holiday of no group is the whole project's.
create table holidays (
  id integer generated always as identity primary key,
  project_id integer not null references projects(id) on delete cascade,
  name text not null,
  date text not null check (date ~ '^\d{4}-\d{2}-\d{2}$'),
  description text not null default '',
  created_by integer references users(id) on delete set null,
  created_at timestamptz not null default now(),
  unique (project_id, name, date)
);
create index on holidays (project_id, date);
create table holiday_domains (
  holiday_id integer not null references holidays(id) on delete cascade,
  domain_id integer not null references domains(id) on delete cascade,
  primary key (holiday_id, domain_id)
);
create index on holiday_domains (domain_id);

-- Access rules (spec part 1 §3 "Access rule"): who (users, identifiers, the members of groups) may pass which
-- devices when (schedules; none: at all times), or, with `prohibition`, may not.
create table access_rules (
  id integer generated always as identity primary key,
  project_id integer not null references projects(id) on delete cascade,
  name text not null,
  description text not null default '',
  prohibition boolean not null default false,
  is_shareable boolean not null default false,
  created_by integer references users(id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (project_id, name)
);
create index on access_rules (project_id);

-- Identifiers (spec part 1 §3 "Identifier"): `value` is the stored canonical value of its type (card and
-- ukey: the number in decimal; qr and face: a UUID the server made; a plate upper-cased), unique with the
-- type in a project ("identifier duplicate (number and type)"). `period_restrict_from/to` are the wall-clock
-- times as typed (`YYYY-MM-DDTHH:MM:SS`), `_u` the instants the devices and the decision compare with.
-- `passes_count` is what the devices reported. A guest identifier has owner_type 'guest' and no owner.
create table identifiers (
  id integer generated always as identity primary key,
  project_id integer not null references projects(id) on delete cascade,
  name text not null default '',
  type text not null
    check (type in ('card', 'ukey', 'ukey2', 'access_code', 'url', 'qr', 'license_plate', 'face')),
  value text not null,
  is_active boolean not null default true,
  owner_type text not null default 'user' check (owner_type in ('user', 'guest')),
  owner integer references users(id) on delete cascade,
  description text not null default '',
  period_restrict_active boolean not null default false,
  period_restrict_from text,
  period_restrict_to text,
  period_restrict_from_u timestamptz,
  period_restrict_to_u timestamptz,
  passes_restrict_active boolean not null default false,
  passes_restrict_max_count integer not null default 0 check (passes_restrict_max_count >= 0),
  passes_count integer not null default 0 check (passes_count >= 0),
  guest_type text check (guest_type in ('guest')),
  -- the stored photo's key (face identifiers), served like avatars
  photo text,
  created_by integer references users(id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (project_id, type, value)
);
create index on identifiers (owner);
create index on identifiers (project_id, owner_type);

-- The access rule's relations, one join table each (`access_rule_id` the rule, the other column the row).
create table access_rule_devices (
  access_rule_id integer not null references access_rules(id) on delete cascade,
  device_id integer not null references devices(id) on delete cascade,
  primary key (access_rule_id, device_id)
);
create index on access_rule_devices (device_id);

create table access_rule_schedules (
  access_rule_id integer not null references access_rules(id) on delete cascade,
  schedule_id integer not null references schedules(id) on delete cascade,
  primary key (access_rule_id, schedule_id)
);
create index on access_rule_schedules (schedule_id);

create table access_rule_users (
  access_rule_id integer not null references access_rules(id) on delete cascade,
  user_id integer not null references users(id) on delete cascade,
  primary key (access_rule_id, user_id)
);
create index on access_rule_users (user_id);

create table access_rule_identifiers (
  access_rule_id integer not null references access_rules(id) on delete cascade,
  identifier_id integer not null references identifiers(id) on delete cascade,
  primary key (access_rule_id, identifier_id)
);
create index on access_rule_identifiers (identifier_id);

create table access_rule_domains (
  access_rule_id integer not null references access_rules(id) on delete cascade,
  domain_id integer not null references domains(id) on delete cascade,
  primary key (access_rule_id, domain_id)
);
create index on access_rule_domains (domain_id);
