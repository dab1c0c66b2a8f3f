-- Trigram indexes, so that `contains` and free-text search use an index instead of reading every row.
-- pg_trgm is a trusted extension: the database's owner may create it.
create extension if not exists pg_trgm;
create index users_name_trgm on users using gin (name gin_trgm_ops);
create index accounts_login_trgm on accounts using gin (login gin_trgm_ops);
create index accounts_email_trgm on accounts using gin (email gin_trgm_ops);
create index domains_name_trgm on domains using gin (name gin_trgm_ops);
