import { MAX_LIST_LIMIT } from '@lintel/core';
import { runList } from './list-call';
import { buildListQuery, type TableQuery } from './table-query';

/**
 * Ids per bulk call: `delete_all` takes 1000, but deleting 1000 users can outlast a call's 30 s timeout on a
 * busy embedded database; 250 keeps each call short and the progress honest.
 */
export const BULK_CHUNK = 250;

/**
 * Every id the table's query matches (issue 13 point 9, "all 20,370 matching"): read page by page of the
 * list command in the server's order (by id), the query's search and filters as shown. `signal` stops it
 * (Esc while the rows are collected): it then rejects with the abort's reason.
 */
export async function matchingIds(
  listCommand: string,
  query: TableQuery,
  signal: AbortSignal = new AbortController().signal,
): Promise<number[]> {
  const ids: number[] = [];
  const q: TableQuery = { ...query, sort: null };
  for (let page = 1; ; page++) {
    const reply = await runList<{ id: number }>(listCommand, buildListQuery(q, page, MAX_LIST_LIMIT), signal);
    signal.throwIfAborted();
    ids.push(...reply.data.map((r) => r.id));
    if (reply.data.length < MAX_LIST_LIMIT || ids.length >= reply.meta.total) break;
  }
  return [...new Set(ids)];
}

/** A bulk call that failed after some of its chunks went through: how far it came. */
export class PartialBulkError extends Error {
  constructor(
    readonly done: number,
    readonly total: number,
    override readonly cause: unknown,
  ) {
    super(`stopped after ${done} of ${total}`);
  }
}

/**
 * Runs `call` over the ids in chunks of `size`, one after another, gathering the replies. A failure after
 * the first chunk is a PartialBulkError saying how many ids were sent in the chunks that went through.
 */
export async function inChunks<R>(
  ids: readonly number[],
  call: (chunk: number[]) => Promise<R>,
  size = BULK_CHUNK,
): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < ids.length; i += size) {
    try {
      out.push(await call(ids.slice(i, i + size)));
    } catch (err) {
      if (i === 0) throw err;
      throw new PartialBulkError(i, ids.length, err);
    }
  }
  return out;
}
