-- Guest passes (issue 21 item 7; spec part 1 §3 "Guest key", part 2 §7 guest access): a guest's QR identifier
-- with the secret key of its public page `/guest-access/{keyId}`. Only the key's hash is stored; the pass goes
-- with its identifier (deleted by the `guest_access.expire` job after its validity). docs/decisions.md
-- "Guest access".
create table guest_passes (
  identifier_id integer primary key references identifiers(id) on delete cascade,
  project_id integer not null references projects(id) on delete cascade,
  key_hash text not null unique,
  -- the guest's address the pass was e-mailed to
  email text,
  created_by integer references users(id) on delete set null,
  created_at timestamptz not null
);
create index on guest_passes (project_id, created_by);
