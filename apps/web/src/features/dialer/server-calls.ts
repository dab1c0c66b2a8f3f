/**
 * The server's calls in the dialer (spec part 2 §7 "Call updates"): the calls of the user's number
 * (`private-calls.{number}`) and, for a concierge who may intercept, the project's waiting calls
 * (`private-calls-waiting`), each CallUpdated given to the calls reducer as `server_update`; the call list read
 * again each time a topic is (re)subscribed or the server says to resync, so nothing missed while the socket
 * was away stays missed. Only in the tab that holds the registration: the other tabs mirror its calls.
 */
import { ServerCall } from '@lintel/commands';
import { concernsDialer, RealtimeTopics, WsReply, type WsServerMessage } from '@lintel/core';
import { runCommand } from '../../api/client';
import { realtime } from '../../session/realtime';
import type { SipPhone } from './sip-phone';

export function followServerCalls(
  phone: SipPhone,
  number: string,
  may: { list: boolean; intercept: boolean },
): () => void {
  if (!may.list) return () => {};
  let live = true;
  const give = (call: unknown) => {
    const parsed = ServerCall.safeParse(call);
    if (live && parsed.success) phone.call({ type: 'server_update', call: parsed.data });
  };
  // the list gives the calls not heard of yet; a known call's later changes come as events (the socket replays
  // what it missed when it comes back), never overtaken by an older list
  const known = (id: string) => phone.snapshot().calls.calls.some((c) => c.speechId === id);
  const reload = () =>
    runCommand('call.list', {})
      .then((list) => {
        for (const call of list.data) if (concernsDialer(call, number) && !known(call.id)) give(call);
      })
      .catch((err: unknown) => console.warn('lintel: the call list', err));
  const onMessage = (m: WsServerMessage) => {
    if (m.data.type === 'CallUpdated') give((m.data as { call?: unknown }).call);
    else if (m.data.type === WsReply.subscribed || m.data.type === WsReply.resync) void reload();
  };
  const offs = [realtime.subscribe(RealtimeTopics.calls(number), onMessage)];
  if (may.intercept) offs.push(realtime.subscribe(RealtimeTopics.waitingCalls, onMessage));
  void reload();
  return () => {
    live = false;
    for (const off of offs) off();
  };
}
