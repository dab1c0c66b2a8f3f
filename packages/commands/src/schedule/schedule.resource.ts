import { z } from 'zod';
import { RepeatOptions, Schedule as ScheduleSpec, ScheduleCreate, ScheduleUpdate } from '@lintel/core';
import { defineResource } from '../resource';
import { Ref, Timestamp } from '../refs';

/**
 * Schedules (spec part 1 §3 "Schedule", "time rules"): the core's schedule (packages/core/src/access/
 * schedules.ts) as it is stored, its access rules (the join table `access_rule_schedules` seen from the
 * schedule) and who made it. Times are wall-clock in the project's time zone.
 */
export const Schedule = ScheduleSpec.extend({
  access_rules: z.array(Ref),
  created_at: Timestamp,
  created_by_user: Ref.nullable(),
});
export type Schedule = z.infer<typeof Schedule>;

/** The gates and scopes of the access-control families that use the time-rule permissions (part 2 §6). */
const scheduleScopes = {
  owner: { creator: 'created_by' },
  view: { 'time_rules.view_all': 'all', 'time_rules.view': 'descendants' },
  edit: { 'time_rules.edit': 'all' },
  delete: { 'time_rules.delete': 'all' },
} as const;

export const scheduleResource = defineResource({
  noun: 'schedule',
  segment: 'schedules',
  record: Schedule,
  create: ScheduleCreate.strict(),
  update: ScheduleUpdate.strict(),
  fields: {
    id: { kind: 'number', default: true, filterable: true, sortable: true },
    name: { kind: 'text', default: true, filterable: true, sortable: true },
    description: { kind: 'text', wide: true, filterable: true },
    valid_from: { kind: 'text', default: true, filterable: true, sortable: true },
    valid_to: { kind: 'text', default: true, filterable: true, sortable: true },
    is_all_day: { kind: 'boolean', filterable: true },
    repeat_mode: { kind: 'enum', values: RepeatOptions, default: true, filterable: true, sortable: true },
    time_from: { kind: 'number', timeOfDay: true, default: true, filterable: true, sortable: true },
    time_to: { kind: 'number', timeOfDay: true, default: true, filterable: true, sortable: true },
    access_rules: { kind: 'refs', wide: true, filterable: true },
    created_at: { kind: 'date', filterable: true, sortable: true },
  },
  gates: {
    view: ['time_rules.view', 'time_rules.view_all'],
    create: ['time_rules.create'],
    edit: ['time_rules.edit'],
    delete: ['time_rules.delete'],
  },
  scopes: scheduleScopes,
  unique: ['name'],
  refs: {
    access_rules: {
      family: 'access_rule',
      many: { table: 'access_rule_schedules', owner: 'schedule_id', column: 'access_rule_id' },
    },
  },
  ui: { path: '/schedules', icon: 'list', section: 'access' },
  table: 'schedules',
});
