import { sql } from 'kysely';
import { webhookResource } from '@lintel/commands';
import { AppError } from '../../errors';
import { callerOf, visibleSql } from '../../engine/family';
import { tableStore } from '../../engine/table-store';
import type { HandlerContext, SomeHandlers } from '../../pipeline/handler';

/** The webhooks' own store, for their scope (the family's commands are the declaration's: plain-families). */
const webhookStore = tableStore(webhookResource, { table: 'webhooks' });

/** The webhook `id` if the caller may see it, else `item_not_found`. */
async function visibleHook(ctx: HandlerContext, id: number): Promise<{ id: number; project_id: number }> {
  const caller = callerOf(ctx);
  const r = await sql<{
    id: number;
    project_id: number;
  }>`select t.id, t.project_id from ${webhookStore.from} where t.id = ${id} and ${await visibleSql(webhookStore, caller, 'view')}`.execute(
    ctx.app.db,
  );
  if (!r.rows[0]) throw new AppError('item_not_found');
  return r.rows[0];
}

export const webhookHandlers = {
  'webhook.deliveries': async (ctx, args) => {
    await visibleHook(ctx, args.id);
    const r = await sql<
      Record<string, unknown>
    >`select id, event_id, event_type, state, attempts, response_status,
        error, created_at, delivered_at from webhook_deliveries where webhook_id = ${args.id}
      order by id desc limit ${args.limit}`.execute(ctx.app.db);
    const iso = (v: unknown) => (v instanceof Date ? v.toISOString() : v === null ? null : String(v));
    return {
      data: r.rows.map((d) => ({
        id: Number(d.id),
        event_id: d.event_id === null ? null : Number(d.event_id),
        event_type: String(d.event_type),
        state: d.state as 'pending' | 'delivered' | 'failed',
        attempts: Number(d.attempts),
        response_status: d.response_status === null ? null : Number(d.response_status),
        error: (d.error as string | null) ?? null,
        created_at: iso(d.created_at)!,
        delivered_at: iso(d.delivered_at),
      })),
    };
  },

  'webhook.test': async (ctx, args) => {
    const hook = await visibleHook(ctx, args.id);
    return { delivery_id: await ctx.app.webhooks.test(hook) };
  },
} satisfies SomeHandlers;
