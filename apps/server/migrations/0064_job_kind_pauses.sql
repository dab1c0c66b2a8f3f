-- Workers (issue 24 item 3): a job kind an operator stopped. Installation-wide, as the jobs table is: no
-- instance claims a job of a kind listed here until it is started again (jobs/queue.ts `claim`).
create table job_kind_pauses (
  kind text primary key,
  paused_by integer references users(id) on delete set null,
  paused_at timestamptz not null
);
