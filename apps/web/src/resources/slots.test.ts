import { describe, expect, it } from 'vitest';
import { assignSlots } from './slots';

describe('row slots', () => {
  it('keeps the slot of a row that stays and hands freed slots to rows coming in', () => {
    const first = assignSlots([0, 1, 2, 3], new Map());
    expect([...first]).toEqual([
      [0, 0],
      [1, 1],
      [2, 2],
      [3, 3],
    ]);
    // two rows down: rows 0 and 1 leave, 4 and 5 take their slots
    const next = assignSlots([2, 3, 4, 5], first);
    expect([...next]).toEqual([
      [2, 2],
      [3, 3],
      [4, 0],
      [5, 1],
    ]);
    // a jump far away reuses every slot; slots never collide
    const jump = assignSlots([900, 901, 902, 903, 904], next);
    expect(new Set(jump.values()).size).toBe(5);
    expect([...jump.values()].sort()).toEqual([0, 1, 2, 3, 4]);
  });
});
