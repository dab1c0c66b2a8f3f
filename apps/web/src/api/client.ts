import { ApiClient } from '@lintel/core';
import { getCommand, type CommandById, type CommandId } from '@lintel/commands';
import { BrowserSessionStore } from '../session/browser-session-store';

/** The one session store and API client of the console. */
export const sessionStore = new BrowserSessionStore();

let signedOutHandler: (() => void) | null = null;

/** The router installs what happens when the session is gone (refresh failed). */
export function onSignedOut(handler: () => void): void {
  signedOutHandler = handler;
}

export const api = new ApiClient({
  baseUrl: '',
  store: sessionStore,
  onSignedOut: () => signedOutHandler?.(),
});

export type ArgsOf<Id extends CommandId> = Parameters<CommandById<Id>['run']>[1];
export type ResultOf<Id extends CommandId> = Awaited<ReturnType<CommandById<Id>['run']>>;

/**
 * The console's API client with an abort signal on every request it makes. It is the same client (same
 * session, same shared token refresh), so two tables never refresh the rotating token twice.
 */
export function withSignal(client: ApiClient, signal: AbortSignal): ApiClient {
  const scoped = Object.create(client) as ApiClient;
  const request = client.request.bind(client);
  scoped.request = ((method: string, path: string, options = {}) =>
    request(method, path, { ...options, signal })) as ApiClient['request'];
  return scoped;
}

/**
 * Every call of the console goes through the command registry, as the palette and the CLI do. With a
 * signal, aborting it aborts the request.
 */
export function runCommand<Id extends CommandId>(
  id: Id,
  args: ArgsOf<Id>,
  options: { signal?: AbortSignal } = {},
): Promise<ResultOf<Id>> {
  const cmd = getCommand(id) as unknown as {
    run(ctx: { api: ApiClient }, args: ArgsOf<Id>): Promise<ResultOf<Id>>;
  };
  return cmd.run({ api: options.signal ? withSignal(api, options.signal) : api }, args);
}
