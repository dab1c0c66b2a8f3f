import { describe, expect, it } from 'vitest';
import { ImportRow, parseImportRow } from './user.import';
import { IdentifierImportRow, parseIdentifierImportRow } from '../identifier/identifier.extras';

/** Rows as streams carry them (parsed JSON), the plain ones and every way of being wrong. */
const userRows: unknown[] = [
  { line: 2, login: 'a', name: 'A', domains: '1;2', role: 'Tenant' },
  { line: 3, login: 'a', domains: [1, 'Two'], elevator_access_disabled: true, phone: null, x: 1.5 },
  { line: 2_147_483_647 },
  { line: 2_147_483_648, login: 'a' },
  { line: 0 },
  { line: 1.5 },
  { line: '2' },
  {},
  { login: 'a' },
  { line: 2, description: 'x'.repeat(10_000) },
  { line: 2, description: 'x'.repeat(10_001) },
  { line: 2, domains: Array.from({ length: 1000 }, (_, i) => i) },
  { line: 2, domains: Array.from({ length: 1001 }, (_, i) => i) },
  { line: 2, domains: ['y'.repeat(1000)] },
  { line: 2, domains: ['y'.repeat(1001)] },
  { line: 2, domains: [true] },
  { line: 2, domains: [null] },
  { line: 2, domains: [[1]] },
  { line: 2, profile: { phone: '1' } },
  JSON.parse('{"line": 2, "__proto__": {"login": "x"}}'),
  null,
  [],
  [{ line: 2 }],
  'row',
  7,
];

const identifierRows: unknown[] = [
  { type: 'card', value: '123', name: 'Card', description: 'd' },
  { value: 123 },
  {},
  { type: 'qr' },
  { type: 'nope', value: '1' },
  { type: 1 },
  { value: true },
  { value: null },
  { name: 'n'.repeat(255) },
  { name: 'n'.repeat(256) },
  { description: 'd'.repeat(1000) },
  { description: 'd'.repeat(1001) },
  { owner: 5 },
  { owner: '5' },
  { owner: null },
  { owner: 1.5 },
  { owner: 2 ** 60 },
  { owner: true },
  { value: '1', extra: 'dropped' },
  JSON.parse('{"value": "1", "__proto__": {"type": "qr"}}'),
  null,
  [],
  'row',
];

describe('the import rows fast paths', () => {
  it.each(userRows.map((r) => [JSON.stringify(r)?.slice(0, 80), r]))(
    'a users row reads as ImportRow reads it: %s',
    (_, row) => {
      const fast = parseImportRow(row);
      const slow = ImportRow.safeParse(row);
      expect(fast.success).toBe(slow.success);
      if (fast.success && slow.success) expect({ ...fast.data }).toEqual({ ...slow.data });
      else expect(fast.error?.issues).toEqual(slow.error?.issues);
    },
  );

  it.each(identifierRows.map((r) => [JSON.stringify(r)?.slice(0, 80), r]))(
    'an identifiers row reads as IdentifierImportRow reads it: %s',
    (_, row) => {
      const fast = parseIdentifierImportRow(row);
      const slow = IdentifierImportRow.safeParse(row);
      expect(fast.success).toBe(slow.success);
      if (fast.success && slow.success) expect(fast.data).toEqual(slow.data);
      else expect(fast.error?.issues).toEqual(slow.error?.issues);
    },
  );
});
