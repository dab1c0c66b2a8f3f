-- What a request's caller is made of (its session, user, role and permissions; its groups and their
-- subtree) is cached by each server instance (apps/server/src/engine/request-cache.ts). Any change to those
-- tables, made by whichever instance or by hand, tells every instance to forget: one NOTIFY per statement
-- (PostgreSQL folds the same notification within a transaction into one), delivered at commit.
create function lintel_auth_changed() returns trigger language plpgsql as $$
begin
  perform pg_notify('lintel_auth', '');
  return null;
end;
$$;

create trigger sessions_auth_changed after update of revoked_at, token_hash, token_expires_at, user_id or delete or truncate
  on sessions for each statement execute function lintel_auth_changed();
create trigger users_auth_changed after update of role_id, project_id, account_id or delete or truncate
  on users for each statement execute function lintel_auth_changed();
create trigger roles_auth_changed after update of permissions, available_roles or delete or truncate
  on roles for each statement execute function lintel_auth_changed();
create trigger accounts_auth_changed after delete or truncate
  on accounts for each statement execute function lintel_auth_changed();
create trigger user_domains_auth_changed after insert or update or delete or truncate
  on user_domains for each statement execute function lintel_auth_changed();
create trigger domains_auth_changed after insert or update of parent_id, project_id or delete or truncate
  on domains for each statement execute function lintel_auth_changed();
