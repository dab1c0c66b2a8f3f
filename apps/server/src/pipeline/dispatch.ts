import type { z, ZodType } from 'zod';
import type { Access, Command } from '@lintel/commands';
import type { Gate } from '@lintel/core';
import type { AuthInfo, CallerInfo, ServerContext } from '../context';
import type { Handler, HandlerContext } from './handler';
import { JobRefused, type JobKind } from '../jobs/define';
import type { JobRow } from '../jobs/queue';
import { checkGates as checkCommandGates } from '../licensing/gates';
import { AppError, parseInput } from '../errors';
import { authOf, isGated, jobPrincipal, userAuth, type Principal } from './principal';
import { StreamedReply } from './streamed-reply';

/** The caller a non-HTTP principal presents (no address, no browser). */
export const internalCaller: CallerInfo = { ip: '127.0.0.1', userAgent: null, locale: 'en' };

/** The command's gates for this caller (permission, then licence): the one evaluator of @lintel/core. */
export function checkGates(
  app: ServerContext,
  cmd: Pick<Command, 'id' | 'gates'>,
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
 * What the pipeline runs: a command of the registry, a job kind (jobs/define.ts), or a publish on a
 * websocket topic (realtime/topics.ts), each in the same shape.
 */
export interface Operation {
  id: string;
  access: Access;
  args: ZodType;
  gates: Gate;
  /** checked against the result in development and tests */
  result?: ZodType;
  /** whether it may change a session, a role or someone's groups (the remembered callers are forgotten) */
  changes: boolean;
}

export interface DispatchOptions {
  caller?: CallerInfo;
  /** the request's body as a stream, for a command that reads one (pipeline/handler.ts `body`) */
  body?: AsyncIterable<Buffer | string>;
}

/**
 * The one request pipeline, for every caller (HTTP, the websocket, MQTT, jobs, the system):
 * authenticated principal → gates (permission, licence) → arguments parsed by the command's schema →
 * handler → (in development and tests) the result checked against the command's result schema.
 * Events the handler emitted are delivered once it is done, if their transactions committed.
 */
export function dispatch(
  app: ServerContext,
  cmd: Command,
  input: unknown,
  principal: Principal,
  opts: DispatchOptions = {},
): Promise<unknown> {
  const handler = (app.handlers as Record<string, Handler<Command>>)[cmd.id];
  if (!handler) throw new AppError('item_not_found');
  const op: Operation = {
    id: cmd.id,
    access: cmd.access,
    args: cmd.args,
    gates: cmd.gates,
    result: cmd.result,
    // what devices push (heartbeats, logs: a thousand a second in a building) and what the SIP server asks
    // and tells (a call's route and events) change none of these
    changes: cmd.http.method !== 'GET' && cmd.access !== 'device' && cmd.access !== 'sip',
  };
  const run = dispatchOperation(app, op, handler, input, principal, opts);
  // what devices push, counted by command and outcome (metrics/metrics.ts)
  if (cmd.access === 'device')
    void run.then(
      () => app.metrics.deviceMessage(cmd.id, true),
      () => app.metrics.deviceMessage(cmd.id, false),
    );
  return run;
}

/**
 * A job through the pipeline: as the `job` principal acting for the user its kind names (read afresh: the
 * role's permissions now), its payload parsed by the kind's schema, the kind's gates checked. A job acting
 * for nobody passes no gates: its kind may declare none.
 */
export async function dispatchJob(app: ServerContext, kind: JobKind, job: JobRow): Promise<void> {
  let started = false;
  try {
    const payload = parseInput(kind.payload, job.payload);
    const actor = kind.actor?.(payload) ?? null;
    const auth = actor === null ? null : await userAuth(app, actor);
    const op: Operation = {
      id: kind.kind,
      access: kind.actor ? 'session' : 'public',
      args: kind.payload,
      gates: kind.gates ?? {},
      changes: true,
    };
    const handler = (ctx: HandlerContext, p: unknown) => {
      started = true;
      return kind.run(ctx, p, job);
    };
    await dispatchOperation(app, op, handler, job.payload, jobPrincipal(job.id, auth));
  } catch (err) {
    throw started ? err : new JobRefused(err);
  }
}

/** The pipeline itself, for an operation that is not a command of the registry (a job's kind, a publish). */
export async function dispatchOperation<A extends ZodType>(
  app: ServerContext,
  op: Operation & { args: A },
  handler: (ctx: HandlerContext, args: z.output<A>) => Promise<unknown>,
  input: unknown,
  principal: Principal,
  opts: DispatchOptions = {},
): Promise<unknown> {
  const caller = opts.caller ?? internalCaller;
  const auth = authOf(principal);
  if (op.access === 'session') {
    if (!auth) throw new UnauthenticatedError();
    if (isGated(principal)) await checkGates(app, op, auth, caller);
  }
  // what devices push is theirs alone to call, and a device calls nothing else that needs a caller
  if (op.access === 'device' && principal.kind !== 'device') throw new UnauthenticatedError();
  // and what the SIP server asks and tells is its alone
  if (op.access === 'sip' && principal.kind !== 'sip') throw new UnauthenticatedError();
  const args = parseInput(op.args, input ?? {});
  const ctx: HandlerContext = {
    app,
    caller,
    auth: op.access === 'session' ? auth : null,
    body: opts.body,
    principal,
  };
  let result: unknown;
  try {
    result = await app.outbox.unit(() => handler(ctx, args));
  } finally {
    // a command that may have changed a session, a role or someone's groups: this instance forgets every
    // caller it remembered before its reply goes out (other instances hear it from the database's triggers)
    if (op.changes) {
      app.authCache.clear();
      // and what the routing of calls read (a number, a forward rule, a user's number, a group…), which the
      // SIP server forgets too (the routes it keeps) before the reply says the change is made
      app.routeCache.clear();
      await app.sip.routesSettled();
    }
  }
  // a streamed reply (an export) checks each of its rows as it writes them
  if (op.result && app.config.checkResults && !(result instanceof StreamedReply)) {
    const checked = op.result.safeParse(result);
    if (!checked.success) throw new ResultShapeError(op.id, checked.error.message);
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
