import { z } from 'zod';
import { Email, IdentifierFormat, LoginName, Password, TimeFormat } from '@lintel/core';
import { defineResource } from '../resource';
import { Description, Id, Ids, Ref, Text, Timestamp } from '../refs';

export const UserProfileFields = z.object({
  phone: z.union([z.string().regex(/^\+[1-9]\d{6,14}$/, { message: 'phone_international' }), z.literal('')]),
  address: z.string().max(255),
  time_zone: z.string().max(64),
  sip_number_id: Id.nullable().meta({ hidden: 'virtual numbers (their family) come with telephony' }),
  identifier_format: IdentifierFormat,
  time_format: TimeFormat,
});

export const MarkerRef = z.object({ id: z.number().int(), name: z.string(), color: z.string() });

export const User = z.object({
  id: z.number().int(),
  login: z.string(),
  name: z.string(),
  description: z.string(),
  email: z.string().nullable(),
  role: Ref,
  domains: z.array(Ref),
  markers: z.array(MarkerRef),
  avatar_url: z.string().nullable(),
  elevator_access_disabled: z.boolean(),
  profile: UserProfileFields,
  is_activated: z.boolean(),
  is_invited: z.boolean(),
  is_group_admin: z.boolean(),
  created_at: Timestamp,
  created_by_user: Ref.nullable(),
});
export type User = z.infer<typeof User>;

const UserInput = z.object({
  login: LoginName,
  name: Text(255),
  description: Description.optional(),
  email: z
    .union([Email, z.literal('')])
    .nullable()
    .optional(),
  role: Id,
  domains: Ids(500).min(1),
  markers: Ids(100).optional(),
  elevator_access_disabled: z.boolean().optional(),
  is_group_admin: z.boolean().optional(),
  profile: UserProfileFields.partial().optional(),
});

export const userResource = defineResource({
  noun: 'user',
  segment: 'users',
  record: User,
  create: UserInput.extend({
    /** set a password now; otherwise the person chooses one through the registration link */
    password: Password.optional(),
    send_registration_link: z.boolean().default(true),
  }).strict(),
  update: UserInput.partial().strict(),
  fields: {
    id: { kind: 'number', default: true, filterable: true, sortable: true },
    login: { kind: 'text', default: true, filterable: true, sortable: true },
    name: { kind: 'text', default: true, filterable: true, sortable: true },
    email: { kind: 'text', default: true, filterable: true, sortable: true },
    description: { kind: 'text', wide: true, filterable: true },
    role: { kind: 'ref', default: true, filterable: true, sortable: true },
    domains: { kind: 'refs', default: true, wide: true, filterable: true },
    markers: { kind: 'refs', filterable: true },
    phone: { kind: 'text', filterable: true },
    is_activated: { kind: 'boolean', default: true, filterable: true },
    is_group_admin: { kind: 'boolean', filterable: true },
    created_at: { kind: 'date', filterable: true, sortable: true },
  },
  gates: {
    view: ['users.view', 'users.view_all'],
    create: ['users.create'],
    edit: ['users.edit_all', 'users.edit_profile'],
    delete: ['users.delete'],
  },
  ui: { path: '/users', key: 'users', icon: 'user', section: 'users', goKey: 'u' },
  refs: {
    role: { family: 'role', many: false },
    domains: { family: 'group', many: { table: 'user_domains', owner: 'user_id', column: 'domain_id' } },
    markers: { family: 'marker', many: { table: 'user_markers', owner: 'user_id', column: 'marker_id' } },
  },
  // a user is placed by his groups (the view scopes are the store's: his own record is always his)
  scopes: { owner: { groups: 'domains', creator: 'created_by' } },
  // a group's licence may cap the users of its subtree; the users' store counts by their groups
  limits: [{ per: 'group', feature: 'users' }],
  picker: { hint: 'login' },
});
