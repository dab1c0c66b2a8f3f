import fs from 'node:fs';
import path from 'node:path';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import fastifyStatic from '@fastify/static';
import fastifyMultipart from '@fastify/multipart';
import pino from 'pino';
import { registry, type Command } from '@lintel/commands';
import { errorBody, unauthenticatedBody } from '@lintel/core';
import type { Config } from '../config';
import type { AuthInfo, CallerInfo, ServerContext } from '../context';
import { openDatabase, migrate } from '../db/database';
import { createMailer } from '../mail/mailer';
import { EventBus } from '../realtime/bus';
import { authenticate, pruneSessions } from '../auth/sessions';
import { audit } from '../audit/audit';
import { assertLicensed } from '../licensing/licence';
import { bootstrap } from '../bootstrap';
import { AppError, parseInput } from '../errors';
import { handlers } from '../handlers';
import type { Handler, HandlerContext } from './handler';

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

function hasGate(auth: AuthInfo, cmd: Command): boolean {
  const any = cmd.gates.anyPermission;
  return !any || any.length === 0 || any.some((p) => auth.permissions.has(p));
}

/** A multipart body as plain arguments: fields as strings, the file as a Blob (as the command declares it). */
async function multipartBody(req: FastifyRequest): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for await (const part of req.parts()) {
    if (part.type === 'file') {
      const data = await part.toBuffer();
      if (part.file.truncated) throw new AppError('payload_too_large');
      out[part.fieldname] = new Blob([new Uint8Array(data)], { type: part.mimetype });
    } else out[part.fieldname] = part.value;
  }
  return out;
}

/** Maps database and framework failures onto the catalogue; anything unknown is a logged 500. */
function toReply(err: unknown, req: FastifyRequest): { status: number; body: ReturnType<typeof errorBody> } {
  if (err instanceof AppError) return { status: err.status, body: err.body };
  const e = err as { code?: string; statusCode?: number; message?: string };
  if (e.code === '23505') return { status: 409, body: errorBody('value_not_unique') };
  if (e.code === '23503') return { status: 400, body: errorBody('invalid_data_sent') };
  if (e.code === '22P02' || e.code === '22003' || e.code === '22001') return { status: 400, body: errorBody('wrong_parameters') };
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || e.code === 'FST_REQ_FILE_TOO_LARGE' || e.statusCode === 413) return { status: 413, body: errorBody('payload_too_large') };
  if (e.statusCode && e.statusCode >= 400 && e.statusCode < 500) return { status: e.statusCode, body: errorBody('invalid_data_sent') };
  req.log.error({ err }, 'unexpected error');
  return { status: 500, body: errorBody('internal_error') };
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
    onConnectionLost: (err) => app.log.warn({ err: err.message }, 'database connection lost; the next query opens a new one'),
  });
  await migrate(database);
  const mailer = createMailer({ db: database.db, log: app.log, smtpUrl: config.smtpUrl, from: config.mailFrom });
  const context: ServerContext = { config, database, db: database.db, log: app.log, mailer, events: new EventBus() };
  const boot = await bootstrap(database.db, { adminLogin: config.adminLogin, adminPassword: config.adminPassword });
  await pruneSessions(database.db);

  app.addHook('onResponse', async (req, reply) => {
    req.log.info(
      { method: req.method, route: req.routeOptions.url ?? '(no route)', status: reply.statusCode, ms: Math.round(reply.elapsedTime) },
      'request',
    );
  });

  // uploads: one file of at most 5 MiB per request (avatars, logos)
  await app.register(fastifyMultipart, { limits: { fileSize: 5 * 1024 * 1024, files: 1, fields: 20 } });
  fs.mkdirSync(config.storageDir, { recursive: true });
  await app.register(fastifyStatic, { root: config.storageDir, prefix: '/storage/', decorateReply: false, index: false });

  app.setErrorHandler((err, req, reply) => {
    const { status, body } = toReply(err, req);
    void reply.status(status).send(body);
  });

  for (const cmd of registry.values()) {
    const handler = (handlers as Record<string, Handler<Command>>)[cmd.id];
    if (!handler) throw new Error(`no handler for ${cmd.id}`);
    app.route({
      method: cmd.http.method,
      url: `/api/v0${cmd.http.path}`,
      handler: async (req: FastifyRequest, reply: FastifyReply) => {
        const caller = callerOf(req);
        let auth: AuthInfo | null = null;
        if (cmd.access === 'session') {
          const token = bearer(req);
          auth = token ? await authenticate(context, token) : null;
          if (!auth) return reply.status(401).send(unauthenticatedBody());
          if (!hasGate(auth, cmd)) {
            await audit(context.db, { projectId: auth.projectId, userId: auth.userId, action: 'permission_denied', entity: cmd.id, ip: caller.ip });
            throw new AppError('method_prohibited');
          }
          if (cmd.gates.licence?.length) {
            const own = await context.db.selectFrom('user_domains').select('domain_id').where('user_id', '=', auth.userId).execute();
            await assertLicensed(context.db, auth.projectId, own.map((d) => d.domain_id), cmd.gates.licence);
          }
        }
        const body = req.isMultipart() ? await multipartBody(req) : req.body;
        if (body !== undefined && body !== null && (typeof body !== 'object' || Array.isArray(body))) throw new AppError('invalid_data_sent');
        // query, then body, then path: raw callers may put flags like `gently` in the query (spec) or the body
        const input = { ...(req.query as object), ...((body as object | undefined) ?? {}), ...((req.params as object | undefined) ?? {}) };
        const args = parseInput(cmd.args, input);
        const ctx: HandlerContext = { app: context, caller, auth, reply };
        const result = await handler(ctx, args);
        return reply.send(result);
      },
    });
  }

  const webDir = config.webDir && fs.existsSync(path.join(config.webDir, 'index.html')) ? path.resolve(config.webDir) : null;
  if (webDir) await app.register(fastifyStatic, { root: webDir, wildcard: false, index: ['index.html'] });
  app.setNotFoundHandler((req, reply) => {
    if (req.url.startsWith('/api/') || req.url.startsWith('/storage/')) return reply.status(404).send(errorBody('item_not_found'));
    // client routes of the console fall back to index.html
    if (webDir && req.method === 'GET') return reply.type('text/html').sendFile('index.html');
    return reply.status(404).send(errorBody('item_not_found'));
  });

  return {
    app,
    context,
    generatedAdminPassword: boot.generatedPassword,
    async listen() {
      return app.listen({ port: config.port, host: config.host });
    },
    async close() {
      await app.close();
      await database.close();
    },
  };
}
