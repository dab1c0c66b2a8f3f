/**
 * A throwaway family, declared the way a new plain family is (docs/project-layout.md, "Adding a family in
 * five steps"): its declaration, its table, and the little its store cannot guess. Nothing else is written
 * for it; tests/api/fixture-family.test.ts finds it on every surface.
 */
import { z } from 'zod';
import { defineResource, NameLike, Ref, Timestamp } from '@lintel/commands';

export const Spa = z.object({
  id: z.number().int(),
  name: z.string(),
  capacity: z.number().int(),
  domain_id: z.number().int(),
  created_at: Timestamp,
  created_by_user: Ref.nullable(),
});

const SpaInput = z.object({
  name: NameLike,
  capacity: z.number().int().min(1).max(500),
  domain_id: z.number().int().min(1),
});

export const spaResource = defineResource({
  noun: 'fixture_spa',
  segment: 'fixture-spas',
  record: Spa,
  create: SpaInput.strict(),
  update: SpaInput.partial().strict(),
  fields: {
    id: { kind: 'number', default: true, filterable: true, sortable: true },
    name: { kind: 'text', default: true, filterable: true, sortable: true },
    capacity: { kind: 'number', default: true, filterable: true, sortable: true },
    created_at: { kind: 'date', filterable: true, sortable: true },
  },
  gates: {
    view: ['amenities.view_all', 'amenities.view_descendants', 'amenities.view_own'],
    create: ['amenities.create_all', 'amenities.create_descendants'],
    edit: ['amenities.edit_all', 'amenities.edit_descendants'],
    delete: ['amenities.delete_all', 'amenities.delete_descendants'],
  },
  scopes: {
    owner: { group: 'domain_id', creator: 'created_by' },
    view: {
      'amenities.view_all': 'all',
      'amenities.view_descendants': 'descendants',
      'amenities.view_own': 'own',
    },
    create: { 'amenities.create_all': 'all', 'amenities.create_descendants': 'descendants' },
    edit: { 'amenities.edit_all': 'all', 'amenities.edit_descendants': 'descendants' },
    delete: { 'amenities.delete_all': 'all', 'amenities.delete_descendants': 'descendants' },
  },
  // a group's maximum `license_limits.fixture_spas` caps the spas of its subtree
  limits: [{ per: 'group', feature: 'fixture_spas' }],
  unique: ['name'],
  refs: { domain_id: { family: 'group', many: false } },
  ui: { path: '/fixture-spas', icon: 'home', section: 'common' },
  table: 'fixture_spas',
});

/** Its migration. */
export const spaTable = `
create table fixture_spas (
  id integer generated always as identity primary key,
  project_id integer not null references projects(id) on delete cascade,
  domain_id integer not null references domains(id) on delete cascade,
  name text not null,
  capacity integer not null,
  created_by integer references users(id) on delete set null,
  created_at timestamptz not null default now(),
  unique (project_id, name)
)`;
