-- Secrets an installation's instances share through their database (issue 20, item 10): the key that signs
-- what crosses instances on Redis. Made by the first instance that needs it; never returned by the API.
create table installation_secrets (
  name text primary key,
  value text not null,
  created_at timestamptz not null default now()
);
