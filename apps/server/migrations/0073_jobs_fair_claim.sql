-- The job queue's claim is fair across kinds (jobs/queue.ts): it looks for the oldest due jobs of each kind
-- and counts the jobs each kind is running, so both need an index of their own.
create index jobs_kind_due on jobs (kind, run_at, id) where state in ('waiting', 'running');
create index jobs_kind_running on jobs (kind) where state = 'running';
