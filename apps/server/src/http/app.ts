import fs from 'node:fs';
import path from 'node:path';
import type { Socket } from 'node:net';
import Fastify, {
  LogController,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import fastifyStatic from '@fastify/static';
import fastifyMultipart from '@fastify/multipart';
import helmet from 'helmet';
import { registry, uploadFields, type Command } from '@lintel/commands';
import { errorBody, unauthenticatedBody } from '@lintel/core';
import type { CallerInfo, ServerContext } from '../context';
import { databaseFaultReply } from '../db/faults';
import { asDatabaseRequest, outsideRequest } from '../db/pglite-pool';
import { AppError } from '../errors';
import { registerRateLimits } from '../security/rate-limit';
import { WS_ROUTE } from '../realtime/websocket';
import { dispatch } from '../pipeline/dispatch';
import { authenticateBearer, authenticateSip, metricsScraper, type Principal } from '../pipeline/principal';
import { authenticateDeviceThrottled } from '../auth/device-throttle';
import { StreamedReply } from '../pipeline/streamed-reply';
import { notePoolContact } from '../devices/pool';
import { defineModule, type ServerModule } from '../modules/lifecycle';
import { multipartArgs } from '../storage/uploads';
import { NDJSON } from '../engine/bulk-import';
import { helmetOptionsFor, storageHeaders } from './security';
import { wsIsPlain } from '../sip/config';
import { isPicturePath, reachesDir, servePicture } from './pictures';
import { FACES_DIR } from '../storage/files';
import { PICTURES_DIR } from '../devices/pictures';

/**
 * The HTTP transport: one route per registry command (the bearer token or a device's Basic credentials
 * become the principal, query, body and path the input, then `dispatch`), the console's files, /storage/,
 * and the websocket's route. It knows no command: a reply is the handler's result as JSON, or a
 * `StreamedReply` sent as it is read.
 */
export interface HttpTransport {
  app: FastifyInstance;
  /** the module `http`: listens on start, stops taking requests and lets those under way finish on stop */
  module: ServerModule;
  /** where it listens, once started */
  address(): string;
}

/** Where an NDJSON body waits for its handler (Fastify hands it over untouched, unparsed). */
const STREAM = Symbol('streamed body');

/** The body of a request sent as NDJSON, as the stream it is; anything else is no stream. */
function bodyStream(body: unknown): AsyncIterable<Buffer | string> | undefined {
  return typeof body === 'object' && body !== null && STREAM in body
    ? (body as { [STREAM]: AsyncIterable<Buffer | string> })[STREAM]
    : undefined;
}

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

/** The multipart bodies read by the preValidation hook, by request; the command of each API route. */
const multipartBodies = new WeakMap<FastifyRequest, Record<string, unknown>>();
const bodyDoneAt = new WeakMap<FastifyRequest, number>();
const commandOfRoute = new Map<string, Command>();

const hasBody = (req: FastifyRequest) =>
  req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;

/**
 * At most `max` open connections from one address (0: no limit); the next is closed at once, before it is
 * read. Behind a reverse proxy every connection comes from the proxy: the limit is the proxy's to keep.
 */
function limitConnectionsPerAddress(app: FastifyInstance, max: number): void {
  if (max <= 0) return;
  const open = new Map<string, number>();
  app.server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const n = open.get(address) ?? 0;
    if (n >= max) {
      socket.destroy();
      return;
    }
    open.set(address, n + 1);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left > 0) open.set(address, left);
      else open.delete(address);
    });
  });
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
  // invalid text, out of range, too long, a date the database cannot hold (year 0000)
  if (
    e.code === '22P02' ||
    e.code === '22003' ||
    e.code === '22001' ||
    e.code === '22008' ||
    e.code === '22007'
  )
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

/** A request whose body is a stream its handler reads (NDJSON), at the server's pace. */
function streamedRequest(req: FastifyRequest): boolean {
  return (
    String(req.headers['content-type'] ?? '')
      .split(';')[0]!
      .trim()
      .toLowerCase() === NDJSON
  );
}

/**
 * A request must arrive whole — its body too — within `ms` of its headers, or its connection is closed with a
 * 408: a client that sends a body a byte at a time holds nothing for ever (issue 20, item 1). Node's own
 * `requestTimeout` did this for every request; but a streamed body (NDJSON: a one-request import, read at the
 * server's pace while it checks and inserts) lasts as long as its import, and a 1,000,000-row users import
 * was cut at 120 s. A streamed body is bounded by the idle timeout alone: one that stops coming is closed
 * after `idleTimeoutMs`, as any quiet connection is. Its route is authenticated and gated (imports only).
 */
