import { Readable } from 'node:stream';
import { sql } from 'kysely';
import { openApiDocument, registry, type SystemInfo } from '@lintel/commands';
import { signedIn, type HandlerContext, type SomeHandlers } from '../../pipeline/handler';
import { audit } from '../../audit/audit';
import { StreamedReply } from '../../pipeline/streamed-reply';
import { VERSION } from '../../version';

/** The document is made once per process: the registry does not change while it runs. */
let openApi: Record<string, unknown> | undefined;

/** The metrics as the text Prometheus reads, with its content type (`text/plain; version=0.0.4`). */
async function metricsReply(ctx: HandlerContext): Promise<StreamedReply> {
  const text = await ctx.app.metrics.text();
  return new StreamedReply(ctx.app.metrics.contentType, Readable.from([text]));
}

export const systemHandlers = {
  // the server's URL is relative (`/api/v0`): a client resolves it against where it read the document
  'system.openapi': async () => (openApi ??= openApiDocument(registry.values(), { version: VERSION })),
  'system.metrics': (ctx) => metricsReply(ctx),
  'system.info': (ctx) => systemInfo(ctx),
} satisfies SomeHandlers;

export const workerHandlers = {
  'worker.list': async (ctx) => ({
    data: await ctx.app.workers.list(),
    instance: ctx.app.workers.instance,
  }),
  'worker.start': (ctx, args) => act(ctx, args.name, 'start'),
  'worker.stop': (ctx, args) => act(ctx, args.name, 'stop'),
  'worker.restart': (ctx, args) => act(ctx, args.name, 'restart'),
} satisfies SomeHandlers;

async function act(ctx: HandlerContext, name: string, action: 'start' | 'stop' | 'restart') {
  const auth = signedIn(ctx);
  const data = await ctx.app.workers.act(name, action, auth.userId);
  await audit(ctx.app.db, {
    projectId: auth.projectId,
    userId: auth.userId,
    action: `worker_${action}`,
    ip: ctx.caller.ip,
    data: { name, state: data.state },
  });
  return { data };
}

async function systemInfo(ctx: HandlerContext): Promise<SystemInfo> {
  const app = ctx.app;
  const [version, size, jobs, stopped] = await Promise.all([
    sql<{ v: string }>`select version() as v`.execute(app.db),
    sql<{ n: number }>`select pg_database_size(current_database())::bigint as n`.execute(app.db),
    sql<{ state: string; n: number }>`select state, count(*)::int as n from jobs group by state`.execute(
      app.db,
    ),
    sql<{ kind: string }>`select kind from job_kind_pauses order by kind`.execute(app.db),
  ]);
  const now = app.clock.now();
  const workers = await app.workers.list();
  return {
    versions: { server: VERSION, api: 'v0', node: process.version, database: version.rows[0]?.v ?? '' },
    instance: app.workers.instance,
    started_at: app.workers.startedAt.toISOString(),
    uptime_s: Math.max(0, Math.floor((now.getTime() - app.workers.startedAt.getTime()) / 1000)),
    database: {
      kind: app.database.kind,
      size_bytes: Number(size.rows[0]?.n ?? 0),
      pool: app.database.poolStats(),
    },
    broker: {
      kind: app.config.mqtt.url ? 'external' : 'embedded',
      url: app.devices.brokerUrl(),
      running: app.devices.running,
      connected: app.devices.connected,
      messages_handled: app.devices.handled,
      messages_refused: app.devices.refused,
    },
    sip: app.sip.status(),
    jobs: {
      by_state: Object.fromEntries(jobs.rows.map((r) => [r.state, r.n])),
      running: app.jobs.isStarted,
      stopped_kinds: stopped.rows.map((r) => r.kind),
    },
    websocket_clients: app.sockets.size,
    modules: workers
      .filter((w) => w.type === 'module')
      .map((w) => ({ name: w.name.slice('module:'.length), running: w.state === 'running' })),
  };
}
