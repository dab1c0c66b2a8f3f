import { z } from 'zod';
import { defineCommand } from '../command';
import { IdParam } from '../resource';
import { Ids } from '../refs';

/** Puts a marker on users, or takes it off (`remove`). */
export const markerApply = defineCommand({
  id: 'marker.apply',
  http: { method: 'POST', path: '/markers/:id/apply' },
  args: IdParam.extend({ users: Ids(1000).min(1), remove: z.boolean().default(false) }),
  result: z.object({ changed: z.number().int() }),
  gates: { anyPermission: ['markers.apply_to_user'] },
});
