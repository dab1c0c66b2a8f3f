-- Issue 26, item 4: a membership added names its project through its group, not its user. The trigger's
-- statement is planned once a connection (PL/pgSQL keeps the plan) when `users` was small, and that plan —
-- the new rows against every user — stayed: the one-request import, which inserts a batch's memberships a
-- statement at a time in one transaction, spent 0.5–2.5 s a batch of 1,000 in it by 20,000 users, growing
-- with the users it had inserted. `domains` does not grow in an import; a group and its members are of one
-- project (user.create and the imports refuse another project's groups).
create or replace function access_sync_member_new() returns trigger language plpgsql as $$
begin
  insert into access_sync_changes (project_id)
    select distinct d.project_id from new_rows n join domains d on d.id = n.domain_id;
  return null;
end $$;