function boundWholeRequests(app: FastifyInstance, ms: number): void {
  if (ms <= 0) return;
  const timers = new WeakMap<FastifyRequest, NodeJS.Timeout>();
  const stop = (req: FastifyRequest) => {
    clearTimeout(timers.get(req));
    timers.delete(req);
  };
  app.addHook('onRequest', (req, reply, done) => {
    // the websocket's upgrade is no request body to wait for (its socket lives for hours)
    if (!streamedRequest(req) && req.routeOptions.url !== WS_ROUTE) {
      const timer = setTimeout(() => {
        timers.delete(req);
        const socket = req.raw.socket;
        if (reply.raw.headersSent || !socket) return;
        socket.end('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
        socket.destroySoon();
      }, ms);
      timers.set(req, timer);
      reply.raw.once('close', () => stop(req));
    }
    done();
  });
  // here the body has arrived whole (a multipart one too: read in preValidation)
  app.addHook('preHandler', (req, _reply, done) => {
    stop(req);
    done();
  });
}

export async function createHttp(context: ServerContext): Promise<HttpTransport> {
  const { config } = context;
  const app = Fastify({
    loggerInstance: context.log,
    bodyLimit: 1024 * 1024,
    trustProxy: config.trustProxy,
    // a request must arrive whole within requestTimeoutMs (`boundWholeRequests` below, not Node's own check),
    // and a connection quiet for connectionTimeout is closed: a client that sends the first bytes of a body and
    // stops holds nothing for ever (issue 20, item 1)
    requestTimeout: 0,
    connectionTimeout: config.http.idleTimeoutMs,
    // requests are logged by route pattern, never by the raw URL: links carry tokens
    logController: new LogController({ disableRequestLogging: true }),
  });
  limitConnectionsPerAddress(app, config.http.maxConnectionsPerAddress);
  boundWholeRequests(app, config.http.requestTimeoutMs);

  // a multipart body is read whole before any hook touches the database (the rate limits write to it): a
  // client that stops half-way through a body must not hold a place of the embedded database (issue 20)
  app.addHook('preValidation', async (req) => {
    const cmd = commandOfRoute.get(`${req.method} ${req.routeOptions.url}`);
    if (cmd && req.isMultipart()) multipartBodies.set(req, await multipartBody(req, cmd));
    if (hasBody(req)) bodyDoneAt.set(req, performance.now());
  });
  // each request is one borrower of the embedded database: its first wait is bounded, its later ones go first
  // (not the websocket: a socket lives for hours and must not hold a place among the requests); the bound
  // counts from when its body had arrived, so a slow upload is not refused for the time it took to send
  app.addHook('preHandler', (req, reply, done) => {
    if (req.routeOptions.url === WS_ROUTE) return done();
    // the idle timeout is for a connection that stops sending; once the request is here whole, the server is
    // the one working, and a backup's apply may take up to an hour without a byte on the wire: the connection's
    // timeout is off until the reply starts (it was cut at 30 s, and the client saw "fetch failed"). A streamed
    // body (NDJSON) is not here yet: the idle timeout bounds it until it ends (the only bound it has)
    if (streamedRequest(req)) req.raw.once('end', () => req.raw.socket?.setTimeout(0));
    else req.raw.socket?.setTimeout(0);
    // only the embedded database takes its borrowers in turn: on PostgreSQL the pool does, and the request's
    // scope (a listener, an async context) would be read by nothing
    if (context.database.kind !== 'pglite') return done();
    asDatabaseRequest(reply, done, bodyDoneAt.get(req));
  });
  // a reply under way is bounded again: a client that stops reading a download does not hold it for ever
  app.addHook('onSend', async (req) => {
    if (req.routeOptions.url !== WS_ROUTE) req.raw.socket?.setTimeout(config.http.idleTimeoutMs);
  });
  app.addHook('onResponse', async (req, reply) => {
    context.metrics.request(
      req.method,
      req.routeOptions.url ?? '(no route)',
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
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
  const securityHeaders = helmet(
    helmetOptionsFor(
      config.sip.mode === 'off' ? null : { wsPort: config.sip.wsPort, secure: !wsIsPlain(config.sip) },
    ),
  );
  app.addHook('onRequest', (req, reply, done) =>
    securityHeaders(req.raw, reply.raw, done as (err?: unknown) => void),
  );
  // a body is JSON or multipart: Fastify's text/plain parser would hand a route a string; without it any other
  // content type is a 415
  app.removeContentTypeParser('text/plain');
  // streamed imports: an NDJSON body reaches its handler as a stream (`ctx.body`), never buffered, so the
  // body limit does not apply (each line is limited instead: engine/bulk-import.ts)
  app.addContentTypeParser(NDJSON, (_req, payload, done) => done(null, { [STREAM]: payload }));
  // uploads: each request's file limits come from its command's upload kinds (storage/uploads.ts)
  await app.register(fastifyMultipart, { limits: { fileSize: 5 * 1024 * 1024, files: 1, fields: 20 } });
  fs.mkdirSync(config.storageDir, { recursive: true });
  await app.register(fastifyStatic, {
    root: config.storageDir,
    prefix: '/storage/',
    decorateReply: false,
    index: false,
    setHeaders: storageHeaders,
    // event pictures are not public: their own route below checks who asks; face photos neither
    // (`identifier.photo` answers whoever may read the identifier)
    allowedPath: (pathname) => !isPicturePath(pathname) && !reachesDir(pathname, FACES_DIR),
  });
  app.get(`/storage/${PICTURES_DIR}/:name`, (req, reply) => servePicture(context, req, reply));

  app.setErrorHandler((err, req, reply) => {
    const { status, body, headers } = toReply(err, req);
    void reply
      .status(status)
      .headers(headers ?? {})
      .send(body);
  });

  registerRateLimits(app, context);
  await context.sockets.register(app);
  for (const cmd of registry.values()) commandOfRoute.set(`${cmd.http.method} /api/v0${cmd.http.path}`, cmd);
  for (const cmd of registry.values()) {
    if (!(context.handlers as Record<string, unknown>)[cmd.id]) throw new Error(`no handler for ${cmd.id}`);
    app.route({
      method: cmd.http.method,
      url: `/api/v0${cmd.http.path}`,
      handler: async (req: FastifyRequest, reply: FastifyReply) => {
        const caller = callerOf(req);
        // a person by the bearer token; a device (what it pushes over HTTP) by its login and password
        // (a device's password guesses are throttled like people's logins: auth/device-throttle.ts)
        // — as device work, outside people's requests: on the embedded database a device's call neither
        // takes nor holds one of the requests' places while it waits its turn in the devices' queue
        const asDevice =
          cmd.access === 'device'
            ? await outsideRequest(() =>
                authenticateDeviceThrottled(context, req.headers.authorization, req.ip),
              )
            : null;
        const principal: Principal =
          cmd.access === 'session'
            ? (metricsScraper(config.metricsToken, cmd, bearer(req)) ??
              (await authenticateBearer(context, bearer(req))))
            : cmd.access === 'sip'
              ? await authenticateSip(context, req.headers.authorization)
              : (asDevice?.principal ?? { kind: 'anonymous' });
        if (cmd.access !== 'public' && principal.kind === 'anonymous') {
          // a device the platform does not know, calling in: noted in the pool for an installer to adopt
          if (cmd.id === 'device_gateway.heartbeat' && asDevice?.unknown)
            await notePoolContact(context, req.headers.authorization, req.ip, req.body);
          return reply.status(401).send(unauthenticatedBody());
        }
        // an NDJSON body goes to the handler unread, as a stream; any other body is the command's arguments
        // (a multipart body was read whole before the hooks: multipartBodies)
        const stream = bodyStream(req.body);
        const body = stream ? undefined : req.isMultipart() ? multipartBodies.get(req) : req.body;
        if (body !== undefined && body !== null && (typeof body !== 'object' || Array.isArray(body)))
          throw new AppError('invalid_data_sent');
        // query, then body, then path: raw callers may put flags like `gently` in the query (spec) or the body
        const input = {
          ...(req.query as object),
          ...((body as object | undefined) ?? {}),
          ...((req.params as object | undefined) ?? {}),
        };
        // what a device pushes over HTTP takes its turn in the devices' fair queue, as over MQTT
        const result =
          principal.kind === 'device'
            ? await outsideRequest(() =>
                context.devices.admit(principal.serial, () =>
                  dispatch(context, cmd, input, principal, { caller, body: stream }),
                ),
              )
            : await dispatch(context, cmd, input, principal, { caller, body: stream });
        // an export or a report file: the body is written as it is read, and stops when the client goes away
        if (result instanceof StreamedReply) {
          void reply.type(result.contentType).header('cache-control', 'no-store');
          if (result.filename)
            void reply.header('content-disposition', `attachment; filename="${result.filename}"`);
          return reply.send(result.body);
        }
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

  let address = '';
  return {
    app,
    address: () => address,
    module: defineModule({
      name: 'http',
      start: async () => void (address = await app.listen({ port: config.port, host: config.host })),
      // closing waits for the requests in flight
      stop: () => closeHttp(app),
    }),
  };
}
