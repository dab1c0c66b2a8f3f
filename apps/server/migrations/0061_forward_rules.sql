-- Forward rules (issue 22 items 4, 5; spec part 1 §3 "Forward rule"): what happens to a call a number does
-- not take. `redirect_if_no_answer` rings the number `timeout` seconds (default 10) then its `numbers`;
-- `redirect_if_error` moves to them when the number cannot be reached; then each of `queues` in turn. `days`
-- (mon … sun; none: every day) and `period` ({from, to} seconds after local midnight; null: all day) say
-- when the rule applies. A number follows its rules when its forward mode is `manual`.
create table forward_rules (
  id integer generated always as identity primary key,
  project_id integer not null references projects(id) on delete cascade,
  domain_id integer not null references domains(id) on delete cascade,
  name text not null,
  type text not null default 'redirect_if_no_answer',
  timeout integer not null default 10,
  numbers jsonb not null default '[]'::jsonb,
  queues jsonb not null default '[]'::jsonb,
  days jsonb not null default '[]'::jsonb,
  period jsonb,
  created_by integer references users(id) on delete set null,
  created_at timestamptz not null default now(),
  unique (project_id, name)
);
create index forward_rules_domain on forward_rules (domain_id);

-- a number's forward rules, in the order they were given
create table sip_number_forward_rules (
  sip_number_id integer not null references sip_numbers(id) on delete cascade,
  forward_rule_id integer not null references forward_rules(id) on delete cascade,
  primary key (sip_number_id, forward_rule_id)
);
create index sip_number_forward_rules_rule on sip_number_forward_rules (forward_rule_id);
