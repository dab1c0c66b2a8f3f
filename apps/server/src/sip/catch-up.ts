import { SipCallEvent } from '@lintel/commands';
import type { ServerContext } from '../context';
import { queueCallEvents, type CallEventArgs } from './calls';

/** One kept batch: the sequence number Kamailio gave it, and its events as Kamailio wrote them (JSON objects). */
interface KeptBatch {
  seq: number;
  text: string;
}

/**
 * The `{name, value}` items of an `htable.dump` answer, wherever Kamailio's version nests them (an array of
 * slots, each `{entry, size, slot: [{name, value, type}]}`).
 */
export function keptBatches(dump: unknown): KeptBatch[] {
  const out: KeptBatch[] = [];
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) return v.forEach(walk);
    if (!v || typeof v !== 'object') return;
    const o = v as Record<string, unknown>;
    if ('name' in o && 'value' in o && /^\d+$/.test(String(o.name)))
      out.push({ seq: Number(o.name), text: String(o.value) });
    else Object.values(o).forEach(walk);
  };
  walk(dump);
  return out.sort((a, b) => a.seq - b.seq);
}

/** The events of a kept batch that read as call events; what does not is logged and left out. */
export function eventsOf(app: ServerContext, batch: KeptBatch): CallEventArgs[] {
  let list: unknown[];
  try {
    list = JSON.parse(`[${batch.text}]`) as unknown[];
  } catch {
    app.log.warn({ seq: batch.seq }, 'a kept batch of call events does not read as JSON: left out');
    return [];
  }
  const events: CallEventArgs[] = [];
  for (const item of list) {
    const parsed = SipCallEvent.safeParse(item);
    if (parsed.success) events.push(parsed.data);
    else app.log.warn({ seq: batch.seq }, 'a kept call event does not read as one: left out');
  }
  return events;
}

/**
 * Lintel's catch-up on what happened to calls while it did not answer Kamailio (down, restarting, killed):
 * Kamailio kept the batches of call events it could not give (htable `missed`, route SEND_EVENTS of the
 * template), each with when it happened; they are applied in the order Kamailio saw them, with their own times,
 * then deleted from Kamailio. A call routed by Kamailio's fallback meanwhile comes with its caller and callee
 * and is kept from its first event (sip/calls.ts `keepFallbackCall`). Returns how many events were applied.
 */
export async function catchUpCalls(
  app: ServerContext,
  rpc: <T>(method: string, params?: unknown[]) => Promise<T>,
): Promise<number> {
  let applied = 0;
  let read = 0;
  // batches kept while this runs are read by the next round (at most a few: Lintel answers again now)
  for (let round = 0; round < 3; round++) {
    const batches = keptBatches(await rpc('htable.dump', ['missed']));
    if (!batches.length) break;
    for (const batch of batches) {
      const events = eventsOf(app, batch);
      await Promise.all(queueCallEvents(app, events, { caughtUp: true }));
      await app.sip.writes.idle();
      await rpc('htable.delete', ['missed', String(batch.seq)]);
      applied += events.length;
      read++;
    }
  }
  if (!read) return 0;
  // the count Kamailio caps what it keeps by, set to what is left (a batch kept while this ran)
  const left = keptBatches(await rpc('htable.dump', ['missed'])).length;
  await rpc('htable.seti', ['lintel', 'missed_n', left]);
  app.log.info({ events: applied }, 'caught up on the call events the SIP server kept');
  return applied;
}
