import { sql } from 'kysely';
import type { NotificationTab } from '@lintel/core';
import { AppError } from '../../errors';
import { signedIn, type SomeHandlers } from '../../pipeline/handler';
import { settingsOf, toRecord } from '../../notifications/notify';

const columns = [
  'id',
  'type',
  'data',
  'created_at',
  'updated_at',
  'read_at',
  'significance',
  'icon',
  'color',
  'popup_action',
  'sound',
] as const;

/** The rows of one tab of /notifications (spec part 1 §2.3): All, Normal, Important, ACS, Alarm. */
function tabFilter(tab: NotificationTab) {
  switch (tab) {
    case 'all':
      return sql<boolean>`true`;
    case 'normal':
      return sql<boolean>`significance = 'other'`;
    case 'important':
      return sql<boolean>`significance = 'important'`;
    case 'acs':
      return sql<boolean>`category = 'acs'`;
    case 'alarm':
      return sql<boolean>`category = 'alarm'`;
  }
}

/** Every command reads and changes the caller's own notifications only: someone else's is not found. */
export const notificationHandlers = {
  'notification.unread': async (ctx, args) => {
    const auth = signedIn(ctx);
    const base = ctx.app.db
      .selectFrom('notifications')
      .where('user_id', '=', auth.userId)
      .where('read_at', 'is', null);
    const important = base.where('significance', '=', 'important');
    const [rows, importantRows, count] = await Promise.all([
      base.select(columns).orderBy('id', 'desc').limit(args.limit).execute(),
      important.select(columns).orderBy('id', 'desc').limit(args.limit).execute(),
      base
        .select((eb) => [
          eb.fn.countAll<number>().as('n'),
          eb.fn.count<number>('id').filterWhere('significance', '=', 'important').as('important'),
        ])
        .executeTakeFirstOrThrow(),
    ]);
    return {
      data: rows.map(toRecord),
      important: importantRows.map(toRecord),
      meta: { total: Number(count.n), important: Number(count.important) },
    };
  },

  'notification.list': async (ctx, args) => {
    const auth = signedIn(ctx);
    const base = ctx.app.db
      .selectFrom('notifications')
      .where('user_id', '=', auth.userId)
      .where(tabFilter(args.type));
    const [rows, count] = await Promise.all([
      base
        .select(columns)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .offset(args.offset)
        .limit(args.limit)
        .execute(),
      base
        .select((eb) => [
          eb.fn.countAll<number>().as('n'),
          eb.fn.count<number>('id').filterWhere('read_at', 'is', null).as('unread'),
        ])
        .executeTakeFirstOrThrow(),
    ]);
    return {
      data: rows.map(toRecord),
      meta: { total: Number(count.n), unread: Number(count.unread), offset: args.offset, limit: args.limit },
    };
  },

  'notification.read': async (ctx, args) => {
    const auth = signedIn(ctx);
    const now = ctx.app.clock.now();
    const row = await ctx.app.db
      .updateTable('notifications')
      .set({ read_at: sql`coalesce(read_at, ${now})`, updated_at: now })
      .where('id', '=', args.id)
      .where('user_id', '=', auth.userId)
      .returning(columns)
      .executeTakeFirst();
    if (!row) throw new AppError('item_not_found');
    return toRecord(row);
  },

  'notification.read_all': async (ctx) => {
    const auth = signedIn(ctx);
    const now = ctx.app.clock.now();
    const r = await ctx.app.db
      .updateTable('notifications')
      .set({ read_at: now, updated_at: now })
      .where('user_id', '=', auth.userId)
      .where('read_at', 'is', null)
      .executeTakeFirst();
    return { count: Number(r.numUpdatedRows) };
  },

  'notification.settings_get': async (ctx) => {
    const auth = signedIn(ctx);
    const u = await ctx.app.db
      .selectFrom('users')
      .select('profile')
      .where('id', '=', auth.userId)
      .executeTakeFirstOrThrow();
    return settingsOf(u.profile);
  },

  'notification.settings_update': async (ctx, args) => {
    const auth = signedIn(ctx);
    const settings = { acs: args.acs };
    await ctx.app.db
      .updateTable('users')
      .set({
        profile: sql`jsonb_set(profile, '{notification_settings}', ${JSON.stringify(settings)}::jsonb)`,
        updated_at: ctx.app.clock.now(),
      })
      .where('id', '=', auth.userId)
      .execute();
    return settings;
  },
} satisfies SomeHandlers;
