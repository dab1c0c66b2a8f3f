import type { Family } from '../forms/schema';

/** Names of rows seen anywhere (lists, records), so pickers can show chips for ids without asking again. */
const names = new Map<string, string>();

export function rememberName(family: Family, id: number, name: string): void {
  names.set(`${family}:${id}`, name);
}

export function knownName(family: Family, id: number): string | undefined {
  return names.get(`${family}:${id}`);
}
