import type { ServerContext } from '../context';
import { AppError } from '../errors';

/**
 * Failed attempts per address and service. After `slowAfter` failures within the window each answer is
 * delayed a little more; after `blockAfter` the address is refused for `blockS` seconds (429).
 */
export async function assertNotBlocked(app: ServerContext, ip: string, service: string): Promise<void> {
  const row = await app.db
    .selectFrom('ip_blocks')
    .select(['blocked_until'])
    .where('ip', '=', ip)
    .where('service', '=', service)
    .executeTakeFirst();
  const until = row?.blocked_until?.getTime() ?? 0;
  if (until > Date.now()) throw new AppError('too_many_attempts', { seconds: Math.ceil((until - Date.now()) / 1000) });
}

/** Records a failure; returns how long to hold the answer (ms). */
export async function recordFailure(app: ServerContext, ip: string, service: string): Promise<number> {
  const { slowAfter, blockAfter, windowS, blockS, maxDelayMs } = app.config.login;
  const now = new Date();
  const windowStart = new Date(now.getTime() - windowS * 1000);
  const row = await app.db
    .insertInto('ip_blocks')
    .values({ ip, service, failures: 1, window_started_at: now })
    .onConflict((oc) =>
      oc.columns(['ip', 'service']).doUpdateSet((eb) => ({
        failures: eb
          .case()
          .when('ip_blocks.window_started_at', '<', windowStart)
          .then(1)
          .else(eb('ip_blocks.failures', '+', 1))
          .end(),
        window_started_at: eb
          .case()
          .when('ip_blocks.window_started_at', '<', windowStart)
          .then(now)
          .else(eb.ref('ip_blocks.window_started_at'))
          .end(),
      })),
    )
    .returning(['failures'])
    .executeTakeFirstOrThrow();
  if (row.failures >= blockAfter) {
    await app.db
      .updateTable('ip_blocks')
      .set({ blocked_until: new Date(now.getTime() + blockS * 1000), failures: 0, window_started_at: now })
      .where('ip', '=', ip)
      .where('service', '=', service)
      .execute();
    return 0;
  }
  if (row.failures <= slowAfter) return 0;
  return Math.min(maxDelayMs, 250 * (row.failures - slowAfter));
}

export async function clearFailures(app: ServerContext, ip: string, service: string): Promise<void> {
  await app.db.deleteFrom('ip_blocks').where('ip', '=', ip).where('service', '=', service).where((eb) => eb.or([eb('blocked_until', 'is', null), eb('blocked_until', '<', new Date())]))
    .execute();
}
