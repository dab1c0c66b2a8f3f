import type { SomeHandlers } from '../../pipeline/handler';
import { callerOf } from '../../engine/family';
import { serverT } from '../../i18n';
import { ReportData } from '@lintel/core';
import {
  EXPORT_PAGE,
  parsePeriodCursor,
  periodCursor,
  periodInfo,
  periodPage,
  usedPage,
  windowOf,
} from './licence-reports';
import { fileReply, type Cell } from '../../engine/file-writers';
import type { StreamedReply } from '../../pipeline/streamed-reply';
import type { HandlerContext } from '../../pipeline/handler';
import { AppError } from '../../errors';

/** The file goes out as a download, named by report, period and the day of the server's clock. */
function sendFile(
  ctx: HandlerContext,
  name: string,
  format: 'csv' | 'xlsx',
  header: string[],
  rows: AsyncIterable<Cell[]>,
): StreamedReply {
  const t = serverT(ctx.caller.locale);
  const filename = `${name}-${ctx.app.clock.now().toISOString().slice(0, 10)}.${format}`;
  return fileReply(format, filename, t(`commands:report_texts.sheet.${name}`), header, rows);
}

const col = (locale: string, key: string) => serverT(locale)(`commands:report_texts.columns.${key}`);

export const reportsHandlers = {
  'reports.licences_used': async (ctx, args) => {
    const caller = callerOf(ctx);
    const now = ctx.app.clock.now();
    const w = windowOf(args, now);
    const after = args.cursor ? Number(args.cursor) : 0;
    if (!Number.isSafeInteger(after) || after < 0)
      throw new AppError('check_fields_data', { fields: [{ field: 'cursor', key: 'invalid' }] });
    // one row more than asked says whether another page follows
    const rows = await usedPage(ctx.app.db, caller, args, w, after, args.limit + 1);
    const page = rows.slice(0, args.limit);
    return {
      period: periodInfo(args.period, w, now),
      data: page,
      meta: {
        next: rows.length > args.limit ? String(page[page.length - 1]!.group_id) : null,
        limit: args.limit,
      },
    };
  },
  'reports.licences_period': async (ctx, args) => {
    const caller = callerOf(ctx);
    const now = ctx.app.clock.now();
    const w = windowOf(args, now);
    const rows = await periodPage(
      ctx.app.db,
      caller,
      args,
      w,
      now,
      parsePeriodCursor(args.cursor),
      args.limit + 1,
    );
    const page = rows.slice(0, args.limit);
    return {
      period: periodInfo(args.period, w, now),
      data: page,
      meta: {
        next: rows.length > args.limit ? periodCursor(page[page.length - 1]!) : null,
        limit: args.limit,
      },
    };
  },
  'reports.licences_used_export': async (ctx, args) => {
    const caller = callerOf(ctx);
    const now = ctx.app.clock.now();
    const w = windowOf(args, now);
    const data = args.data?.length ? args.data : [...ReportData];
    const l = ctx.caller.locale;
    const header = [
      ...['group_id', 'name', 'parent_id', 'type', 'admins', 'is_enabled', 'features'].map((k) => col(l, k)),
      ...data.flatMap((k) => [
        `${col(l, `data.${k}`)}: ${col(l, 'used')}`,
        `${col(l, `data.${k}`)}: ${col(l, 'max')}`,
      ]),
    ];
    const db = ctx.app.db;
    async function* rows(): AsyncIterable<Cell[]> {
      let after = 0;
      for (;;) {
        const page = await usedPage(db, caller, args, w, after, EXPORT_PAGE);
        for (const r of page)
          yield [
            r.group_id,
            r.name,
            r.parent_id,
            r.type,
            r.admins.join('; '),
            r.is_enabled,
            r.features.join(' '),
            ...data.flatMap((k) => [r.used[k] ?? 0, r.limits[k] ?? null]),
          ];
        if (page.length < EXPORT_PAGE) return;
        after = page[page.length - 1]!.group_id;
      }
    }
    return sendFile(ctx, 'licences-used', args.format, header, rows());
  },
  'reports.licences_period_export': async (ctx, args) => {
    const caller = callerOf(ctx);
    const now = ctx.app.clock.now();
    const w = windowOf(args, now);
    const l = ctx.caller.locale;
    const header = [
      'group_id',
      'name',
      'type',
      'licence',
      'is_active',
      'features',
      'from',
      'to',
      'status',
      'days_left',
      'notify_period',
      'notify_before',
      'last_notified_at',
    ].map((k) => col(l, k));
    const db = ctx.app.db;
    async function* rows(): AsyncIterable<Cell[]> {
      let after: [number, number] = [0, 0];
      for (;;) {
        const page = await periodPage(db, caller, args, w, now, after, EXPORT_PAGE);
        for (const r of page)
          yield [
            r.group_id,
            r.name,
            r.type,
            r.licence,
            r.is_active,
            r.features.join(' '),
            r.from,
            r.to,
            serverT(l)(`commands:report_texts.status.${r.status}`),
            r.days_left,
            r.notifications.period,
            r.notifications.notify_before,
            r.last_notified_at,
          ];
        if (page.length < EXPORT_PAGE) return;
        const last = page[page.length - 1]!;
        after = [last.group_id, last.licence];
      }
    }
    return sendFile(ctx, 'licences-period', args.format, header, rows());
  },
} satisfies SomeHandlers;
