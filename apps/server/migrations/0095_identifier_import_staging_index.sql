-- Issue 26, item 4: the identifiers' staging table kept an index on (import_id, type, value) that no statement
-- reads (duplicates within a file are found as the attempt reads it, duplicates of the project's identifiers
-- against `identifiers` itself); every row an attempt stages paid for it.
drop index if exists identifier_import_rows_import_id_type_value_idx;
