import { z } from 'zod';
import { Timeouts } from '@lintel/core';
import { defineCommand, NoArgs, type Gates } from '../command';

const gates: Gates = { anyPermission: ['project_settings.change'] };

/** A residential complex to look around in: buildings, entrances, apartments, residents, staff. Idempotent. */
export const seedDemo = defineCommand({
  id: 'seed.demo',
  http: { method: 'POST', path: '/seed/demo' },
  args: NoArgs,
  result: z.object({
    created: z.boolean(),
    groups: z.number().int(),
    users: z.number().int(),
    roles: z.number().int(),
    markers: z.number().int(),
    /** simulated devices registered in building 1 (`npm start` runs them) */
    devices: z.number().int(),
  }),
  gates,
  timeoutMs: Timeouts.import,
});

/** Brings the number of scale-test users up to `users` (for benchmarks). Idempotent. */
export const seedScale = defineCommand({
  id: 'seed.scale',
  http: { method: 'POST', path: '/seed/scale' },
  args: z.object({ users: z.coerce.number().int().min(1).max(1_000_000) }).strict(),
  result: z.object({ users: z.number().int(), created: z.number().int(), group_id: z.number().int() }),
  gates,
  developer: true,
  timeoutMs: Timeouts.import,
});
