-- Issue 26, item 4: the imports' staging tables hold checked rows only until their import commits (or is
-- dropped after a day); writing them to the WAL was a good part of an import's database time beyond the plain
-- insert of its rows. Unlogged, a crash empties them: the commit then finds fewer rows staged than the import
-- counted and refuses (`import_lost`), so a lost staging never commits a part of a file.
alter table user_import_rows set unlogged;
alter table identifier_import_rows set unlogged;
