import { sql } from 'kysely';
import { audit } from '../../audit/audit';
import { AppError } from '../../errors';
import { familyCtx, familyHandlers, visibleSql } from '../../engine/family';
import type { SomeHandlers } from '../../pipeline/handler';
import { userStore } from '../user/user.store';
import { markerStore } from './marker.store';

export const markerHandlers = {
  ...familyHandlers(markerStore),

  /** Puts a visible marker on (or takes it off) users the caller can see. */
  'marker.apply': async (ctx, args) => {
    const c = await familyCtx(ctx);
    const users = [...new Set(args.users)];
    return c.app.db.transaction().execute(async (trx) => {
      const marker =
        await sql`select t.id from ${markerStore.from} where t.id = ${args.id} and ${await visibleSql(markerStore, c.caller, 'view')}`.execute(
          trx,
        );
      if (!marker.rows.length) throw new AppError('item_not_found');
      const seen = await sql<{
        id: number;
      }>`select t.id from ${userStore.from} where t.id in (${sql.join(users)}) and ${await visibleSql(userStore, c.caller, 'view')}`.execute(
        trx,
      );
      const missing = users.filter((u) => !seen.rows.some((r) => r.id === u));
      if (missing.length) throw new AppError('invalid_related_entity', { entity: 'users', ids: missing });
      const result = args.remove
        ? await trx
            .deleteFrom('user_markers')
            .where('marker_id', '=', args.id)
            .where('user_id', 'in', users)
            .executeTakeFirst()
        : await trx
            .insertInto('user_markers')
            .values(users.map((user_id) => ({ user_id, marker_id: args.id })))
            .onConflict((oc) => oc.doNothing())
            .executeTakeFirst();
      const changed = Number(
        'numDeletedRows' in result
          ? result.numDeletedRows
          : ((result as { numInsertedRows?: bigint }).numInsertedRows ?? 0n),
      );
      await audit(trx, {
        projectId: c.caller.projectId,
        userId: c.caller.userId,
        action: args.remove ? 'marker_removed' : 'marker_applied',
        entity: 'marker',
        entityId: args.id,
        ip: c.ip,
        data: { users },
      });
      return { changed };
    });
  },
} satisfies SomeHandlers;
