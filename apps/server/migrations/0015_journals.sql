-- Journals (issue 14 item 2): append-only, time-ordered families read newest first by keyset over
-- (time, id). The audit log is the first. A btree by (project, time, id) serves the first page, a page at
-- any time and a time range in index order; a second one by (project, actor, time, id) serves a range with
-- a filter by actor. BRIN was measured against these on 10 million rows (bench/journal, docs/decisions.md).
drop index if exists audit_events_project_created;
create index audit_events_project_time on audit_events (project_id, created_at desc, id desc);
create index audit_events_project_user_time on audit_events (project_id, user_id, created_at desc, id desc);
