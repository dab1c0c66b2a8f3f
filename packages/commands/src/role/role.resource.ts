import { z } from 'zod';
import { defineResource } from '../resource';
import { Description, Ids, Ref, Text, Timestamp } from '../refs';

export const Role = z.object({
  id: z.number().int(),
  name: z.string(),
  description: z.string(),
  permissions: z.array(z.string()),
  /** the permissions grouped by category, as the role screens show them */
  permission_groups: z.array(z.object({ category: z.string(), items: z.array(z.string()) })),
  available_roles: z.array(Ref),
  is_system: z.boolean(),
  users_count: z.number().int(),
  created_at: Timestamp,
  created_by_user: Ref.nullable(),
});
export type Role = z.infer<typeof Role>;

const RoleInput = z.object({
  name: Text(255),
  description: Description.optional(),
  permissions: z.array(z.string().max(64)).max(500),
  available_roles: Ids(500).optional(),
});

export const roleResource = defineResource({
  noun: 'role',
  segment: 'roles',
  record: Role,
  create: RoleInput.strict(),
  update: RoleInput.partial().strict(),
  fields: {
    id: { kind: 'number', default: true, filterable: true, sortable: true },
    name: { kind: 'text', default: true, filterable: true, sortable: true },
    description: { kind: 'text', default: true, wide: true, filterable: true },
    users_count: { kind: 'number', default: true, sortable: true },
    is_system: { kind: 'boolean', filterable: true },
    created_at: { kind: 'date', filterable: true, sortable: true },
  },
  /** gently (default): a role that users hold is kept, and the reply says how many hold it */
  deleteOptions: z.object({
    gently: z.preprocess((v) => (v === 'false' ? false : v === 'true' ? true : v), z.boolean()).default(true),
  }),
  gates: {
    view: ['roles.view', 'roles.view_all', 'roles.view_users'],
    create: ['roles.create'],
    edit: ['roles.edit', 'roles.edit_available', 'roles.edit_all'],
    delete: ['roles.delete', 'roles.delete_available', 'roles.delete_all'],
  },
  ui: { path: '/roles', key: 'roles', icon: 'shield', section: 'users', goKey: 'r' },
  refs: { available_roles: { family: 'role', many: true } },
  unique: ['name'],
});
