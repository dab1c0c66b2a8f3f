import { describe, expect, it, vi } from 'vitest';
import { defineModule, Lifecycle, ModuleRefused, ModuleStopTimeout } from './lifecycle';

/** A module that records its starts and stops in `log`. */
const recorded = (log: string[], name: string, needs?: string[]) =>
  defineModule({
    name,
    needs,
    start: async () => void log.push(`start ${name}`),
    stop: async () => void log.push(`stop ${name}`),
  });

describe('one module at a time (the workers)', () => {
  it('stops and starts one module, refusing what the needs forbid, and keeps the stop order', async () => {
    const log: string[] = [];
    const lc = new Lifecycle([recorded(log, 'a'), recorded(log, 'b', ['a']), recorded(log, 'c')]);
    await lc.start();
    // b needs a: a cannot stop under it
    await expect(lc.stopOne('a')).rejects.toEqual(new ModuleRefused('needed_by', ['b']));
    await lc.stopOne('b');
    await lc.stopOne('a');
    expect(lc.isRunning('a')).toBe(false);
    // b cannot start without a
    await expect(lc.startOne('b')).rejects.toEqual(new ModuleRefused('needs', ['a']));
    await lc.startOne('a');
    await lc.startOne('b');
    log.length = 0;
    // back in its place: the whole stops in reverse start order as before
    await lc.stop(() => undefined);
    expect(log).toEqual(['stop c', 'stop b', 'stop a']);
    await expect(lc.startOne('z')).rejects.toThrow(/not configured/);
  });
});

describe('the whole stop', () => {
  it('goes on without a module whose stop never ends, after the bound, and says which', async () => {
    vi.useFakeTimers();
    try {
      const log: string[] = [];
      const stuck = defineModule({
        name: 'stuck',
        start: async () => undefined,
        // its work waits on a statement whose answer will never come
        stop: () => new Promise<void>(() => undefined),
      });
      const lc = new Lifecycle([recorded(log, 'a'), stuck, recorded(log, 'c')], { stopBoundMs: 1_000 });
      await lc.start();
      log.length = 0;
      const errors: [string, unknown][] = [];
      let done = false;
      const stopping = lc.stop((name, err) => errors.push([name, err])).then(() => (done = true));
      await vi.advanceTimersByTimeAsync(999);
      expect(done).toBe(false);
      expect(log).toEqual(['stop c']);
      await vi.advanceTimersByTimeAsync(1);
      await stopping;
      expect(log).toEqual(['stop c', 'stop a']);
      expect(errors).toEqual([['stuck', new ModuleStopTimeout(1_000)]]);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});
