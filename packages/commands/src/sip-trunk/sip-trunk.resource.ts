import { z } from 'zod';
import { DUMMY_PASSWORD } from '@lintel/core';
import { defineResource } from '../resource';
import { Ids, NameLike, Ref, Timestamp } from '../refs';
import { SipNumberValue } from '../sip-number/sip-number.resource';

/**
 * SIP trunks (issue 22 item 4; spec part 1 §3 "SIP trunk", part 2 §5 "must have at least one group", §6 view
 * and edit by scope): a provider's line out. Its calls leave with the outgoing number, to the termination URI,
 * authenticated with the login and password — which is never returned (the dummy placeholder when set; the
 * placeholder sent back keeps it). Its groups (at least one) say whose calls it carries.
 */
export const SipTrunk = z.object({
  id: z.number().int(),
  name: z.string(),
  outgoing_number: z.string(),
  termination_uri: z.string(),
  login: z.string(),
  password: z.string().nullable(),
  /** whether the SIP server registers with the provider (its registrar at the termination URI, as the login) */
  register: z.boolean(),
  groups: z.array(Ref),
  created_at: Timestamp,
  created_by_user: Ref.nullable(),
});
export type SipTrunk = z.infer<typeof SipTrunk>;

/** A SIP URI of the provider's proxy: `sip:host[:port]` (`sips:` for TLS), no user part needed. */
export const SipUri = z
  .string()
  .trim()
  .max(255)
  .regex(/^sips?:([^@\s]+@)?[A-Za-z0-9.-]+(:\d{1,5})?(;[A-Za-z0-9=._-]+)*$/, { message: 'invalid_format' });

const SipTrunkInput = z.object({
  name: NameLike,
  outgoing_number: SipNumberValue,
  termination_uri: SipUri,
  login: z.string().trim().max(128).default(''),
  password: z
    .string()
    .max(128)
    .refine((v) => !/[\s]/.test(v) || v === DUMMY_PASSWORD, { message: 'invalid_format' })
    .meta({ secret: true })
    .optional(),
  register: z.boolean().default(false),
  groups: Ids(100).min(1),
});

export const sipTrunkResource = defineResource({
  noun: 'sip_trunk',
  segment: 'sip-trunks',
  record: SipTrunk,
  create: SipTrunkInput.strict(),
  update: SipTrunkInput.partial().strict(),
  fields: {
    id: { kind: 'number', filterable: true, sortable: true },
    name: { kind: 'text', default: true, filterable: true, sortable: true },
    outgoing_number: { kind: 'text', default: true, filterable: true, sortable: true },
    termination_uri: { kind: 'text', default: true, filterable: true },
    login: { kind: 'text', filterable: true },
    register: { kind: 'boolean', filterable: true },
    groups: { kind: 'refs', default: true, wide: true, filterable: true },
    created_at: { kind: 'date', filterable: true, sortable: true },
  },
  gates: {
    view: [
      'sip_trunks.view_all',
      'sip_trunks.view_descendants',
      'sip_trunks.view_domain',
      'sip_trunks.view_own',
    ],
    create: ['sip_trunks.edit_all', 'sip_trunks.edit_descendants', 'sip_trunks.edit_domain'],
    edit: [
      'sip_trunks.edit_all',
      'sip_trunks.edit_descendants',
      'sip_trunks.edit_domain',
      'sip_trunks.edit_own',
    ],
    delete: [
      'sip_trunks.edit_all',
      'sip_trunks.edit_descendants',
      'sip_trunks.edit_domain',
      'sip_trunks.edit_own',
    ],
  },
  licence: ['sip', 'sip.is_sip_trunks_enabled'],
  scopes: {
    owner: { groups: 'groups', creator: 'created_by' },
    view: {
      'sip_trunks.view_all': 'all',
      'sip_trunks.view_descendants': 'descendants',
      'sip_trunks.view_domain': 'domain',
      'sip_trunks.view_own': 'own',
    },
    create: {
      'sip_trunks.edit_all': 'all',
      'sip_trunks.edit_descendants': 'descendants',
      'sip_trunks.edit_domain': 'domain',
    },
    edit: {
      'sip_trunks.edit_all': 'all',
      'sip_trunks.edit_descendants': 'descendants',
      'sip_trunks.edit_domain': 'domain',
      'sip_trunks.edit_own': 'own',
    },
    delete: {
      'sip_trunks.edit_all': 'all',
      'sip_trunks.edit_descendants': 'descendants',
      'sip_trunks.edit_domain': 'domain',
      'sip_trunks.edit_own': 'own',
    },
  },
  unique: ['name'],
  search: ['name', 'outgoing_number'],
  refs: {
    groups: {
      family: 'group',
      many: { table: 'sip_trunk_groups', owner: 'sip_trunk_id', column: 'domain_id' },
    },
  },
  picker: { hint: 'outgoing_number' },
  ui: { path: '/sip-trunks', icon: 'phone', section: 'phone' },
});
