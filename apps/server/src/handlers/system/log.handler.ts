import { signedIn, type HandlerContext, type SomeHandlers } from '../../pipeline/handler';
import { audit } from '../../audit/audit';
import { StreamedReply } from '../../pipeline/streamed-reply';
import { AppError } from '../../errors';
import type { LogName } from '@lintel/commands';

/**
 * Event and system logs (logs/log-files.ts; docs/decisions.md "Event and system logs"): the logs of the
 * instance that answered. A log this instance does not keep (the SIP server's, where it runs none) is not found.
 */
function known(ctx: HandlerContext, name: LogName): LogName {
  if (!ctx.app.logFiles.names().includes(name)) throw new AppError('item_not_found', { entity: 'log', name });
  return name;
}

export const logHandlers = {
  'log.available': async (ctx) => ({
    data: ctx.app.logFiles.sources(),
    instance: ctx.app.workers.instance,
    max_bytes: ctx.app.logFiles.settings.maxBytes,
    max_files: ctx.app.logFiles.settings.files,
  }),
  'log.get': async (ctx, args) => {
    const name = known(ctx, args.name);
    const page = ctx.app.logFiles.read(name, {
      before: args.before,
      limit: args.limit,
      level: args.level,
      contains: args.contains || undefined,
    });
    return { data: page.lines, name, instance: ctx.app.workers.instance, before: page.before };
  },
  'log.clear': async (ctx, args) => {
    const auth = signedIn(ctx);
    const name = known(ctx, args.name);
    const bytes = ctx.app.logFiles.clear(name);
    await audit(ctx.app.db, {
      projectId: auth.projectId,
      userId: auth.userId,
      action: 'log_cleared',
      entity: 'log',
      entityId: name,
      ip: ctx.caller.ip,
      data: { name, instance: ctx.app.workers.instance, cleared_bytes: bytes },
    });
    // who emptied a log is said in the server's own log (its first line, when that is the one emptied)
    ctx.app.log.info({ log: name, user: auth.userId, cleared_bytes: bytes }, 'log cleared');
    return { data: { name, cleared_bytes: bytes } };
  },
  'log.download': async (ctx, args) => {
    const name = known(ctx, args.name);
    const day = ctx.app.clock.now().toISOString().slice(0, 10);
    return new StreamedReply(
      'text/plain; charset=utf-8',
      ctx.app.logFiles.download(name),
      `lintel-${name}-${day}.log`,
    );
  },
} satisfies SomeHandlers;
