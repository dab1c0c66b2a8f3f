-- Issue 21 item 1, a face identifier's photo (docs/decisions.md "Face photos"): the JPEG the server made of
-- the upload (storage/faces/{sha256}.jpg, not served under /storage/) named by its SHA-256 (hex). A new
-- photo is a change of what the devices hold: the identifiers' update trigger watches the column too.
alter table identifiers add column photo_sha256 text;

drop trigger access_sync_identifiers_upd on identifiers;
create trigger access_sync_identifiers_upd after update on identifiers
  referencing old table as old_rows new table as new_rows for each statement
  execute function access_sync_changed('project_id', 'name,type,value,is_active,owner_type,owner,period_restrict_active,period_restrict_from_u,period_restrict_to_u,passes_restrict_active,passes_restrict_max_count,photo_sha256');
