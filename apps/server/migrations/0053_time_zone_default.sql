-- Issue 25, item 2: every profile without a time zone was given '+02:00', so every time in the console read
-- two hours off for anyone not in that zone. The default is now nothing (the browser's own zone, the CLI the
-- terminal's). '+02:00' cannot be told apart from a choice, and was what nearly everyone had without
-- choosing it: it is cleared (docs/decisions.md, "Time zones").
update users set profile = jsonb_set(profile, '{time_zone}', '""'::jsonb)
  where profile->>'time_zone' = '+02:00';
