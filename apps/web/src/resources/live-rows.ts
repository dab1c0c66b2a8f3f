import { useEffect } from 'react';
import type { LiveRule } from '@lintel/commands';
import { WsReply, type WsServerMessage } from '@lintel/core';
import { realtime } from '../session/realtime';
import type { PageLoader } from './page-loader';

/**
 * What an event of a live rule changes in a row: the id of the row and the fields it sets (`set` maps a
 * record field to the payload's key), or null when the message is not that rule's event.
 */
export function livePatch(
  rule: LiveRule,
  data: Record<string, unknown>,
): { id: unknown; patch: Record<string, unknown> } | null {
  if (data.type !== rule.event) return null;
  const patch: Record<string, unknown> = {};
  for (const [field, key] of Object.entries(rule.set)) if (key && key in data) patch[field] = data[key];
  return { id: data[rule.id], patch };
}

/**
 * Keeps the rows of a table live (issue 25 item 3): for each rule the family declares, its topic is
 * subscribed on the console's one websocket and each of its events patches the row it names, in place; a
 * `resync` (more was missed than the server keeps) reloads the list. A family declares its rules; no page
 * writes code for it.
 */
export function useLiveRows<Row extends { id: number }>(
  rules: readonly LiveRule[] | undefined,
  loader: PageLoader<Row>,
): void {
  const key = JSON.stringify(rules ?? []);
  useEffect(() => {
    const list = JSON.parse(key) as LiveRule[];
    if (!list.length) return;
    const topics = [...new Set(list.map((r) => r.topic))];
    const offs = topics.map((topic) =>
      realtime.subscribe(topic, (m: WsServerMessage) => {
        const data = m.data as Record<string, unknown>;
        if (data.type === WsReply.resync) {
          loader.reload();
          return;
        }
        for (const rule of list) {
          if (rule.topic !== topic) continue;
          const change = livePatch(rule, data);
          if (change) loader.patchRow((row) => row.id === change.id, change.patch as Partial<Row>);
        }
      }),
    );
    // the socket itself is the session's (useLiveProfile connects it while signed in)
    return () => {
      for (const off of offs) off();
    };
  }, [key, loader]);
}
