import type { ApiClient, ListQuery } from '@lintel/core';
import { getCommand, type CommandId } from '@lintel/commands';
import { api, withSignal } from '../api/client';
import type { PageReply } from './page-loader';

/** One page of a family's list, through the command registry like every call of the console. */
export function runList<Row>(
  commandId: string,
  query: ListQuery,
  signal: AbortSignal,
  client: ApiClient = api,
): Promise<PageReply<Row>> {
  const cmd = getCommand(commandId as CommandId) as unknown as {
    run(ctx: { api: ApiClient }, args: ListQuery): Promise<PageReply<Row>>;
  };
  return cmd.run({ api: withSignal(client, signal) }, query);
}
