import type { z } from 'zod';
import type { Command } from '@lintel/commands';
import type { AuthInfo, CallerInfo, ServerContext } from '../context';
import { AppError } from '../errors';
import type { Principal } from './principal';

export interface HandlerContext {
  app: ServerContext;
  caller: CallerInfo;
  /** set for commands with access `session` */
  auth: AuthInfo | null;
  /**
   * The request's body as a stream, for a command that reads one as it arrives (an NDJSON import:
   * `streamedBody(ctx.body)`); absent otherwise. Whatever the transport, a handler sees no more of it.
   */
  body?: AsyncIterable<Buffer | string>;
  /** who the command runs for (pipeline/principal.ts) */
  principal: Principal;
}

export type Handler<C extends Command> = (
  ctx: HandlerContext,
  args: z.output<C['args']>,
) => Promise<z.input<C['result']>>;

/** The signed-in caller; the router guarantees it for `session` commands. */
export function signedIn(ctx: HandlerContext): AuthInfo {
  if (!ctx.auth) throw new AppError('method_prohibited');
  return ctx.auth;
}

import type { CommandById, CommandId, StreamReply } from '@lintel/commands';
import type { StreamedReply } from './streamed-reply';

/** The handler of a command whose reply is a stream (an export): it answers the stream to send. */
export type StreamHandler<C extends Command> = (
  ctx: HandlerContext,
  args: z.output<C['args']>,
) => Promise<StreamedReply>;

/** Every command's handler; the server's map must satisfy this, so a command without one fails the build. */
export type AllHandlers = {
  [K in CommandId]: CommandById<K> extends { stream: StreamReply }
    ? StreamHandler<CommandById<K>>
    : Handler<CommandById<K>>;
};
/** What one domain slice contributes. */
export type SomeHandlers = Partial<AllHandlers>;
