import { z } from 'zod';
import {
  Email,
  GroupLicenceLimits,
  GroupLicenseEntry,
  GroupLicenseSettings,
  LicenceCount,
  RestrictPeriod,
} from '@lintel/core';
import { defineResource } from '../resource';
import { Description, Id, Ref, Text, Timestamp } from '../refs';

/**
 * White-label settings (spec part 1 §3 Group `whitelabel_settings{is_enabled,logo,name,address,email,phone}`),
 * a group's and the project's alike. `logo` is the URL path of the stored logo, set only by its upload.
 */
export const WhiteLabelSettings = z.object({
  is_enabled: z.boolean(),
  logo: z.string().max(500).nullable(),
  name: z.string().max(255),
  address: z.string().max(255),
  email: z.union([Email, z.literal('')]),
  phone: z.string().max(32),
});
export type WhiteLabelSettings = z.infer<typeof WhiteLabelSettings>;

/** A phone number as people write it: digits, an optional leading +, spaces, dashes, dots and brackets. */
const WhiteLabelPhone = z
  .string()
  .trim()
  .max(32)
  .regex(/^(\+?[0-9][0-9 ().-]{2,31})?$/, { message: 'phone_format' });

/** What a white-label update may change (the logo: its own upload and delete); empty texts clear them. */
export const WhiteLabelInput = z.object({
  is_enabled: z.boolean(),
  name: z.string().trim().max(255),
  address: z.string().trim().max(255),
  email: z.union([Email, z.literal('')]),
  phone: WhiteLabelPhone,
});
/** Per group: max passes count and max period days of a guest identifier (spec part 2 §5); empty: none. */
export const GuestIdentifierLimits = z.object({
  max_passes_count: LicenceCount(1_000_000),
  max_period_days: LicenceCount(3650),
});
export const DeviceStatusNotify = z.object({
  user_id: Id,
  notify_about_offline_device: z.boolean(),
  notify_about_device_task_failed: z.boolean(),
});
// a group's licence settings and maximums: packages/core/src/group-licences.ts (the gate reads them too)
export { GroupLicenseEntry, GroupLicenseSettings, GroupLicenceLimits, RestrictPeriod };

export const Group = z.object({
  id: z.number().int(),
  name: z.string(),
  description: z.string(),
  parent_id: z.number().int().nullable(),
  parent: Ref.nullable(),
  /** the groups above it, from the project's root down to its parent: what tells "Apartment 1"s apart */
  path: z.array(Ref),
  logic_address: z.string().nullable(),
  domain_type_id: z.number().int().nullable(),
  type: z.string().nullable(),
  whitelabel_settings: WhiteLabelSettings,
  guest_identifier_limits: GuestIdentifierLimits,
  device_status_notify: z.array(DeviceStatusNotify),
  license_settings: GroupLicenseSettings,
  /** the most its whole subtree may hold of each counted thing (null: no maximum of its own) */
  license_limits: GroupLicenceLimits,
  users_count: z.number().int(),
  children_count: z.number().int(),
  created_at: Timestamp,
  created_by_user: Ref.nullable(),
});
export type Group = z.infer<typeof Group>;

const GroupInput = z.object({
  name: Text(255),
  description: Description.optional(),
  parent_id: Id.nullable(),
  logic_address: z
    .string()
    .trim()
    .max(64)
    .regex(/^[0-9A-Za-z.\-_]*$/, { message: 'logic_address_chars' })
    .nullable()
    .optional(),
  domain_type_id: Id.nullable().optional(),
  guest_identifier_limits: GuestIdentifierLimits.partial().optional(),
  device_status_notify: z.array(DeviceStatusNotify).max(100).optional(),
  license_settings: GroupLicenseSettings.partial().optional(),
  license_limits: GroupLicenceLimits.optional(),
});

export const groupResource = defineResource({
  noun: 'group',
  segment: 'domains',
  record: Group,
  create: GroupInput.strict(),
  update: GroupInput.partial().strict(),
  fields: {
    id: { kind: 'number', default: true, filterable: true, sortable: true },
    name: { kind: 'text', default: true, filterable: true, sortable: true },
    description: { kind: 'text', wide: true, filterable: true },
    parent_id: { kind: 'ref', default: true, filterable: true, sortable: true },
    logic_address: { kind: 'text', default: true, filterable: true, sortable: true },
    domain_type_id: { kind: 'ref', filterable: true },
    type: { kind: 'text', default: true, filterable: true, sortable: true },
    users_count: { kind: 'number', default: true, sortable: true },
    children_count: { kind: 'number', sortable: true },
    created_at: { kind: 'date', filterable: true, sortable: true },
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
    create: ['domains.create_root', 'domains.create_descendant'],
    edit: ['domains.edit_all', 'domains.edit_descendant', 'domains.own_general'],
    delete: ['domains.delete_all', 'domains.delete_self'],
  },
  ui: { path: '/groups', key: 'groups', icon: 'building', section: 'users', goKey: 't' },
  refs: {
    parent_id: { family: 'group', many: false },
    domain_type_id: { family: 'domain_type', many: false },
  },
  picker: { hint: 'path', code: 'logic_address' },
});
