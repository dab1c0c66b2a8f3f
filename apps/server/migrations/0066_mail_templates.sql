-- Mail templates (issue 24 item 5): one per type per group, or one per type for the whole project (no group).
-- The mail of that type for a group's people is written with the template of the nearest group up their
-- chain, else the project's, else the built-in text (apps/server/src/mail/templates.ts).
create table mail_templates (
  id integer generated always as identity primary key,
  project_id integer not null references projects(id) on delete cascade,
  mail_type text not null,
  domain_id integer references domains(id) on delete cascade,
  subject text not null,
  body text not null,
  created_by integer references users(id) on delete set null,
  updated_at timestamptz not null
);
create unique index mail_templates_one_per_type on mail_templates (project_id, mail_type, coalesce(domain_id, 0));
create index mail_templates_domain on mail_templates (domain_id);
