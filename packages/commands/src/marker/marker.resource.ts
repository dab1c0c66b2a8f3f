import { z } from 'zod';
import { defineResource } from '../resource';
import { Color, NameLike, Ref, Timestamp } from '../refs';

export const Marker = z.object({
  id: z.number().int(),
  name: z.string(),
  color: z.string(),
  users_count: z.number().int(),
  created_at: Timestamp,
  created_by_user: Ref.nullable(),
});
export type Marker = z.infer<typeof Marker>;

const MarkerInput = z.object({ name: NameLike, color: Color });

export const markerResource = defineResource({
  noun: 'marker',
  segment: 'markers',
  record: Marker,
  create: MarkerInput.strict(),
  update: MarkerInput.partial().strict(),
  fields: {
    id: { kind: 'number', default: true, filterable: true, sortable: true },
    name: { kind: 'text', default: true, filterable: true, sortable: true },
    color: { kind: 'text', default: true, filterable: true },
    users_count: { kind: 'number', default: true, sortable: true },
    created_at: { kind: 'date', filterable: true, sortable: true },
  },
  gates: {
    view: ['markers.view', 'markers.view_all'],
    create: ['markers.create'],
    edit: ['markers.edit'],
    delete: ['markers.delete'],
  },
  ui: { path: '/general-settings/markers', icon: 'key', section: 'settings' },
  // markers made by people of the caller's groups (spec part 2 §6)
  scopes: {
    owner: { creator: 'created_by' },
    view: { 'markers.view_all': 'all', 'markers.view': 'descendants' },
    edit: { 'markers.edit': 'all' },
    delete: { 'markers.delete': 'all' },
  },
  unique: ['name'],
  picker: { color: 'color' },
});
