import { z } from 'zod';
import { DUMMY_PASSWORD } from '@lintel/core';
import { defineResource } from '../resource';
import { Id, NameLike, Ref, Timestamp } from '../refs';

/**
 * Virtual SIP numbers (spec part 1 §3 "Virtual SIP number", part 2 §6 "all need SIP enabled"): the first
 * item of the menu's Phone settings, shown and answered only while SIP is licensed. The number, its name,
 * its group, its SIP password (never returned: the dummy placeholder when one is set, null when none, so the
 * number cannot register yet) and whether it is active (an inactive number cannot register). The user and
 * device it rings, the system mark and the forwarding come with the telephony that uses them.
 */
export const ForwardModes = ['disabled', 'manual', 'picked'] as const;

export const SipNumber = z.object({
  id: z.number().int(),
  number: z.string(),
  name: z.string(),
  domain_id: z.number().int(),
  domain: Ref,
  password: z.string().nullable(),
  is_active: z.boolean(),
  /** who the number rings (spec part 1 §3: user, device; neither: its group's number) */
  user_id: z.number().int().nullable(),
  device_id: z.number().int().nullable(),
  /** disabled: the number only; manual: its forward rules; picked: also the numbers of its forward group */
  forward_mode: z.enum(ForwardModes),
  forward_group_id: z.number().int().nullable(),
  forward_rules: z.array(Ref),
  created_at: Timestamp,
  created_by_user: Ref.nullable(),
});
export type SipNumber = z.infer<typeof SipNumber>;

/** A SIP extension: digits only, 1 to 20 of them */
export const SipNumberValue = z
  .string()
  .trim()
  .regex(/^[0-9]{1,20}$/, { message: 'sip_number_digits' });

/**
 * A SIP password (spec part 2 §5): digits, lowercase and uppercase Latin letters, 6 to 31 characters (the
 * device SIP password's length), no spaces. The dummy placeholder sent back keeps the stored one.
 */
export const SipPassword = z
  .string()
  .max(31)
  .regex(new RegExp(`^(?:${DUMMY_PASSWORD}|(?=.*[0-9])(?=.*[a-z])(?=.*[A-Z])[\\x21-\\x7e]{6,31})$`), {
    message: 'sip_password_chars',
  })
  .meta({ secret: true });

const SipNumberInput = z.object({
  number: SipNumberValue,
  name: NameLike,
  domain_id: Id,
  password: SipPassword.optional(),
  is_active: z.boolean().optional(),
  user_id: Id.nullable().optional(),
  device_id: Id.nullable().optional(),
  forward_mode: z.enum(ForwardModes).optional(),
  forward_group_id: Id.nullable().optional(),
  forward_rules: z.array(Id).max(20).optional(),
});

export const sipNumberResource = defineResource({
  noun: 'sip_number',
  segment: 'sip-numbers',
  record: SipNumber,
  create: SipNumberInput.strict(),
  update: SipNumberInput.partial().strict(),
  fields: {
    id: { kind: 'number', filterable: true, sortable: true },
    number: { kind: 'text', default: true, filterable: true, sortable: true },
    name: { kind: 'text', default: true, filterable: true, sortable: true },
    domain_id: { kind: 'ref', default: true, filterable: true, sortable: true },
    is_active: { kind: 'boolean', default: true, filterable: true, sortable: true },
    forward_mode: { kind: 'enum', values: ForwardModes, filterable: true, sortable: true },
    created_at: { kind: 'date', filterable: true, sortable: true },
  },
  gates: {
    view: ['sip_numbers.view', 'sip_numbers.view_descendant', 'sip_numbers.view_all'],
    create: ['sip_numbers.create'],
    edit: ['sip_numbers.edit'],
    delete: ['sip_numbers.delete'],
  },
  licence: ['sip'],
  scopes: {
    owner: { group: 'domain_id', creator: 'created_by' },
    view: {
      'sip_numbers.view_all': 'all',
      'sip_numbers.view_descendant': 'descendants',
      'sip_numbers.view': 'domain',
    },
    create: { 'sip_numbers.create': 'descendants' },
    edit: { 'sip_numbers.edit': 'descendants' },
    delete: { 'sip_numbers.delete': 'descendants' },
  },
  unique: ['number'],
  // a group's maximum of virtual numbers caps its subtree; the SIP licences cap the project
  limits: [{ per: 'group', feature: 'virtual_numbers' }],
  licenceCount: 'sip',
  search: ['number', 'name'],
  refs: {
    domain_id: { family: 'group', many: false },
    user_id: { family: 'user', many: false },
    device_id: { family: 'device', many: false },
    forward_group_id: { family: 'group', many: false },
    forward_rules: {
      family: 'forward_rule',
      many: { table: 'sip_number_forward_rules', owner: 'sip_number_id', column: 'forward_rule_id' },
    },
  },
  picker: { hint: 'number' },
  ui: { path: '/virtual-numbers', icon: 'phone', section: 'phone' },
});
