-- Durable jobs: one table every instance shares. A worker claims due jobs with FOR UPDATE SKIP LOCKED, so two
-- instances never take the same one; a claim is a lease (locked_until): when the instance holding it dies,
-- the job becomes claimable again once the lease runs out. Times are written from the server's clock.
create table jobs (
  id bigint generated always as identity primary key,
  kind text not null,
  payload jsonb not null default '{}',
  -- waiting → running → done | failed (attempts used up) | cancelled
  state text not null default 'waiting' check (state in ('waiting', 'running', 'done', 'failed', 'cancelled')),
  run_at timestamptz not null,
  attempts integer not null default 0,
  max_attempts integer not null default 5,
  last_error text,
  -- a second enqueue with the same key is no new job
  idempotency_key text unique,
  locked_by text,
  locked_until timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index jobs_due on jobs (run_at) where state in ('waiting', 'running');

-- Typed events, written in the transaction of the change they report: committed with it or not at all.
-- Delivered in process after the commit, and to other instances through NOTIFY lintel_events (the row's id).
create table event_outbox (
  id bigint generated always as identity primary key,
  topic text not null,
  type text not null,
  payload jsonb not null,
  audience text not null,
  created_at timestamptz not null
);
create index event_outbox_created on event_outbox (created_at);
