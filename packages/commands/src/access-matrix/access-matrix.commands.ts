import { z } from 'zod';
import { DecisionReasons, IdentifierTypes, Timeouts } from '@lintel/core';
import { defineCommand } from '../command';
import { Id, Ref } from '../refs';
import { IdentifierRef } from '../access-rule/access-rule.resource';

const flag = z.preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean());

/**
 * What the matrix is asked for: the (identifier, device) pairs some rule names, narrowed by the identifier's
 * owner (`user`), the owner's group and the groups below it (`group`), the `device`, the identifier `type`,
 * and the answer (`allowed`), decided at `at` (default: the server's now).
 */
export const AccessMatrixFilters = z.object({
  user: z.coerce.number().pipe(Id).optional(),
  group: z.coerce.number().pipe(Id).optional(),
  device: z.coerce.number().pipe(Id).optional(),
  type: z.enum(IdentifierTypes).optional(),
  allowed: flag.optional(),
  at: z.iso.datetime().optional(),
});

/** One cell of the matrix: may this identifier pass this device, by which rule, and if not why not. */
export const AccessMatrixRow = z.object({
  identifier: IdentifierRef,
  owner: Ref.nullable(),
  device: Ref,
  allowed: z.boolean(),
  rule: Ref.nullable(),
  reason: z.enum(DecisionReasons).nullable(),
});
export type AccessMatrixRow = z.infer<typeof AccessMatrixRow>;

const gates = { anyPermission: ['access_rules.view_all'] } as const;

/**
 * The access matrix (spec part 1 §2.3 /access-matrix): who may pass where, computed by the one decision
 * (`decide` over the project's rules, schedules and holidays) for every identifier and every device a rule
 * names both of; a page by keyset (`cursor`, `meta.next`).
 */
export const accessMatrixList = defineCommand({
  id: 'access_matrix.list',
  http: { method: 'GET', path: '/access-matrix' },
  args: AccessMatrixFilters.extend({
    limit: z.coerce.number().int().min(1).max(1000).default(100),
    cursor: z
      .string()
      .regex(/^\d{1,10}\.\d{1,10}$/)
      .optional(),
  }),
  result: z.object({
    data: z.array(AccessMatrixRow),
    meta: z.object({ next: z.string().nullable(), at: z.string() }),
  }),
  gates,
  timeoutMs: Timeouts.reports,
});

/** The whole matrix of the filters as a file (CSV or XLSX), streamed as it is decided. */
export const accessMatrixExport = defineCommand({
  id: 'access_matrix.export',
  http: { method: 'GET', path: '/access-matrix/export' },
  args: AccessMatrixFilters.extend({ format: z.enum(['csv', 'xlsx']).default('csv') }),
  result: z.unknown(),
  gates,
  timeoutMs: Timeouts.reports,
  hidden: true,
});
