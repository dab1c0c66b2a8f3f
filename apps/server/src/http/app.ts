import fs from 'node:fs';
import { defineBackupJobs } from '../backup/service';
import path from 'node:path';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import fastifyStatic from '@fastify/static';
import fastifyMultipart from '@fastify/multipart';
import fastifyHelmet from '@fastify/helmet';
import pino from 'pino';
import { registry, uploadFields, type Command } from '@lintel/commands';
import { errorBody, unauthenticatedBody } from '@lintel/core';
import type { Config } from '../config';
import type { CallerInfo, ServerContext } from '../context';
import { openDatabase, migrate } from '../db/database';
import { databaseFaultReply } from '../db/faults';
import { asDatabaseRequest } from '../db/pglite-pool';
import { createMailer } from '../mail/mailer';
import { EventBus } from '../realtime/bus';
import { pruneSessions } from '../auth/sessions';
import { bootstrap } from '../bootstrap';
import { firstStartLicence, startLicenceChecks } from '../licensing/licence.service';
import { AppError } from '../errors';
import { handlers } from '../handlers';
import { registerRateLimits } from '../security/rate-limit';
import type { Handler } from './handler';
import { systemClock } from '../clock';
import { JobQueue } from '../jobs/queue';
import { EventOutbox, type Fanout } from '../events/outbox';
import { RealtimeSockets, WS_ROUTE } from '../realtime/websocket';
import { defineRetentionJobs } from '../jobs/journal-retention';
import { journals } from '../handlers/journals';
import { dispatch } from '../pipeline/dispatch';
import { authenticateBearer, authenticateDevice, type Principal } from '../pipeline/principal';
import { notePoolContact } from '../devices/pool';
import { defineDeviceTaskJob } from '../devices/tasks';
import { defineBrokerAccountJobs } from '../devices/dynsec';
import { DeviceGateway } from '../devices/gateway';
import { Lifecycle, type ServerModule } from '../modules/lifecycle';
import { multipartArgs } from '../storage/uploads';
import { acceptNdjson } from '../engine/bulk-import';
import { StreamedReply } from '../engine/export';
import { helmetOptions, storageHeaders } from './security';
import { RequestCache, AUTH_CHANGED_CHANNEL } from '../engine/request-cache';

export interface LintelServer {
  app: FastifyInstance;
  context: ServerContext;
  /** set on the first start when the administrator's password was generated: print it once, never log it */
  generatedAdminPassword?: string;
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

function callerOf(req: FastifyRequest): CallerInfo {
  const lang = String(req.headers['accept-language'] ?? '').toLowerCase();
  return {
    ip: req.ip,
    userAgent: typeof req.headers['user-agent'] === 'string' ? req.headers['user-agent'] : null,
    locale: lang.startsWith('ru') ? 'ru' : 'en',
  };
}

function bearer(req: FastifyRequest): string | null {
  const h = req.headers.authorization;
  if (typeof h !== 'string') return null;
  const m = /^Bearer\s+(\S+)$/i.exec(h);
  return m?.[1] ?? null;
}

/** A multipart body as plain arguments: fields as strings, each file checked against its declared upload kind. */
function multipartBody(req: FastifyRequest, cmd: Command): Promise<Record<string, unknown>> {
  return multipartArgs(req, uploadFields(cmd.args));
}

/** Maps database and framework failures onto the catalogue; anything unknown is a logged 500. */
function toReply(
  err: unknown,
  req: FastifyRequest,
): { status: number; body: ReturnType<typeof errorBody>; headers?: Record<string, string> } {
  if (err instanceof AppError) return { status: err.status, body: err.body };
  const fault = databaseFaultReply(err, req.log);
  if (fault) return fault;
  const e = err as { code?: string; statusCode?: number; message?: string };
  if (e.code === '23505') return { status: 409, body: errorBody('value_not_unique') };
  if (e.code === '23503') return { status: 400, body: errorBody('invalid_data_sent') };
  if (e.code === '22P02' || e.code === '22003' || e.code === '22001')
    return { status: 400, body: errorBody('wrong_parameters') };
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || e.code === 'FST_REQ_FILE_TOO_LARGE' || e.statusCode === 413)
    return { status: 413, body: errorBody('payload_too_large') };
  if (e.statusCode && e.statusCode >= 400 && e.statusCode < 500)
    return { status: e.statusCode, body: errorBody('invalid_data_sent') };
  req.log.error({ err }, 'unexpected error');
  return { status: 500, body: errorBody('internal_error') };
}

/** How long closing waits for the replies under way before it ends their connections. */
const HTTP_CLOSE_GRACE_MS = 5_000;

/**
 * Stops taking requests and lets the replies under way finish, but not for ever: a client that stopped
 * reading a large reply (a console bundle, an export) holds its connection's write open, and the close with
 * it. After the grace the connections left are ended.
 */
