import { describe, expect, it } from 'vitest';
import { CallWriter } from './call-writer';

/** The queue alone: a context whose transaction runs the writes and whose outbox keeps nothing. */
const writer = () =>
  new CallWriter(
    () =>
      ({
        outbox: {
          transaction: (
            db: { transaction: () => { execute: (fn: (trx: unknown) => unknown) => unknown } },
            fn: (trx: unknown) => unknown,
          ) => db.transaction().execute(fn),
          emitMany: async () => [],
        },
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

describe('the calls’ writes wait while calls are being set up', () => {
  it('writes nothing in the turn a write is queued, and everything once idle() asks', async () => {
    const w = writer();
    const written: string[] = [];
    const first = w.push(async () => void written.push('call'));
    void w.push(async () => void written.push('answer'));
    // a turn of the event loop later (a route request's reply would go out here): nothing written yet
    await new Promise<void>((r) => setImmediate(r));
    expect(written).toEqual([]);
    expect(w.pending).toBe(2);
    await w.idle();
    await first;
    expect(written).toEqual(['call', 'answer']);
    expect(w.pending).toBe(0);
  });

  it('a transaction that fails costs only the write that failed, the others are written in order', async () => {
    const w = writer();
    const written: string[] = [];
    const bad = w.push(async () => {
      throw new Error('no');
    });
    const good = w.push(async () => void written.push('next'));
    const refused = expect(bad).rejects.toThrow('no');
    await w.idle();
    await refused;
    await good;
    expect(written).toEqual(['next']);
  });
});
