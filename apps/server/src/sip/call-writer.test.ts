import { describe, expect, it } from 'vitest';
import { CallWriter } from './call-writer';

/** The queue alone: a context whose transaction runs the writes and whose outbox keeps nothing. */
const writer = () =>
  new CallWriter(
    () =>
      ({
        outbox: { unit: (fn: () => unknown) => fn(), emitMany: async () => [] },
        db: { transaction: () => ({ execute: (fn: (trx: unknown) => unknown) => fn({}) }) },
        log: { error: () => undefined },
      }) as never,
  );

describe('the calls’ write queue', () => {
  it('drains a write queued as the last drain ends (the continuation of the write before it)', async () => {
    const w = writer();
    const written: string[] = [];
    await w.push(async () => void written.push('answer'));
    // queued in the microtask that follows the first write's commit, before the drain has ended
    void w.push(async () => void written.push('end'));
    // every drain ended: nothing may be left behind (no timer: the queue's own end is awaited)
    await w.idle();
    expect(written).toEqual(['answer', 'end']);
    expect(w.pending).toBe(0);
  });
});
