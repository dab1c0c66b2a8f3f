import type { z } from 'zod';
import type { Command } from '@lintel/commands';
import type { FastifyReply } from 'fastify';
import type { AuthInfo, CallerInfo, ServerContext } from '../context';
import { AppError } from '../errors';

export interface HandlerContext {
  app: ServerContext;
  caller: CallerInfo;
  /** set for commands with access `session` */
  auth: AuthInfo | null;
  reply: FastifyReply;
}

export type Handler<C extends Command> = (ctx: HandlerContext, args: z.output<C['args']>) => Promise<z.input<C['result']>>;

/** The signed-in caller; the router guarantees it for `session` commands. */
export function signedIn(ctx: HandlerContext): AuthInfo {
  if (!ctx.auth) throw new AppError('method_prohibited');
  return ctx.auth;
}

import type { CommandById, CommandId } from '@lintel/commands';

/** Every command's handler; the server's map must satisfy this, so a command without one fails the build. */
export type AllHandlers = { [K in CommandId]: Handler<CommandById<K>> };
/** What one domain slice contributes. */
export type SomeHandlers = Partial<AllHandlers>;
