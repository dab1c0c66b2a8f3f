-- The SIP settings (issue 24 item 2, issue 22 items 1 and 10; spec part 2 §7 "Project settings: SIP GET and
-- PATCH"): what an installer set for the installation's SIP server over the environment's LINTEL_SIP_* — the
-- realm, the public address and port Kamailio advertises, the web dialer's ICE servers, the timeouts. One row,
-- installation-wide like the SIP server itself; `settings` holds only the keys that were set (a key left out is
-- the environment's). A TURN server's credential is a secret: never returned, never logged.
create table sip_settings (
  id boolean primary key default true check (id),
  settings jsonb not null,
  updated_by integer references users(id) on delete set null,
  updated_at timestamptz not null
);
