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
