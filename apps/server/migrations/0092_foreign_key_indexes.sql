-- Every foreign key's column is indexed (but those naming the project: a project is deleted whole, one scan a
-- table). Without an index, each row deleted from the referenced table scans the referencing one: a backup's
-- apply that removed 14,000 users scanned the 100,000 identifiers once per user (`identifiers.created_by`) and
-- ran for minutes; deleting one user scanned the whole ACS log (`acs_events.owner_id`), one identifier too.
-- Nullable columns get a partial index (the lookup `col = $1` implies `col is not null`). tests/api/
-- foreign-key-indexes.test.ts keeps it so for the tables to come.
create index if not exists sessions_user_id_fk on sessions (user_id) where user_id is not null;
create index if not exists markers_created_by_fk on markers (created_by) where created_by is not null;
create index if not exists user_imports_user_id_fk on user_imports (user_id) where user_id is not null;
create index if not exists sip_numbers_user_id_fk on sip_numbers (user_id) where user_id is not null;
create index if not exists sip_numbers_created_by_fk on sip_numbers (created_by) where created_by is not null;
create index if not exists backups_created_by_fk on backups (created_by) where created_by is not null;
create index if not exists schedules_created_by_fk on schedules (created_by) where created_by is not null;
create index if not exists holidays_created_by_fk on holidays (created_by) where created_by is not null;
create index if not exists access_rules_created_by_fk on access_rules (created_by) where created_by is not null;
create index if not exists identifiers_created_by_fk on identifiers (created_by) where created_by is not null;
create index if not exists identifier_imports_user_id_fk on identifier_imports (user_id) where user_id is not null;
create index if not exists acs_events_owner_id_fk on acs_events (owner_id) where owner_id is not null;
create index if not exists forward_rules_created_by_fk on forward_rules (created_by) where created_by is not null;
create index if not exists sip_trunks_created_by_fk on sip_trunks (created_by) where created_by is not null;
create index if not exists job_kind_pauses_paused_by_fk on job_kind_pauses (paused_by) where paused_by is not null;
create index if not exists ip_whitelist_created_by_fk on ip_whitelist (created_by) where created_by is not null;
create index if not exists mail_templates_created_by_fk on mail_templates (created_by) where created_by is not null;
create index if not exists webhooks_created_by_fk on webhooks (created_by) where created_by is not null;
create index if not exists guest_passes_created_by_fk on guest_passes (created_by) where created_by is not null;
create index if not exists access_areas_created_by_fk on access_areas (created_by) where created_by is not null;
create index if not exists broker_settings_updated_by_fk on broker_settings (updated_by) where updated_by is not null;
create index if not exists sip_settings_updated_by_fk on sip_settings (updated_by) where updated_by is not null;
create index if not exists integrations_created_by_fk on integrations (created_by) where created_by is not null;
create index if not exists users_account_id_fk on users (account_id) where account_id is not null;
create index if not exists auth_codes_account_id_fk on auth_codes (account_id) where account_id is not null;
create index if not exists domains_parent_id_fk on domains (parent_id) where parent_id is not null;
create index if not exists sip_numbers_forward_group_id_fk on sip_numbers (forward_group_id) where forward_group_id is not null;
create index if not exists devices_domain_id_fk on devices (domain_id) where domain_id is not null;
create index if not exists call_interception_domains_domain_id_fk on call_interception_domains (domain_id) where domain_id is not null;
create index if not exists used_refresh_tokens_session_id_fk on used_refresh_tokens (session_id) where session_id is not null;
create index if not exists domains_domain_type_id_fk on domains (domain_type_id) where domain_type_id is not null;
create index if not exists sip_numbers_device_id_fk on sip_numbers (device_id) where device_id is not null;
create index if not exists remote_control_sessions_device_id_fk on remote_control_sessions (device_id) where device_id is not null;
create index if not exists acs_events_rule_id_fk on acs_events (rule_id) where rule_id is not null;
create index if not exists acs_events_identifier_id_fk on acs_events (identifier_id) where identifier_id is not null;
create index if not exists sip_calls_trunk_id_fk on sip_calls (trunk_id) where trunk_id is not null;
create index if not exists call_history_trunk_id_fk on call_history (trunk_id) where trunk_id is not null;
