import { describe, expect, it } from 'vitest';
import { RequestCache } from './request-cache';

const counter = () => {
  let reads = 0;
  return { read: async () => ++reads, reads: () => reads };
};

describe('the request cache', () => {
  it('reads once within its time to live, again after it', async () => {
    let now = 0;
    const cache = new RequestCache({ ttlMs: 1000, needsListener: false, now: () => now });
    const c = counter();
    expect(await cache.get('k', c.read)).toBe(1);
    now = 999;
    expect(await cache.get('k', c.read)).toBe(1);
    now = 1000;
    expect(await cache.get('k', c.read)).toBe(2);
  });

  it('forgets everything on clear, and a read begun before the clear is not stored after it', async () => {
    const cache = new RequestCache({ ttlMs: 60_000, needsListener: false });
    const c = counter();
    await cache.get('k', c.read);
    cache.clear();
    expect(await cache.get('k', c.read)).toBe(2);
    // a slow read of the old facts, overtaken by a change
    let finish!: (v: number) => void;
    const slow = cache.get('s', () => new Promise<number>((r) => (finish = r)));
    cache.clear();
    finish(41);
    expect(await slow).toBe(41);
    expect(await cache.get('s', async () => 42)).toBe(42);
  });

  it('keeps nothing a caller says not to keep (refusals)', async () => {
    const cache = new RequestCache({ ttlMs: 60_000, needsListener: false });
    let reads = 0;
    const read = async () => (++reads > 1 ? 'found' : null);
    expect(await cache.get('t', read, (v) => v !== null)).toBeNull();
    expect(await cache.get('t', read, (v) => v !== null)).toBe('found');
    expect(await cache.get('t', read, (v) => v !== null)).toBe('found');
    expect(reads).toBe(2);
  });

  it('on PostgreSQL is used only while its listener is connected, and forgets when it connects or drops', async () => {
    const cache = new RequestCache({ ttlMs: 60_000, needsListener: true });
    const c = counter();
    await cache.get('k', c.read);
    await cache.get('k', c.read);
    expect(c.reads()).toBe(2);
    cache.setListening(true);
    await cache.get('k', c.read);
    await cache.get('k', c.read);
    expect(c.reads()).toBe(3);
    cache.setListening(false);
    expect(cache.size).toBe(0);
    await cache.get('k', c.read);
    expect(c.reads()).toBe(4);
  });

  it('holds a bounded number of entries, the oldest going first; a time to live of 0 turns it off', async () => {
    const cache = new RequestCache({ ttlMs: 60_000, needsListener: false, maxEntries: 3 });
    for (const k of ['a', 'b', 'c', 'd']) await cache.get(k, async () => k);
    expect(cache.size).toBe(3);
    let again = 0;
    await cache.get('a', async () => (again++, 'a'));
    expect(again).toBe(1);
    const off = new RequestCache({ ttlMs: 0, needsListener: false });
    const c = counter();
    await off.get('k', c.read);
    await off.get('k', c.read);
    expect(c.reads()).toBe(2);
  });
});
