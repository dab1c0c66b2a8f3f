import { z } from 'zod';
import {
  Identifier as IdentifierSpec,
  IdentifierCreate,
  IdentifierTypes,
  IdentifierUpdate,
  OwnerTypes,
} from '@lintel/core';
import { defineResource } from '../resource';
import { Ref, Timestamp } from '../refs';

/**
 * Identifiers (spec part 1 §3 "Identifier"): the core's identifier (packages/core/src/access/identifiers.ts)
 * as stored — `value` the canonical value of its type (a card's number in decimal whatever the format it was
 * typed in), the period as typed and as instants (`_u`), the pass limit and the passes the devices reported
 * — with its owner by name (`owner_user`), its access rules (the join table `access_rule_identifiers` seen
 * from the identifier) and who made it. Active or revoked (`identifier.revoke`).
 */
export const Identifier = IdentifierSpec.extend({
  owner_user: Ref.nullable(),
  access_rules: z.array(Ref),
  created_at: Timestamp,
  created_by_user: Ref.nullable(),
});
export type Identifier = z.infer<typeof Identifier>;

export const identifierResource = defineResource({
  noun: 'identifier',
  segment: 'identifiers',
  record: Identifier,
  create: IdentifierCreate.strict(),
  update: IdentifierUpdate.strict(),
  fields: {
    id: { kind: 'number', default: true, filterable: true, sortable: true },
    name: { kind: 'text', default: true, filterable: true, sortable: true },
    type: { kind: 'enum', values: IdentifierTypes, default: true, filterable: true, sortable: true },
    value: { kind: 'text', default: true, filterable: true, sortable: true },
    is_active: { kind: 'boolean', default: true, filterable: true },
    owner_type: { kind: 'enum', values: OwnerTypes, filterable: true },
    owner: { kind: 'ref', filterable: true, sortable: true },
    owner_user: { kind: 'ref', default: true },
    description: { kind: 'text', wide: true, filterable: true },
    period_restrict_active: { kind: 'boolean', filterable: true },
    period_restrict_from_u: { kind: 'date', filterable: true, sortable: true },
    period_restrict_to_u: { kind: 'date', filterable: true, sortable: true },
    passes_restrict_active: { kind: 'boolean', filterable: true },
    passes_restrict_max_count: { kind: 'number', filterable: true, sortable: true },
    passes_count: { kind: 'number', filterable: true, sortable: true },
    access_rules: { kind: 'refs', default: true, wide: true, filterable: true },
    created_at: { kind: 'date', filterable: true, sortable: true },
  },
  gates: {
    view: ['identifiers.view_all'],
    create: ['identifiers.create'],
    edit: ['identifiers.edit'],
    delete: ['identifiers.delete'],
  },
  // every gate permission reaches the whole project (part 2 §6 gives identifiers no narrower scope)
  scopes: { owner: { creator: 'created_by' } },
  search: ['name', 'value'],
  refs: {
    owner: { family: 'user', many: false, record: 'owner_user' },
    access_rules: {
      family: 'access_rule',
      many: { table: 'access_rule_identifiers', owner: 'identifier_id', column: 'access_rule_id' },
    },
  },
  ui: { path: '/identifiers', icon: 'key', section: 'access' },
  picker: { hint: 'value' },
});
