import {
  ApiClient,
  fieldErrors,
  MemorySessionStore,
  type SessionStore,
  type StoredSession,
} from '@lintel/core';
import { getCommand, type CommandById, type CommandId } from '@lintel/commands';
import fs from 'node:fs';
import path from 'node:path';
import { ConfigStore, configDir } from './config-store';
import type { CliContext } from './context';
import { CliError } from './errors';
import { ExitCode } from './exit-codes';
import { liftConnectionBounds } from './long-requests';

export const DEFAULT_SERVER = 'http://localhost:8080';

/**
 * The server `lintel login` proposes when nothing names one: a Lintel server running on this machine says
 * where it listens in `local-server.json` beside the contexts (apps/server/src/local-server.ts); a file of a
 * process that has gone is ignored. Then `PORT`, as `npm start` reads it; then the default.
 */
export function localServer(env: NodeJS.ProcessEnv): string {
  try {
    const held = JSON.parse(fs.readFileSync(path.join(configDir(env), 'local-server.json'), 'utf8')) as {
      url?: unknown;
      pid?: unknown;
    };
    if (typeof held.url === 'string' && typeof held.pid === 'number' && alive(held.pid)) return held.url;
  } catch {
    // no local server said where it is
  }
  const port = Number(env.PORT);
  return Number.isInteger(port) && port > 0 && port < 65536 ? `http://localhost:${port}` : DEFAULT_SERVER;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it runs, as another user
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** `host:port` or a full URL, as an origin (plus a path prefix, if any) without the trailing slash. */
export function normaliseServer(input: string): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(input) ? input : `http://${input}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new CliError('bad_server_url', ExitCode.usage, { server: input });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new CliError('bad_server_url', ExitCode.usage, { server: input });
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

export function apiClient(server: string, session: SessionStore | StoredSession | null = null): ApiClient {
  const store = session && 'get' in session ? session : new MemorySessionStore(session);
  return new ApiClient({ baseUrl: server, store, beforeFetch: liftConnectionBounds });
}

export interface SignedIn {
  api: ApiClient;
  server: string;
  /** the context in the config file; null when the token comes from LINTEL_TOKEN */
  context: string | null;
}

/**
 * The session commands run in: LINTEL_TOKEN (with LINTEL_SERVER, else the current context's server) when
 * set, else the current context of the config file. Neither: exit 3.
 */
export function signedIn(ctx: CliContext, config = new ConfigStore(ctx.env)): SignedIn {
  const token = ctx.env.LINTEL_TOKEN;
  if (token) {
    const server = normaliseServer(
      ctx.env.LINTEL_SERVER || config.current()?.context.server || DEFAULT_SERVER,
    );
    const project = { id: 0, uid: '', name: '', description: '' };
    return { api: apiClient(server, { token, refresh: '', project }), server, context: null };
  }
  const current = config.current();
  if (!current?.context.token) throw new CliError('not_signed_in', ExitCode.signedOut);
  return {
    api: apiClient(current.context.server, config.sessionStore(current.name)),
    server: current.context.server,
    context: current.name,
  };
}

export type ArgsOf<Id extends CommandId> = Parameters<CommandById<Id>['run']>[1];
export type ResultOf<Id extends CommandId> = Awaited<ReturnType<CommandById<Id>['run']>>;

/**
 * Runs a command of the registry, the one way the CLI reaches the API. Arguments are checked first with
 * the command's own schema, so a bad value is a usage error (exit 2) naming the fields, before any request.
 */
export function execute<Id extends CommandId>(
  api: ApiClient,
  id: Id,
  args: ArgsOf<Id>,
): Promise<ResultOf<Id>> {
  const cmd = getCommand(id) as unknown as CommandById<Id> & {
    run(ctx: { api: ApiClient }, args: ArgsOf<Id>): Promise<ResultOf<Id>>;
  };
  const checked = cmd.args.safeParse(args);
  if (!checked.success) {
    throw new CliError(
      'check_fields_data',
      ExitCode.usage,
      { fields: fieldErrors(checked.error, args) },
      'errors',
    );
  }
  return cmd.run({ api }, args);
}
