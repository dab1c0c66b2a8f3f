/**
 * Rows are keyed by slot, not by index: a row that scrolls out hands its slot (and so its elements) to a
 * row scrolling in, and React changes texts instead of building elements the browser must style afresh.
 * Rows that stay keep their slot. Slots are small numbers, reused lowest first.
 */
export function assignSlots(
  indices: readonly number[],
  previous: ReadonlyMap<number, number>,
): Map<number, number> {
  const next = new Map<number, number>();
  const used = new Set<number>();
  for (const i of indices) {
    const slot = previous.get(i);
    if (slot !== undefined) {
      next.set(i, slot);
      used.add(slot);
    }
  }
  let free = 0;
  for (const i of indices) {
    if (next.has(i)) continue;
    while (used.has(free)) free++;
    next.set(i, free);
    used.add(free);
  }
  return next;
}

/**
 * The rows a grid draws, in blocks: a window of `size` rows starting on a multiple of `block`, covering the
 * rows on screen and `overscan` either side. While the view moves it stays where it is until the rows on
 * screen come within `overscan` of its edge, then moves a whole block: `block` rows leave one end and as many
 * come in at the other, in one frame. The frames between change nothing in the page, so the browser only
 * scrolls (no style, layout, paint or layerization), where a window moving with every frame changed a few
 * rows every frame and paid each phase's fixed cost each time.
 */
export function blockWindow(
  first: number,
  count: number,
  { block, size, overscan }: { block: number; size: number; overscan: number },
): number[] {
  if (count <= 0) return [];
  const start = Math.max(0, Math.floor(Math.max(0, first - overscan) / block) * block);
  const end = Math.min(count - 1, start + size - 1);
  const rows = new Array<number>(end - start + 1);
  for (let i = 0; i < rows.length; i++) rows[i] = start + i;
  return rows;
}

/**
 * The window's size for a view showing `visible` rows: a multiple of `block`, at least the rows on screen, the
 * overscan either side and a block (the start is floored to a block, up to `block - 1` rows above the first).
 */
export function blockWindowSize(visible: number, block: number, overscan: number): number {
  return Math.ceil((visible + 2 * overscan + block - 1) / block) * block;
}
