-- IP blocking (issue 24 item 4; spec part 2 §7 "IP blocking", §9 "Block causes"): per service (the console's
-- sign-in, the SIP server), installation-wide like the addresses it guards. Several instances on one
-- database share it: a ban written by one is read by every other at the next attempt.
create table ip_blocking_settings (
  service text primary key check (service in ('console', 'sip')),
  enabled boolean not null default true,
  -- failures from one address within the window before it is banned
  max_failures integer not null check (max_failures between 1 and 100000),
  window_s integer not null check (window_s between 1 and 31536000),
  -- how long a ban lasts
  ban_time_s integer not null check (ban_time_s between 1 and 31536000),
  updated_at timestamptz not null
);

create table ip_bans (
  service text not null check (service in ('console', 'sip')),
  ip inet not null,
  cause text not null check (cause in ('unknown', 'auth_failed', 'wrong_number')),
  failures integer not null default 0,
  banned_at timestamptz not null,
  banned_until timestamptz not null,
  primary key (service, ip)
);
create index ip_bans_until on ip_bans (service, banned_until);

-- addresses never banned: one address, a range (start_ip to end_ip) or a prefix (stored as its range)
create table ip_whitelist (
  id integer generated always as identity primary key,
  service text not null check (service in ('console', 'sip')),
  -- as the operator wrote it: `10.0.0.1`, `10.0.0.0/8`, `10.0.0.1-10.0.0.9`
  label text not null,
  start_ip inet not null,
  end_ip inet not null,
  description text not null default '',
  created_by integer references users(id) on delete set null,
  created_at timestamptz not null,
  unique (service, label),
  check (family(start_ip) = family(end_ip) and start_ip <= end_ip)
);
create index ip_whitelist_range on ip_whitelist (service, start_ip, end_ip);
