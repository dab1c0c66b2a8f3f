-- Per-group licence settings (issue 15 item 4, spec part 1 §3): each licence of a group holds a feature set
-- (the flags of license_info) and a period; the group's maximums of counted things move to their own column.

-- The maximums: { virtual_numbers, mobile_apps, ukey2_keys, users, ... } (null or absent: none of its own).
alter table domains add column license_limits jsonb not null default '{}'::jsonb;

-- Older licence entries were one feature each with a maximum: { feature, is_active, max, restrict_period }.
-- Their maximums (those in force: settings on, entry active) become the group's maximums.
update domains d set license_limits = coalesce((
  select jsonb_object_agg(
    case e->>'feature'
      when 'sip' then 'virtual_numbers'
      when 'mobile_app' then 'mobile_apps'
      when 'ukey2' then 'ukey2_keys'
      else e->>'feature'
    end,
    (e->>'max')::int)
  from jsonb_array_elements(d.license_settings->'licenses') e
  where e ? 'feature' and jsonb_typeof(e->'max') = 'number' and (e->>'is_active') = 'true'
), '{}'::jsonb)
where d.license_settings->>'is_enabled' = 'true' and jsonb_typeof(d.license_settings->'licenses') = 'array';

-- Each older entry of a licensed feature becomes a licence with that feature's switch on; its period keeps
-- its days. Entries that only carried a maximum (users, ...) are gone from the licences.
update domains d set license_settings = jsonb_set(d.license_settings, '{licenses}', coalesce((
  select jsonb_agg(jsonb_build_object(
    'is_active', (e->>'is_active') = 'true',
    'features', jsonb_build_object(e->>'feature', jsonb_build_object(
      case e->>'feature'
        when 'face_id' then 'is_enabled_for_guests'
        when 'identifier' then 'is_guest_enabled'
        else 'is_enabled'
      end, true)),
    'restrict_period', jsonb_build_object(
      'is_active', (e->'restrict_period'->>'is_active') = 'true',
      'from', case when (e->'restrict_period'->>'is_active') = 'true'
        then substring(e->'restrict_period'->>'from' for 10) end,
      'to', case when (e->'restrict_period'->>'is_active') = 'true'
        then substring(e->'restrict_period'->>'to' for 10) end)))
  from jsonb_array_elements(d.license_settings->'licenses') e
  where e->>'feature' in ('sip', 'mobile_app', 'elevator', 'license_plate', 'face_id', 'amenity', 'ukey2', 'identifier')
), '[]'::jsonb))
where jsonb_typeof(d.license_settings->'licenses') = 'array'
  and exists (select 1 from jsonb_array_elements(d.license_settings->'licenses') e where e ? 'feature');

-- The groups' licence notifications (notifications {period, notify_before}): when each group was last told,
-- and of which licence end, so "once" tells once per end and the other modes keep their interval.
create table group_licence_notify (
  domain_id integer primary key references domains(id) on delete cascade,
  last_notified_at timestamptz not null,
  last_key text not null
);
