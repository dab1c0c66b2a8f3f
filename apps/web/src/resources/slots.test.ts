import { describe, expect, it } from 'vitest';
import { assignSlots, blockWindow, blockWindowSize } from './slots';

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

describe('the block window', () => {
  const opts = { block: 16, overscan: 3, size: blockWindowSize(28, 16, 3) };

  it('covers the rows on screen and the overscan, wherever the view is', () => {
    for (let first = 0; first < 500; first++) {
      const rows = blockWindow(first, 10_000, opts);
      expect(rows[0]).toBeLessThanOrEqual(Math.max(0, first - 3));
      expect(rows.at(-1)).toBeGreaterThanOrEqual(first + 27 + 3);
      expect(rows).toEqual(Array.from({ length: rows.length }, (_, i) => rows[0]! + i));
    }
  });

  it('stays put while the view moves within a block, then moves by a whole block', () => {
    const starts = new Set<number>();
    let changes = 0;
    let last = blockWindow(0, 10_000, opts);
    // a wheel notch (4 rows) a frame
    for (let first = 4; first < 800; first += 4) {
      const rows = blockWindow(first, 10_000, opts);
      if (rows[0] !== last[0]) {
        changes++;
        expect(rows[0]! - last[0]!).toBe(16);
        expect(rows.length).toBe(last.length);
      }
      starts.add(rows[0]!);
      last = rows;
    }
    // one change every 16 rows, where a window moving with the view changed every frame (199 times)
    expect(changes).toBe(Math.floor((796 - 3) / 16));
    expect([...starts].every((s) => s % 16 === 0)).toBe(true);
  });

  it('ends at the last row and is empty without rows', () => {
    expect(blockWindow(9_990, 10_000, opts).at(-1)).toBe(9_999);
    expect(blockWindow(0, 5, opts)).toEqual([0, 1, 2, 3, 4]);
    expect(blockWindow(0, 0, opts)).toEqual([]);
  });
});
