import { z } from 'zod';
import { TimeOfDay, Weekdays } from '@lintel/core';
import { defineResource } from '../resource';
import { Id, NameLike, Ref, Timestamp } from '../refs';
import { SipNumberValue } from '../sip-number/sip-number.resource';

/**
 * Forward rules (issue 22 items 4, 5; spec part 1 §3 "Forward rule", part 2 §5 "A queue must have at least
 * one number", §6 forward rules' permissions): what happens to a call a number does not take. A number whose
 * forward mode is `manual` follows its rules; the routing (`decideRoute` of @lintel/core) reads them.
 */
export const ForwardRuleTypes = ['redirect_if_no_answer', 'redirect_if_error'] as const;

/** Seconds after local midnight, from and to (to before from: across midnight); typed as `09:00` too. */
export const ForwardPeriod = z.object({
  from: TimeOfDay,
  to: TimeOfDay,
});

export const ForwardRule = z.object({
  id: z.number().int(),
  name: z.string(),
  domain_id: z.number().int(),
  type: z.enum(ForwardRuleTypes),
  /** redirect_if_no_answer: seconds the number rings before the redirect */
  timeout: z.number().int(),
  numbers: z.array(z.string()),
  queues: z.array(z.array(z.string())),
  days: z.array(z.enum(Weekdays)),
  period: ForwardPeriod.nullable(),
  created_at: Timestamp,
  created_by_user: Ref.nullable(),
});
export type ForwardRule = z.infer<typeof ForwardRule>;

const ForwardRuleInput = z.object({
  name: NameLike,
  domain_id: Id,
  type: z.enum(ForwardRuleTypes).default('redirect_if_no_answer'),
  // spec part 2 §9: redirect-if-no-answer timeout 10
  timeout: z.number().int().min(1).max(600).default(10),
  numbers: z.array(SipNumberValue).max(20).default([]),
  queues: z.array(z.array(SipNumberValue).min(1).max(20)).max(10).default([]),
  days: z.array(z.enum(Weekdays)).max(7).default([]),
  period: ForwardPeriod.nullable().default(null),
});

export const forwardRuleResource = defineResource({
  noun: 'forward_rule',
  segment: 'forward-rules',
  table: 'forward_rules',
  record: ForwardRule,
  create: ForwardRuleInput.strict(),
  update: ForwardRuleInput.partial().strict(),
  fields: {
    id: { kind: 'number', filterable: true, sortable: true },
    name: { kind: 'text', default: true, filterable: true, sortable: true },
    type: { kind: 'enum', values: ForwardRuleTypes, default: true, filterable: true, sortable: true },
    timeout: { kind: 'number', default: true, filterable: true, sortable: true },
    domain_id: { kind: 'ref', default: true, filterable: true, sortable: true },
    created_at: { kind: 'date', filterable: true, sortable: true },
  },
  gates: {
    view: ['forward_rules.view', 'forward_rules.view_all'],
    create: ['forward_rules.create'],
    edit: ['forward_rules.edit'],
    delete: ['forward_rules.delete'],
  },
  licence: ['sip'],
  scopes: {
    owner: { group: 'domain_id', creator: 'created_by' },
    view: { 'forward_rules.view_all': 'all', 'forward_rules.view': 'descendants' },
    // the project's telephony settings, like markers: who may change rules changes any of them (the spec
    // gives one permission per action and no scope); seeing them follows the groups
    create: { 'forward_rules.create': 'all' },
    edit: { 'forward_rules.edit': 'all' },
    delete: { 'forward_rules.delete': 'all' },
  },
  unique: ['name'],
  search: ['name'],
  refs: { domain_id: { family: 'group', many: false } },
  picker: { hint: 'type' },
  ui: { path: '/forward-rules', icon: 'phone', section: 'phone' },
});
