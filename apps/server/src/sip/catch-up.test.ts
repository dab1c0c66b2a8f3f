import { describe, expect, it } from 'vitest';
import { keptBatches } from './catch-up';

describe('keptBatches', () => {
  it("reads htable.dump's slots in the order Kamailio kept them (by number, not by text)", () => {
    const dump = [
      {
        entry: 3,
        size: 2,
        slot: [
          { name: '10', value: '{"b":1}', type: 'str' },
          { name: '9', value: '{"a":1}', type: 'str' },
        ],
      },
      { entry: 7, size: 1, slot: [{ name: '2', value: '{"c":1}', type: 'str' }] },
      // not a kept batch
      { entry: 8, size: 1, slot: [{ name: 'other', value: 'x', type: 'str' }] },
    ];
    expect(keptBatches(dump)).toEqual([
      { seq: 2, text: '{"c":1}' },
      { seq: 9, text: '{"a":1}' },
      { seq: 10, text: '{"b":1}' },
    ]);
    expect(keptBatches([])).toEqual([]);
    expect(keptBatches(null)).toEqual([]);
  });
});
