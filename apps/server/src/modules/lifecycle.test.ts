import { describe, expect, it } from 'vitest';
import { defineModule, Lifecycle, ModuleRefused } from './lifecycle';

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
