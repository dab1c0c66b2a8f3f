import { z } from 'zod';
import { defineResource } from '../resource';
import { Description, Ids, Ref, Text, Timestamp } from '../refs';

/**
 * Holidays (beyond the spec, as Kisi and Brivo keep them): a local date on which no schedule's window opens
 * at the devices of its groups and the groups below them; a holiday of no group is the whole project's. The
 * calendar in force at a device is what `decide` reads as `holidays` (packages/core/src/access/schedules.ts).
 */
export const Holiday = z.object({
  id: z.number().int(),
  name: z.string(),
  date: z.iso.date(),
  description: z.string(),
  domains: z.array(Ref),
  created_at: Timestamp,
  created_by_user: Ref.nullable(),
});
export type Holiday = z.infer<typeof Holiday>;

const HolidayInput = z.object({
  name: Text(255),
  date: z.iso.date().meta({ date: true }),
  description: Description.optional(),
  /** the groups whose devices keep it (and the groups below them); none: every device of the project */
  domains: Ids(1000).optional(),
});

export const holidayResource = defineResource({
  noun: 'holiday',
  segment: 'holidays',
  record: Holiday,
  create: HolidayInput.strict(),
  update: HolidayInput.partial().strict(),
  fields: {
    id: { kind: 'number', default: true, filterable: true, sortable: true },
    name: { kind: 'text', default: true, filterable: true, sortable: true },
    date: { kind: 'text', default: true, filterable: true, sortable: true },
    description: { kind: 'text', wide: true, filterable: true },
    domains: { kind: 'refs', default: true, wide: true, filterable: true },
    created_at: { kind: 'date', filterable: true, sortable: true },
  },
  gates: {
    view: ['time_rules.view', 'time_rules.view_all'],
    create: ['time_rules.create'],
    edit: ['time_rules.edit'],
    delete: ['time_rules.delete'],
  },
  scopes: {
    owner: { creator: 'created_by' },
    view: { 'time_rules.view_all': 'all', 'time_rules.view': 'descendants' },
    edit: { 'time_rules.edit': 'all' },
    delete: { 'time_rules.delete': 'all' },
  },
  refs: {
    domains: {
      family: 'group',
      many: { table: 'holiday_domains', owner: 'holiday_id', column: 'domain_id' },
    },
  },
  ui: { path: '/holidays', icon: 'list', section: 'access' },
  table: 'holidays',
});
