import { z } from 'zod';
import { defineResource } from '../resource';
import { Description, Ids, Ref, Text, Timestamp } from '../refs';

/**
 * Anti-passback areas (beyond the spec, issue 21 item 8; as 2N Access Commander's zones and Brivo's
 * anti-passback): a group of entry devices and exit devices. An identifier that entered the area by one of its
 * entry devices is refused at them (`anti_passback`) until it leaves by an exit device, and one that left
 * cannot leave again before it entered; a passage older than `reset_after_min` minutes no longer counts (none:
 * it counts until the next one). The one decision (`decide`, packages/core/src/access/decide.ts) reads the
 * areas and the identifier's last granted ACS event at their devices; the server enforces it where it decides
 * (docs/decisions.md "Anti-passback areas").
 */
export const AccessArea = z.object({
  id: z.number().int(),
  name: z.string(),
  description: z.string(),
  entry_devices: z.array(Ref),
  exit_devices: z.array(Ref),
  reset_after_min: z.number().int().nullable(),
  created_at: Timestamp,
  created_by_user: Ref.nullable(),
});
export type AccessArea = z.infer<typeof AccessArea>;

const AccessAreaInput = z.object({
  name: Text(255),
  description: Description.optional(),
  /** the devices one enters the area by */
  entry_devices: Ids(1000).optional(),
  /** the devices one leaves it by */
  exit_devices: Ids(1000).optional(),
  /** minutes after which a passage no longer counts (at most 30 days); none: until the next passage */
  reset_after_min: z.number().int().min(1).max(43_200).nullable().optional(),
});

export const accessAreaResource = defineResource({
  noun: 'access_area',
  segment: 'access-areas',
  record: AccessArea,
  create: AccessAreaInput.strict(),
  update: AccessAreaInput.partial().strict(),
  fields: {
    id: { kind: 'number', default: true, filterable: true, sortable: true },
    name: { kind: 'text', default: true, filterable: true, sortable: true },
    description: { kind: 'text', wide: true, filterable: true },
    entry_devices: { kind: 'refs', default: true, wide: true, filterable: true },
    exit_devices: { kind: 'refs', default: true, wide: true, filterable: true },
    reset_after_min: { kind: 'number', default: true, filterable: true, sortable: true },
    created_at: { kind: 'date', filterable: true, sortable: true },
  },
  // an area is part of the access rules' setting: their permissions (part 2 §6 names none of its own)
  gates: {
    view: ['access_rules.view', 'access_rules.view_all'],
    create: ['access_rules.create'],
    edit: ['access_rules.edit'],
    delete: ['access_rules.delete'],
  },
  scopes: {
    owner: { creator: 'created_by' },
    view: { 'access_rules.view_all': 'all', 'access_rules.view': 'descendants' },
    edit: { 'access_rules.edit': 'all' },
    delete: { 'access_rules.delete': 'all' },
  },
  unique: ['name'],
  refs: {
    entry_devices: {
      family: 'device',
      many: { table: 'access_area_entry_devices', owner: 'access_area_id', column: 'device_id' },
    },
    exit_devices: {
      family: 'device',
      many: { table: 'access_area_exit_devices', owner: 'access_area_id', column: 'device_id' },
    },
  },
  ui: { path: '/access-areas', icon: 'shield', section: 'access' },
  table: 'access_areas',
});
