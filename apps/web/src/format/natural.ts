/**
 * Names as a person reads them (issue 13 point 8): "Apartment 2" before "Apartment 10", case and accents
 * aside; the same order the server's `naturalSortKey` gives a list sorted by name.
 */
const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

export const naturalCompare = (a: string, b: string): number => collator.compare(a, b);
