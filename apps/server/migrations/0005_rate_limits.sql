-- One counter per key (policy, route or kind, and the address, account or target e-mail it counts), over a
-- fixed window: the first hit opens the window, later hits add one until window_end, when the next hit
-- starts a new window at 1. Every hit is one atomic insert ... on conflict do update ... returning, so
-- parallel requests, and several servers on one database, all see their own count.
create table rate_limits (
  key text primary key,
  window_start timestamptz not null,
  window_end timestamptz not null,
  count integer not null
);
create index rate_limits_window_end on rate_limits (window_end);

-- the failed-login counters per address that rate_limits replaces
drop table ip_blocks;
