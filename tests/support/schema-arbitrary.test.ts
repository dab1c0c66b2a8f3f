import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { z } from 'zod';
import { Description } from '@lintel/commands';
import { ListQuery } from '@lintel/core';
import { arbitraryOf } from './schema-arbitrary';

describe('arbitraryOf', () => {
  it('draws values the schema accepts: bounds, enums, emails, nullables, optionals, nested objects and lists', () => {
    const schema = z.object({
      name: z.string().min(2).max(5),
      count: z.number().int().min(-3).max(7),
      kind: z.enum(['a', 'b']),
      email: z.email().optional(),
      parent: z.number().int().min(1).nullable(),
      description: Description.optional(),
      tags: z.array(z.object({ on: z.boolean(), at: z.literal('x') })),
      ids: z.array(z.number().int().min(1)).max(3).optional(),
      either: z.union([z.literal(''), z.number().int().min(0).max(1)]),
    });
    fc.assert(
      fc.property(arbitraryOf(schema), (v) => {
        expect(schema.safeParse(v).error?.issues ?? []).toEqual([]);
      }),
      { numRuns: 300 },
    );
    // and the list query, wrappers (defaults, preprocess) and all, minus its free-text sort
    const query = ListQuery.omit({ sort: true, filters: true });
    fc.assert(
      fc.property(arbitraryOf(query), (v) => query.safeParse(v).success),
      { numRuns: 100 },
    );
  });
});
