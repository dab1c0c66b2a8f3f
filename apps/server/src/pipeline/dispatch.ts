import type { FastifyReply } from 'fastify';
import type { Command } from '@lintel/commands';
import type { AuthInfo, CallerInfo, ServerContext } from '../context';
import type { Handler, HandlerContext } from '../http/handler';
import { handlers } from '../handlers';
import { checkGates as checkCommandGates } from '../licensing/gates';
import { AppError, parseInput } from '../errors';
import { authOf, isGated, type Principal } from './principal';
import { StreamedReply } from '../engine/export';

/** The caller a non-HTTP principal presents (no address, no browser). */
export const internalCaller: CallerInfo = { ip: '127.0.0.1', userAgent: null, locale: 'en' };

/** The command's gates for this caller (permission, then licence): the one evaluator of @lintel/core. */
export function checkGates(
  app: ServerContext,
  cmd: Command,
  auth: AuthInfo,
  caller: CallerInfo,
): Promise<void> {
  return checkCommandGates(app, auth, cmd, caller);
}

export class UnauthenticatedError extends Error {
  constructor() {
    super('unauthenticated');
  }
}

/**
 * The one request pipeline, for every caller (HTTP, the websocket, MQTT, jobs, the system):
 * authenticated principal → gates (permission, licence) → arguments parsed by the command's schema →
 * handler → (in development and tests) the result checked against the command's result schema.
 * Events the handler emitted are delivered once it is done, if their transactions committed.
 */
export async function dispatch(
  app: ServerContext,
  cmd: Command,
  input: unknown,
  principal: Principal,
  opts: { caller?: CallerInfo; reply?: FastifyReply } = {},
): Promise<unknown> {
  const handler = (handlers as Record<string, Handler<Command>>)[cmd.id];
  if (!handler) throw new AppError('item_not_found');
  const caller = opts.caller ?? internalCaller;
  const auth = authOf(principal);
  if (cmd.access === 'session') {
    if (!auth) throw new UnauthenticatedError();
    if (isGated(principal)) await checkGates(app, cmd, auth, caller);
  }
  // what devices push is theirs alone to call, and a device calls nothing else that needs a caller
  if (cmd.access === 'device' && principal.kind !== 'device') throw new UnauthenticatedError();
  const args = parseInput(cmd.args, input ?? {});
  const ctx: HandlerContext = {
    app,
    caller,
    auth: cmd.access === 'session' ? auth : null,
    reply: opts.reply,
    principal,
  };
  let result: unknown;
  try {
    result = await app.outbox.unit(() => handler(ctx, args));
  } finally {
    // a command that may have changed a session, a role or someone's groups: this instance forgets every
    // caller it remembered before its reply goes out (other instances hear it from the database's triggers).
    // What devices push (heartbeats, logs: a thousand a second in a building) changes none of these.
    if (cmd.http.method !== 'GET' && cmd.access !== 'device') app.authCache.clear();
  }
  // a streamed reply (an export) checks each of its rows as it writes them
  if (app.config.checkResults && !(result instanceof StreamedReply)) {
    const checked = cmd.result.safeParse(result);
    if (!checked.success) throw new ResultShapeError(cmd.id, checked.error.message);
  }
  return result;
}

/** A handler answered with something its command does not declare: a server defect (caught in tests). */
export class ResultShapeError extends Error {
  constructor(
    readonly command: string,
    detail: string,
  ) {
    super(`${command}: result does not match the command's result schema: ${detail}`);
  }
}
