import { describe, expect, it } from 'vitest';
import { GroupCommit } from './group-commit';
import { FairQueue, parkSlot } from './fair-queue';

const settle = () => new Promise((r) => setImmediate(r));

describe('group commit (issue 26 item 1)', () => {
  it('writes what is submitted together in one batch, one item per key, failures alone', async () => {
    const runs: string[][] = [];
    const g = new GroupCommit<string, string>(
      async (items) => {
        runs.push(items);
        if (items.includes('bad')) throw new Error('bad');
        return items.map((i) => i.toUpperCase());
      },
      { concurrency: 1, maxItems: 10, maxWeight: 100, weight: () => 1 },
    );
    const a = g.submit(1, 'a');
    const b = g.submit(2, 'b');
    // the same key waits for the next batch: a device's pushes one after another
    const a2 = g.submit(1, 'a2');
    const bad = g.submit(3, 'bad').catch((err: Error) => err.message);
    expect(await Promise.all([a, b, a2])).toEqual(['A', 'B', 'A2']);
    expect(await bad).toBe('bad');
    // the first batch failed as a whole and was written again item by item; a2 waited for its key
    expect(runs).toEqual([['a', 'b', 'bad'], ['a'], ['b'], ['bad'], ['a2']]);
  });

  it('keeps a batch within its items and weight', async () => {
    const runs: number[][] = [];
    const g = new GroupCommit<number, number>(async (items) => (runs.push(items), items), {
      concurrency: 1,
      maxItems: 3,
      maxWeight: 5,
      weight: (n) => n,
    });
    await Promise.all([1, 1, 1, 1, 4, 2].map((n, i) => g.submit(i, n)));
    expect(runs).toEqual([[1, 1, 1], [1, 4], [2]]);
  });

  it('a parked task gives its place in the fair queue to the next, within the parked maximum', async () => {
    const q = new FairQueue(1, 10, 10, 1);
    const release: Array<() => void> = [];
    const started: string[] = [];
    const task = (name: string) => () =>
      new Promise<void>((resolve) => {
        started.push(name);
        parkSlot();
        release.push(resolve);
      });
    q.push('a', task('a'));
    q.push('b', task('b'));
    q.push('c', task('c'));
    await settle();
    // a parked, b ran in its place and could not park (the maximum is one): c waits
    expect(started).toEqual(['a', 'b']);
    expect(q.size).toEqual({ waiting: 1, running: 1, parked: 1 });
    // a parked task that ends frees a parked place, not the running one: c still waits for b
    release.shift()!();
    await settle();
    expect(started).toEqual(['a', 'b']);
    release.shift()!();
    await settle();
    expect(started).toEqual(['a', 'b', 'c']);
    for (const r of release.splice(0)) r();
    await q.idle();
    expect(q.size).toEqual({ waiting: 0, running: 0, parked: 0 });
  });
});
