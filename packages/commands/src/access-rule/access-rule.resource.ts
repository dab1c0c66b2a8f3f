import { z } from 'zod';
import { AccessRuleCreate, AccessRuleUpdate } from '@lintel/core';
import { defineResource } from '../resource';
import { Ref, Timestamp } from '../refs';

/** An identifier as a record names it: its name may be empty, so its type and value too. */
export const IdentifierRef = z.object({
  id: z.number().int(),
  name: z.string(),
  type: z.string(),
  value: z.string(),
});

/**
 * Access rules (spec part 1 §3 "Access rule"): which devices (at least one), when (`time_rules`, schedules;
 * none: at all times), for whom (`users`, `identifiers`, the members of `domains` and of the groups below
 * them), permitting or, with `prohibition`, refusing — a prohibition in force always wins (the one decision,
 * packages/core/src/access/decide.ts). Each relation is its own join table; the record shows the related rows
 * by name, the arguments take ids (the core's `AccessRuleCreate`).
 */
export const AccessRule = z.object({
  id: z.number().int(),
  name: z.string(),
  description: z.string(),
  devices: z.array(Ref),
  time_rules: z.array(Ref),
  users: z.array(Ref),
  identifiers: z.array(IdentifierRef),
  domains: z.array(Ref),
  prohibition: z.boolean(),
  is_shareable: z.boolean(),
  created_at: Timestamp,
  created_by_user: Ref.nullable(),
});
export type AccessRule = z.infer<typeof AccessRule>;

export const accessRuleResource = defineResource({
  noun: 'access_rule',
  segment: 'access-rules',
  record: AccessRule,
  create: AccessRuleCreate.strict(),
  update: AccessRuleUpdate.strict(),
  fields: {
    id: { kind: 'number', default: true, filterable: true, sortable: true },
    name: { kind: 'text', default: true, filterable: true, sortable: true },
    description: { kind: 'text', wide: true, filterable: true },
    devices: { kind: 'refs', default: true, wide: true, filterable: true },
    time_rules: { kind: 'refs', default: true, wide: true, filterable: true },
    users: { kind: 'refs', wide: true, filterable: true },
    identifiers: { kind: 'refs', wide: true, filterable: true },
    domains: { kind: 'refs', default: true, wide: true, filterable: true },
    prohibition: { kind: 'boolean', default: true, filterable: true },
    is_shareable: { kind: 'boolean', filterable: true },
    created_at: { kind: 'date', filterable: true, sortable: true },
  },
  gates: {
    view: ['access_rules.view', 'access_rules.view_all'],
    create: ['access_rules.create'],
    edit: ['access_rules.edit'],
    delete: ['access_rules.delete'],
  },
  // rules made by people of the caller's groups, as markers (part 2 §6 gives no scope of its own)
  scopes: {
    owner: { creator: 'created_by' },
    view: { 'access_rules.view_all': 'all', 'access_rules.view': 'descendants' },
    edit: { 'access_rules.edit': 'all' },
    delete: { 'access_rules.delete': 'all' },
  },
  unique: ['name'],
  refs: {
    devices: {
      family: 'device',
      many: { table: 'access_rule_devices', owner: 'access_rule_id', column: 'device_id' },
    },
    time_rules: {
      family: 'schedule',
      many: { table: 'access_rule_schedules', owner: 'access_rule_id', column: 'schedule_id' },
    },
    users: {
      family: 'user',
      many: { table: 'access_rule_users', owner: 'access_rule_id', column: 'user_id' },
    },
    identifiers: {
      family: 'identifier',
      many: { table: 'access_rule_identifiers', owner: 'access_rule_id', column: 'identifier_id' },
    },
    domains: {
      family: 'group',
      many: { table: 'access_rule_domains', owner: 'access_rule_id', column: 'domain_id' },
    },
  },
  ui: { path: '/access-rules', icon: 'shield', section: 'access' },
  table: 'access_rules',
});
