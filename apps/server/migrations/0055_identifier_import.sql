-- Issue 21, item 6: the two-step import of identifiers (spec part 1 §4: attempt, then continue with an action
-- and a file path). The attempt stages every row checked — its canonical value, its owner, the identifier it
-- duplicates (same type and value), or its problems — through the generic stager of engine/bulk-import.ts;
-- the continue commits the import in one transaction with the action chosen for duplicates (skip,
-- overwrite, stop). `id` is the "file path" the spec's continue names.
create table identifier_imports (
  id uuid primary key,
  project_id integer not null references projects(id) on delete cascade,
  user_id integer not null references users(id) on delete cascade,
  status text not null default 'open' check (status in ('open', 'committed')),
  rows_total integer not null default 0,
  rows_invalid integer not null default 0,
  rows_duplicate integer not null default 0,
  created_at timestamptz not null default now()
);

create table identifier_import_rows (
  import_id uuid not null references identifier_imports(id) on delete cascade,
  line integer not null,
  type text,
  value text,
  name text not null default '',
  owner integer,
  description text not null default '',
  -- the identifier of the project with the same type and value, when the row duplicates one
  duplicate_of integer,
  errors jsonb,
  primary key (import_id, line)
);
create index on identifier_import_rows (import_id, type, value);
