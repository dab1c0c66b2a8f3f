/**
 * The composition root: the one place that knows every part of the server. It opens the database, builds
 * the context every handler and service shares (once, whole: each part is made with what it needs), gives
 * the jobs their kinds, and lists the long-lived parts as modules in their start order (modules/lifecycle.ts).
 * Adding a module is one line in `modules` below, beside its neighbours: its name, what it needs, its start
 * and its stop (a `defineModule` next to its code).
 */
import pino from 'pino';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Config } from './config';
import type { ServerContext } from './context';
import { openDatabase, migrate } from './db/database';
import { sweepStorage } from './storage/sweep';
import { createMailer } from './mail/mailer';
import { EventBus } from './realtime/bus';
import { pruneSessions } from './auth/sessions';
import { bootstrap } from './bootstrap';
import { firstStartLicence, startLicenceChecks } from './licensing/licence.service';
import { handlers } from './handlers';
import { systemClock } from './clock';
import { JobQueue } from './jobs/queue';
import { defineJob } from './jobs/define';
import { EventOutbox, type Fanout } from './events/outbox';
import { RealtimeSockets } from './realtime/websocket';
import { defineRetentionJobs } from './jobs/journal-retention';
import { journals } from './handlers/journals';
import { dispatchJob } from './pipeline/dispatch';
import { defineDeviceTaskJob } from './devices/tasks';
import { pruneStatusChanges } from './devices/status';
import { defineBrokerAccountJobs } from './devices/dynsec';
import { DeviceGateway } from './devices/gateway';
import { SipService } from './sip/service';
import { WebhookDeliverJob, WebhookService } from './webhooks/service';
import { GuestExpireJob } from './handlers/guest-access/guest-access.job';
import { AccessReplanJob } from './access-sync/replan';
import { AccessSync } from './access-sync/planner';
import { defineBackupJobs } from './backup/service';
import {
  chooseModules,
  defineModule,
  Lifecycle,
  ModuleStopTimeout,
  type ServerModule,
} from './modules/lifecycle';
import { RequestCache, AUTH_CHANGED_CHANNEL, ROUTES_CHANGED_CHANNEL } from './engine/request-cache';
import { createHttp } from './http/app';
import { Metrics } from './metrics/metrics';
import { Workers } from './modules/workers';
import { LogFiles } from './logs/log-files';
import { scrubText, scrubValue } from './logs/scrub';
import { z } from 'zod';

export interface LintelServer {
  app: FastifyInstance;
  context: ServerContext;
  /** set on the first start when the administrator's password was generated: print it once, never log it */
  generatedAdminPassword?: string;
  /** this start created the project (else a password was made again for an administrator never signed in) */
  firstStart: boolean;
  listen(): Promise<string>;
  close(): Promise<void>;
}

/** Fields that never reach a log, wherever they appear. */
const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  '*.password',
  '*.token',
  '*.refresh',
  '*.code',
  '*.user_password',
  '*.old',
  '*.new',
  '*.device_password',
  'req.headers["x-device-password"]',
];

/**
 * `events.prune`: old outbox rows go once a day, whichever instance comes first; and the stored files no row
 * names any more (`sweepStorage`: backups carry the files their rows name, so a file swept is not lost).
 */
const EventsPruneJob = defineJob({
  kind: 'events.prune',
  payload: z.object({}),
  run: async (ctx) => {
    await ctx.app.outbox.prune();
    await pruneStatusChanges(ctx.app);
    await sweepStorage(ctx.app);
  },
});

