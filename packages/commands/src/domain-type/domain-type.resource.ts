import { z } from 'zod';
import { defineResource } from '../resource';
import { Text, Timestamp } from '../refs';

export const DomainType = z.object({
  id: z.number().int(),
  type: z.string(),
  name: z.string(),
  domains_count: z.number().int(),
  created_at: Timestamp,
});
export type DomainType = z.infer<typeof DomainType>;

const DomainTypeInput = z.object({
  type: z
    .string()
    .trim()
    .min(1)
    .max(64)
    .regex(/^[a-z0-9_]+$/, { message: 'code_chars' }),
  name: Text(255),
});

export const domainTypeResource = defineResource({
  noun: 'domain_type',
  segment: 'domain-types',
  record: DomainType,
  create: DomainTypeInput.strict(),
  update: DomainTypeInput.partial().strict(),
  fields: {
    id: { kind: 'number', default: true, filterable: true, sortable: true },
    type: { kind: 'text', default: true, filterable: true, sortable: true },
    name: { kind: 'text', default: true, filterable: true, sortable: true },
    domains_count: { kind: 'number', default: true, sortable: true },
  },
  gates: {
    view: [
      'domains.view_all',
      'domains.create_root',
      'domains.create_descendant',
      'domains.edit_all',
      'domains.edit_descendant',
      'domains.own_general',
    ],
    create: ['domains.edit_all', 'project_settings.change'],
    edit: ['domains.edit_all', 'project_settings.change'],
    delete: ['domains.edit_all', 'project_settings.change'],
  },
  ui: { path: '/general-settings/domain-types', icon: 'list', section: 'settings' },
  unique: ['type'],
  search: ['name', 'type'],
  picker: { hint: 'type' },
});
