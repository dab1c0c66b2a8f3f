-- Webhooks (issue 24 item 5, beyond the spec): an HTTPS endpoint of a project receives the platform's events
-- signed with its secret, with retries and a delivery log. docs/decisions.md "Webhooks".
create table webhooks (
  id integer generated always as identity primary key,
  project_id integer not null references projects(id) on delete cascade,
  name text not null,
  url text not null,
  -- the event types it receives (the outbox's types); empty: every event its maker may receive
  events jsonb not null default '[]'::jsonb,
  is_active boolean not null default true,
  -- the key of the signature, never returned
  secret text not null,
  created_by integer references users(id) on delete set null,
  created_at timestamptz not null default now(),
  -- the outbox's last event when it was made: it receives the events after it
  from_event_id bigint not null default 0,
  unique (project_id, name)
);
create function webhooks_from_now() returns trigger language plpgsql as $$
begin
  new.from_event_id := coalesce((select max(id) from event_outbox), 0);
  return new;
end $$;
create trigger webhooks_from_now before insert on webhooks for each row execute function webhooks_from_now();

-- One row per event sent to a webhook: what the log shows, what the delivery job works on.
create table webhook_deliveries (
  id bigint generated always as identity primary key,
  project_id integer not null references projects(id) on delete cascade,
  webhook_id integer not null references webhooks(id) on delete cascade,
  -- null for a test the operator asked for
  event_id bigint,
  event_type text not null,
  body text not null,
  state text not null default 'pending' check (state in ('pending', 'delivered', 'failed')),
  attempts integer not null default 0,
  response_status integer,
  error text,
  created_at timestamptz not null,
  delivered_at timestamptz,
  unique (webhook_id, event_id)
);
create index webhook_deliveries_webhook on webhook_deliveries (webhook_id, id desc);

-- How far the outbox has been read for webhooks: one row, locked by the instance that reads on.
create table webhook_cursor (
  id integer primary key check (id = 1),
  last_event_id bigint not null
);
insert into webhook_cursor (id, last_event_id) values (1, 0);