async function closeHttp(app: FastifyInstance): Promise<void> {
  const timer = setTimeout(() => app.server.closeAllConnections(), HTTP_CLOSE_GRACE_MS);
  try {
    await app.close();
  } finally {
    clearTimeout(timer);
  }
}

export async function createServer(config: Config): Promise<LintelServer> {
  const logger = pino(
    {
      level: config.logLevel,
      redact: { paths: REDACT, censor: '[redacted]' },
    },
    config.logStream ?? process.stdout,
  );
  const app = Fastify({
    loggerInstance: logger as unknown as FastifyBaseLogger,
    bodyLimit: 1024 * 1024,
    trustProxy: config.trustProxy,
    // requests are logged by route pattern, never by the raw URL: links carry tokens
    logController: new LogController({ disableRequestLogging: true }),
  });
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    waitMs: config.dbWaitMs,
    onConnectionLost: (err) =>
      app.log.warn({ err: err.message }, 'database connection lost; the next query opens a new one'),
  });
  await migrate(database);
  const clock = config.clock ?? systemClock;
  const events = new EventBus();
  // the callers of requests, remembered between them; forgotten on any change (engine/request-cache.ts)
  const authCache = new RequestCache({
    ttlMs: config.authCacheMs,
    needsListener: database.kind === 'postgres',
  });
  if (database.listen) await database.listen(AUTH_CHANGED_CHANNEL, () => authCache.clear());
  const estimates = new RequestCache({ ttlMs: config.authCacheMs, needsListener: false });
  // one instance on PGlite: in process; several on PostgreSQL: NOTIFY, or Redis when REDIS_URL is set
  const fanout: Fanout = config.redisUrl ? 'redis' : database.kind === 'postgres' ? 'postgres' : 'local';
  const outbox = new EventOutbox({
    db: database.db,
    kind: database.kind,
    databaseUrl: config.databaseUrl,
    fanout,
    redisUrl: config.redisUrl,
    onAuthChanged: () => authCache.clear(),
    onListening: (on) => authCache.setListening(on),
    bus: events,
    clock,
    log: app.log,
  });
  const jobs = new JobQueue({
    db: database.db,
    kind: database.kind,
    databaseUrl: config.databaseUrl,
    clock,
    log: app.log,
    settings: config.jobs,
    around: (w) => outbox.unit(w),
  });
  const mailer = createMailer({
    db: database.db,
    log: app.log,
    smtpUrl: config.smtpUrl,
    from: config.mailFrom,
    jobs,
    clock,
  });
  const context: ServerContext = {
    config,
    database,
    db: database.db,
    log: app.log,
    mailer,
    events,
    clock,
    jobs,
    outbox,
    authCache,
    estimates,
    devices: undefined as unknown as DeviceGateway,
  };
  context.devices = new DeviceGateway(context);
  const sockets = new RealtimeSockets(context, config.websocket);
  context.sockets = sockets;
  defineDeviceTaskJob(context);
  defineBrokerAccountJobs(context);
  defineBackupJobs(context);
  jobs.define('events.prune', { run: async () => void (await outbox.prune()) });
  const retention = defineRetentionJobs({
    db: database.db,
    jobs,
    clock,
    stores: journals,
    configured: config.retentionDays,
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

  // each request is one borrower of the embedded database: its first wait is bounded, its later ones go first
  // (not the websocket: a socket lives for hours and must not hold a place among the requests)
  app.addHook('preHandler', (req, reply, done) =>
    req.routeOptions.url === WS_ROUTE ? done() : asDatabaseRequest(reply, done),
  );
  app.addHook('onResponse', async (req, reply) => {
    req.log.info(
      {
        method: req.method,
        route: req.routeOptions.url ?? '(no route)',
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
      },
      'request',
    );
  });

  // security headers (CSP, no framing, nosniff, no referrer) on the console, /api and /storage/
  await app.register(fastifyHelmet, helmetOptions);
  // a body is JSON or multipart: Fastify's text/plain parser would hand a route a string; without it any other
  // content type is a 415
  app.removeContentTypeParser('text/plain');
  // streamed imports: an NDJSON body reaches its handler as a stream (engine/bulk-import.ts)
  acceptNdjson(app);
  // uploads: each request's file limits come from its command's upload kinds (storage/uploads.ts)
  await app.register(fastifyMultipart, { limits: { fileSize: 5 * 1024 * 1024, files: 1, fields: 20 } });
  fs.mkdirSync(config.storageDir, { recursive: true });
  await app.register(fastifyStatic, {
    root: config.storageDir,
    prefix: '/storage/',
    decorateReply: false,
    index: false,
    setHeaders: storageHeaders,
  });

  app.setErrorHandler((err, req, reply) => {
    const { status, body, headers } = toReply(err, req);
    void reply
      .status(status)
      .headers(headers ?? {})
      .send(body);
  });

  registerRateLimits(app, context);
  await sockets.register(app);
  for (const cmd of registry.values()) {
    const handler = (handlers as Record<string, Handler<Command>>)[cmd.id];
    if (!handler) throw new Error(`no handler for ${cmd.id}`);
    app.route({
      method: cmd.http.method,
      url: `/api/v0${cmd.http.path}`,
      handler: async (req: FastifyRequest, reply: FastifyReply) => {
        const caller = callerOf(req);
        // a person by the bearer token; a device (what it pushes over HTTP) by its login and password
        const principal: Principal =
          cmd.access === 'session'
            ? await authenticateBearer(context, bearer(req))
            : cmd.access === 'device'
              ? await authenticateDevice(context, req.headers.authorization)
              : { kind: 'anonymous' };
        if (cmd.access !== 'public' && principal.kind === 'anonymous') {
          // a device the platform does not know, calling in: noted in the pool for an installer to adopt
          if (cmd.id === 'device_gateway.heartbeat')
            await notePoolContact(context, req.headers.authorization, req.ip, req.body);
          return reply.status(401).send(unauthenticatedBody());
        }
        const body = req.isMultipart() ? await multipartBody(req, cmd) : req.body;
        if (body !== undefined && body !== null && (typeof body !== 'object' || Array.isArray(body)))
          throw new AppError('invalid_data_sent');
        // query, then body, then path: raw callers may put flags like `gently` in the query (spec) or the body
        const input = {
          ...(req.query as object),
          ...((body as object | undefined) ?? {}),
          ...((req.params as object | undefined) ?? {}),
        };
        const result = await dispatch(context, cmd, input, principal, { caller, reply });
        // an export: the body is written as it is read, and stops when the client goes away
        if (result instanceof StreamedReply)
          return reply.type(result.contentType).header('cache-control', 'no-store').send(result.body);
        return reply.send(result);
      },
    });
  }

  const webDir =
    config.webDir && fs.existsSync(path.join(config.webDir, 'index.html'))
      ? path.resolve(config.webDir)
      : null;
  if (webDir) await app.register(fastifyStatic, { root: webDir, wildcard: false, index: ['index.html'] });
  app.setNotFoundHandler((req, reply) => {
    if (req.url.startsWith('/api/') || req.url.startsWith('/storage/'))
      return reply.status(404).send(errorBody('item_not_found'));
    // client routes of the console fall back to index.html
    if (webDir && req.method === 'GET') return reply.type('text/html').sendFile('index.html');
    return reply.status(404).send(errorBody('item_not_found'));
  });

  // the long-lived parts, started in this order and stopped in reverse; the configuration picks which run
  let address = '';
  const available: Record<string, ServerModule> = {
    events: { name: 'events', start: () => outbox.start(), stop: () => outbox.stop() },
    jobs: {
      name: 'jobs',
      start: async () => {
        await jobs.start();
        // old outbox rows go once a day, whichever instance comes first
        await jobs.enqueue(
          database.db,
          'events.prune',
          {},
          { idempotencyKey: `events.prune:${clock.now().toISOString().slice(0, 10)}` },
        );
        await retention.enqueueToday();
      },
      stop: () => jobs.stop(),
    },
    // the device gateway: the embedded MQTT broker (or MQTT_URL's), devices' pushes, the offline sweep
    devices: { name: 'devices', start: () => context.devices.start(), stop: () => context.devices.stop() },
    // the sockets close (1001) before the HTTP server stops: clients reconnect to another instance or later
    websocket: {
      name: 'websocket',
      start: () => sockets.start(),
      stop: () => sockets.stop(),
    },
    // closing waits for the requests in flight
    http: {
      name: 'http',
      start: async () => void (address = await app.listen({ port: config.port, host: config.host })),
      stop: () => closeHttp(app),
    },
  };
  const unknown = config.modules.filter((m) => !available[m]);
  if (unknown.length)
    throw new Error(
      `unknown server modules: ${unknown.join(', ')} (known: ${Object.keys(available).join(', ')})`,
    );
  if (config.modules.includes('websocket') && !config.modules.includes('http'))
    throw new Error('the websocket module is served by the http module: add http to LINTEL_MODULES');
  // the websocket module stops before http whatever the order given, so its sockets close with 1001 first
  const order = config.modules.filter((m) => m !== 'websocket');
  if (config.modules.includes('websocket')) order.splice(order.indexOf('http') + 1, 0, 'websocket');
  const lifecycle = new Lifecycle(order.map((m) => available[m]!));

  return {
    app,
    context,
    generatedAdminPassword: boot.generatedPassword,
    async listen() {
      await lifecycle.start();
      return address;
    },
    async close() {
      await lifecycle.stop((name, err) =>
        app.log.error({ module: name, err: (err as Error)?.message }, 'module did not stop cleanly'),
      );
      await app.close();
      await database.close();
    },
  };
}
