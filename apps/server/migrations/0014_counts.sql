-- Issue 14: a list sorted by name walks an index in the order it shows and stops after its page, instead of
-- computing the natural sort key (engine/list.ts naturalSortKey: digit runs zero-padded to 20 places) of every
-- matching row and sorting them all. The expression must stay the one naturalSortKey writes, character for
-- character, or the planner does not match it.
create index users_project_name_natural on users (
  project_id,
  regexp_replace(regexp_replace(name, '([0-9]+)', '00000000000000000000\1', 'g'), '0*([0-9]{20})', '\1', 'g'),
  name,
  id
);
create index domains_project_name_natural on domains (
  project_id,
  regexp_replace(regexp_replace(name, '([0-9]+)', '00000000000000000000\1', 'g'), '0*([0-9]{20})', '\1', 'g'),
  name,
  id
);
