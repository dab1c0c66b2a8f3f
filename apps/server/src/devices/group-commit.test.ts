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

  it('takes a device’s messages one at a time, in the order sent, while other devices’ go on beside them', async () => {
    // places for three at once: the second and third of device a still wait for its first, parked or not
    const q = new FairQueue(3, 10, 10, 3);
    const release = new Map<string, () => void>();
    const started: string[] = [];
    const task =
      (name: string, park = false) =>
      () =>
        new Promise<void>((resolve) => {
          started.push(name);
          if (park) parkSlot();
          release.set(name, resolve);
        });
    q.push('a', task('a1', true));
    q.push('a', task('a2'));
    q.push('b', task('b1'));
    q.push('a', task('a3'));
    q.push('c', task('c1'));
    await settle();
    expect(started).toEqual(['a1', 'b1', 'c1']);
    expect(q.size).toEqual({ waiting: 2, running: 2, parked: 1 });
    // b ending frees a place, but a's next still waits for a1
    release.get('b1')!();
    await settle();
    expect(started).toEqual(['a1', 'b1', 'c1']);
    release.get('a1')!();
    await settle();
    expect(started).toEqual(['a1', 'b1', 'c1', 'a2']);
    // a message of a device with one running waits behind it, and is not refused while its share has room
    expect(q.push('a', task('a4'))).toBe(true);
    release.get('a2')!();
    await settle();
    expect(started).toEqual(['a1', 'b1', 'c1', 'a2', 'a3']);
    release.get('a3')!();
    await settle();
    expect(started).toEqual(['a1', 'b1', 'c1', 'a2', 'a3', 'a4']);
    release.get('a4')!();
    release.get('c1')!();
    await q.idle();
    expect(q.size).toEqual({ waiting: 0, running: 0, parked: 0 });
  });
});
