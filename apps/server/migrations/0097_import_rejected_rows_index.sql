-- Issue 26, item 4: a users import's report reads its rejected rows (the first ones by line, their counts by
-- problem, the rejected lines as ranges) with `errors is not null`: three scans of every staged row, 0.6–0.9 s
-- at 1,000,000 rows for a report of a few. The rejected rows alone, by import and line, in an index as small
-- as they are few (a valid row, the most of a file, pays nothing for it).
create index user_import_rows_rejected on user_import_rows (import_id, line) where errors is not null;
