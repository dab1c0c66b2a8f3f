/**
 * The trial family of issue 19, declared exactly as a shipped one would be (docs/project-layout.md, "Adding
 * a family"): amenities with a name, a description, their groups (many-to-many, which also place them for
 * the scopes) and a licence flag. No store and no test line of its own: tests/api/fixture-amenity.test.ts
 * puts it in a fixture registry and runs the registry-wide suites over it.
 */
import { z } from 'zod';
import { defineResource, Description, Ids, NameLike, Ref, Timestamp } from '@lintel/commands';

export const Amenity = z.object({
  id: z.number().int(),
  name: z.string(),
  description: z.string(),
  groups: z.array(Ref),
  created_at: Timestamp,
  created_by_user: Ref.nullable(),
});

const AmenityInput = z.object({
  name: NameLike,
  description: Description.optional(),
  groups: Ids(100).min(1),
});

export const amenityResource = defineResource({
  noun: 'fixture_amenity',
  segment: 'fixture-amenities',
  record: Amenity,
  create: AmenityInput.strict(),
  update: AmenityInput.partial().strict(),
  fields: {
    id: { kind: 'number', default: true, filterable: true, sortable: true },
    name: { kind: 'text', default: true, filterable: true, sortable: true },
    description: { kind: 'text', wide: true, filterable: true },
    groups: { kind: 'refs', default: true, wide: true, filterable: true },
    created_at: { kind: 'date', filterable: true, sortable: true },
  },
  gates: {
    view: ['amenities.view_all', 'amenities.view_descendants', 'amenities.view_own'],
    create: ['amenities.create_all', 'amenities.create_descendants'],
    edit: ['amenities.edit_all', 'amenities.edit_descendants'],
    delete: ['amenities.delete_all', 'amenities.delete_descendants'],
  },
  licence: ['amenity'],
  scopes: {
    owner: { groups: 'groups', creator: 'created_by' },
    view: {
      'amenities.view_all': 'all',
      'amenities.view_descendants': 'descendants',
      'amenities.view_own': 'own',
    },
    create: { 'amenities.create_all': 'all', 'amenities.create_descendants': 'descendants' },
    edit: { 'amenities.edit_all': 'all', 'amenities.edit_descendants': 'descendants' },
    delete: { 'amenities.delete_all': 'all', 'amenities.delete_descendants': 'descendants' },
  },
  unique: ['name'],
  refs: {
    groups: {
      family: 'group',
      many: { table: 'fixture_amenity_groups', owner: 'amenity_id', column: 'group_id' },
    },
  },
  ui: { path: '/fixture-amenities', icon: 'home', section: 'common' },
  table: 'fixture_amenities',
});

/** Its migration. */
export const amenityTables = `
create table fixture_amenities (
  id integer generated always as identity primary key,
  project_id integer not null references projects(id) on delete cascade,
  name text not null,
  description text not null default '',
  created_by integer references users(id) on delete set null,
  created_at timestamptz not null default now(),
  unique (project_id, name)
);
create table fixture_amenity_groups (
  amenity_id integer not null references fixture_amenities(id) on delete cascade,
  group_id integer not null references domains(id) on delete cascade,
  primary key (amenity_id, group_id)
);
create index on fixture_amenity_groups (group_id)`;
