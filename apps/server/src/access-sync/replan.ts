import { sql, type Transaction } from 'kysely';
import { z } from 'zod';
import type { ServerContext } from '../context';
import type { DB } from '../db/schema';
import { defineJob } from '../jobs/define';
import { accessSyncConfig } from './config';
import { markChanged } from './ledger';

/** the longest wait before a device whose batches keep failing is planned again */
const MAX_REPLAN_S = 86_400;

/**
 * `access_sync.replan`: asks for a new plan of a project. A batch of the identifier API that failed for good
 * (every attempt without an answer, or the whole batch refused) leaves what it carried of unknown outcome
 * (ledger.ts, `releaseTasks`), and nothing else would send it again before the project's next change: the
 * device would miss a card given or keep a card revoked. Queued once per failed batch, after a back-off.
 */
export const AccessReplanJob = defineJob({
  kind: 'access_sync.replan',
  payload: z.object({ project_id: z.number().int().positive() }),
  run: async (ctx, payload) => {
    await markChanged(ctx.app.db, payload.project_id);
  },
});

/**
 * Queues the new plan after an `entities` task failed for good, in the transaction that records the failure:
 * `replanAfterS` after the first failed batch in a row on the device, doubling with each next one (capped at a
 * day), so a device broken for good is tried a few times a day, not in a loop of failures and notifications.
 */
export async function scheduleReplan(
  app: ServerContext,
  trx: Transaction<DB>,
  task: { id: number; project_id: number; device_id: number },
): Promise<void> {
  const r = await sql<{ n: number }>`select count(*)::int as n from device_tasks
    where device_id = ${task.device_id} and kind = 'entities' and state = 'error'
      and id > coalesce((select max(id) from device_tasks
        where device_id = ${task.device_id} and kind = 'entities' and state = 'completed'), 0)`.execute(trx);
  const inARow = Math.max(1, Number(r.rows[0]?.n ?? 1));
  const delayS = Math.min(MAX_REPLAN_S, accessSyncConfig(app).replanAfterS * 2 ** Math.min(inARow - 1, 20));
  await app.jobs.enqueue(
    trx,
    AccessReplanJob,
    { project_id: Number(task.project_id) },
    {
      runAt: new Date(app.clock.now().getTime() + delayS * 1000),
      idempotencyKey: `access_sync.replan:${task.id}`,
    },
  );
}