export async function createServer(config: Config): Promise<LintelServer> {
  // the log goes to stdout (or the tests' stream) and into the server's log file, which `log.get` reads back;
  // every object logged is walked for secrets at any depth (logs/scrub.ts), beyond redact's fixed paths
  const logFiles = new LogFiles(config.dataDir, config.logs, config.sip.mode === 'local');
  const log: FastifyBaseLogger = pino(
    {
      level: config.logLevel,
      redact: { paths: REDACT, censor: '[redacted]' },
      formatters: { log: (o) => scrubValue(o) as Record<string, unknown> },
      // the message too (`formatters.log` sees the fields only)
      hooks: {
        logMethod(args, method) {
          method.apply(this, args.map((a) => (typeof a === 'string' ? scrubText(a) : a)) as typeof args);
        },
      },
    },
    pino.multistream([
      { level: config.logLevel as pino.Level, stream: config.logStream ?? process.stdout },
      { level: config.logLevel as pino.Level, stream: logFiles.destination('server') },
    ]),
  );
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    pgliteTemplate: config.pgliteTemplate,
    waitMs: config.dbWaitMs,
    onConnectionLost: (err) =>
      log.warn({ err: err.message }, 'database connection lost; the next query opens a new one'),
  });
  await migrate(database);
  const clock = config.clock ?? systemClock;
  const events = new EventBus();
  // the callers of requests, remembered between them; forgotten on any change (engine/request-cache.ts)
  const authCache = new RequestCache({
    ttlMs: config.authCacheMs,
    needsListener: database.kind === 'postgres',
  });
  // what the routing of calls read: forgotten with the callers (users, groups) and on the SIP tables' own
  // notifications (migration 0079), besides the SIP events and the commands that change something
  const routeCache = new RequestCache({
    ttlMs: config.sip.routeCacheMs,
    needsListener: database.kind === 'postgres',
  });
  if (database.listen) {
    await database.listen(AUTH_CHANGED_CHANNEL, () => {
      authCache.clear();
      routeCache.clear();
    });
    await database.listen(ROUTES_CHANGED_CHANNEL, () => routeCache.clear());
  }
  const estimates = new RequestCache({ ttlMs: config.authCacheMs, needsListener: false });
  // one instance on PGlite: in process; several on PostgreSQL: NOTIFY, or Redis when REDIS_URL is set
  const fanout: Fanout = config.redisUrl ? 'redis' : database.kind === 'postgres' ? 'postgres' : 'local';
  const outbox = new EventOutbox({
    db: database.db,
    kind: database.kind,
    databaseUrl: config.databaseUrl,
    fanout,
    redisUrl: config.redisUrl,
    onAuthChanged: () => {
      authCache.clear();
      routeCache.clear();
    },
    onRoutesChanged: () => routeCache.clear(),
    onListening: (on) => {
      authCache.setListening(on);
      routeCache.setListening(on);
    },
    bus: events,
    clock,
    log,
    eventLog: logFiles.logger('events', config.logLevel),
  });
  // The parts below serve the context they belong to (a job, a device's push and a socket's message all go
  // through `dispatch`, which reads the context): each is made with the way to it, and reads it when it runs.
  const contextOf = (): ServerContext => context;
  const jobs = new JobQueue({
    db: database.db,
    kind: database.kind,
    databaseUrl: config.databaseUrl,
    clock,
    log,
    settings: config.jobs,
    dispatch: (kind, job) => dispatchJob(contextOf(), kind, job),
    runLog: logFiles.logger('jobs', config.logLevel),
  });
  const mailer = createMailer({
    db: database.db,
    log,
    smtpUrl: config.smtpUrl,
    from: config.mailFrom,
    jobs,
    clock,
  });
  const context: ServerContext = {
    config,
    database,
    db: database.db,
    log,
    mailer,
    events,
    clock,
    jobs,
    outbox,
    authCache,
    routeCache,
    estimates,
    handlers,
    devices: new DeviceGateway(contextOf),
    sip: new SipService(contextOf),
    webhooks: new WebhookService(contextOf),
    sockets: new RealtimeSockets(contextOf, config.websocket),
    metrics: new Metrics(contextOf),
    workers: new Workers(contextOf),
    accessSync: new AccessSync(contextOf),
    logFiles,
  };
  defineDeviceTaskJob(context);
  defineBrokerAccountJobs(context);
  defineBackupJobs(context);
  jobs.define(EventsPruneJob);
  jobs.define(WebhookDeliverJob);
  jobs.define(GuestExpireJob);
  jobs.define(AccessReplanJob);
  const retention = defineRetentionJobs({
    db: database.db,
    jobs,
    clock,
    stores: journals,
    configured: config.retentionDays,
    storageDir: config.storageDir,
  });
  // under the start-up lock: of instances starting at once on one database, one creates the first project
  const boot = await database.exclusive(async () => {
    const b = await bootstrap(database.db, {
      adminLogin: config.adminLogin,
      adminPassword: config.adminPassword,
    });
    // a first start on an empty database runs on an evaluation licence (licensing/licence.service.ts)
    if (b.created) await firstStartLicence(context);
    return b;
  });
  await startLicenceChecks(context);
  await pruneSessions(database.db, clock.now());
  const http = await createHttp(context);

  // The long-lived parts in their start order; they stop in reverse. The configuration picks which run.
  const modules: ServerModule[] = [
    defineModule({ name: 'events', start: () => outbox.start(), stop: () => outbox.stop() }),
    defineModule({
      name: 'jobs',
      start: async () => {
        await jobs.start();
        await jobs.enqueue(
          database.db,
          EventsPruneJob,
          {},
          { idempotencyKey: `events.prune:${clock.now().toISOString().slice(0, 10)}` },
        );
        await retention.enqueueToday();
      },
      stop: () => jobs.stop(),
    }),
    // the device gateway: the embedded MQTT broker (or MQTT_URL's), devices' pushes, the offline sweep
    defineModule({
      name: 'devices',
      start: () => context.devices.start(),
      stop: () => context.devices.stop(),
    }),
    // the access sync's planner: committed access changes become device tasks carrying the difference
    defineModule({
      name: 'access',
      start: async () => context.accessSync.start(),
      stop: () => context.accessSync.stop(),
    }),
    // the SIP service: Kamailio started and supervised (or KAMAILIO_RPC_URL's), the numbers' credentials
    defineModule({ name: 'sip', start: () => context.sip.start(), stop: () => context.sip.stop() }),
    // the projects' webhooks: the outbox read on past a shared cursor, deliveries as jobs (queued while the
    // jobs module is stopped, sent once it runs again)
    defineModule({
      name: 'webhooks',
      start: async () => context.webhooks.start(),
      stop: () => context.webhooks.stop(),
    }),
    http.module,
    // served by http, and after it: its sockets close (1001) before HTTP stops, so clients reconnect
    // to another instance or later
    defineModule({
      name: 'websocket',
      needs: ['http'],
      start: () => context.sockets.start(),
      stop: () => context.sockets.stop(),
    }),
  ];
  const lifecycle = new Lifecycle(chooseModules(modules, config.modules), {
    stopBoundMs: config.moduleStopBoundMs,
  });
  context.workers.attach(lifecycle);

  return {
    app: http.app,
    context,
    generatedAdminPassword: boot.generatedPassword,
    firstStart: boot.created,
    async listen() {
      await lifecycle.start();
      // the SIP server asks this instance where calls go, now that it listens
      await context.sip.routeThrough(http.address());
      return http.address();
    },
    async close() {
      await lifecycle.stop((name, err) =>
        err instanceof ModuleStopTimeout
          ? log.error({ module: name, ms: err.ms }, 'module did not stop in time')
          : log.error({ module: name, err: (err as Error)?.message }, 'module did not stop cleanly'),
      );
      await http.app.close();
      await database.close();
      logFiles.close();
    },
  };
}
