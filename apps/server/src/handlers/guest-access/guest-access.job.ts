import { sql, type Kysely } from 'kysely';
import type { ServerContext } from '../../context';
import type { DB } from '../../db/schema';
import { z } from 'zod';
import { audit } from '../../audit/audit';
import { defineJob } from '../../jobs/define';

/**
 * `guest_access.expire`: deletes a guest pass once its validity ended (issue 21 item 7), queued for the end
 * of its validity when it is made or changed. Its identifier goes with it (the access sync takes it off the
 * devices; its access-rule links and its key go by cascade). A pass whose validity was moved later is queued
 * again for its new end; one already gone is nothing to do.
 */
export const GuestExpireJob = defineJob({
  kind: 'guest_access.expire',
  payload: z.object({ identifier_id: z.number().int().positive() }),
  run: async (ctx, payload) => {
    const app = ctx.app;
    const now = app.clock.now();
    const r = await sql<{ project_id: number; name: string; value: string; to_u: Date | null }>`
      select i.project_id, i.name, i.value, i.period_restrict_to_u as to_u
      from guest_passes g join identifiers i on i.id = g.identifier_id
      where g.identifier_id = ${payload.identifier_id}`.execute(app.db);
    const pass = r.rows[0];
    if (!pass?.to_u) return;
    const end = new Date(pass.to_u);
    if (end > now) {
      await enqueueExpiry(app, app.db, payload.identifier_id, end);
      return;
    }
    await app.db.transaction().execute(async (trx) => {
      const gone = await sql`delete from identifiers where id = ${payload.identifier_id}`.execute(trx);
      if (Number(gone.numAffectedRows ?? 0) > 0)
        await audit(trx, {
          projectId: pass.project_id,
          userId: null,
          action: 'delete',
          entity: 'identifier',
          entityId: payload.identifier_id,
          data: {
            before: { name: pass.name, type: 'qr', owner_type: 'guest' },
            reason: 'guest_pass_expired',
          },
        });
    });
  },
});

/** Queues the deletion of a pass at the end of its validity (once per pass and end). */
export function enqueueExpiry(
  app: ServerContext,
  q: Kysely<DB>,
  identifierId: number,
  end: Date,
): Promise<number> {
  return app.jobs.enqueue(
    q,
    GuestExpireJob,
    { identifier_id: identifierId },
    { runAt: end, idempotencyKey: `guest_access.expire:${identifierId}:${end.toISOString()}` },
  );
}
