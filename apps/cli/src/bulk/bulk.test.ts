import { describe, expect, it } from 'vitest';
import { groupNamer } from './export';
import { jsonArrayItems, JsonSyntaxError, ndjsonItems } from './json-stream';
import { problemText, rangesText } from './report';

async function* chunks(text: string, size: number) {
  for (let i = 0; i < text.length; i += size) yield text.slice(i, i + size);
}
const all = async <T>(it: AsyncIterable<T>) => {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
};

describe('JSON streaming', () => {
  const text = '[\n{"login": "a", "name": "x } ] \\" {"},\n  {"login": "b",\n "domains": [1, "B"]}\n]\n';
  it.each([1, 3, 7, 1000])(
    'reads an array of objects with their lines, whatever the chunk size (%i)',
    async (size) => {
      expect(await all(jsonArrayItems(chunks(text, size)))).toEqual([
        { line: 2, value: { login: 'a', name: 'x } ] " {' } },
        { line: 3, value: { login: 'b', domains: [1, 'B'] } },
      ]);
    },
  );
  it('an empty array, and broken input with the line it breaks on', async () => {
    expect(await all(jsonArrayItems(chunks('[ ]', 2)))).toEqual([]);
    await expect(all(jsonArrayItems(chunks('{"a": 1}', 4)))).rejects.toBeInstanceOf(JsonSyntaxError);
    await expect(all(jsonArrayItems(chunks('[{"a": 1},\n\n{"a": }]', 4)))).rejects.toMatchObject({ line: 3 });
    await expect(all(jsonArrayItems(chunks('[{"a": 1}', 4)))).rejects.toMatchObject({
      reason: 'array_not_closed',
    });
  });
  it('NDJSON: an object per line, blank lines skipped', async () => {
    expect(await all(ndjsonItems(chunks('{"a":1}\n\n{"a":2}', 3)))).toEqual([
      { line: 1, value: { a: 1 } },
      { line: 3, value: { a: 2 } },
    ]);
  });
});

describe('export by name', () => {
  it('names a group by name when unique, else by @address when unique, else by id', () => {
    const name = groupNamer([
      { id: 1, name: 'Building 1', logic_address: '1' },
      { id: 2, name: 'Apartment 1', logic_address: '1.1' },
      { id: 3, name: 'Apartment 1', logic_address: '2.1' },
      { id: 4, name: 'Twin', logic_address: null },
      { id: 5, name: 'twin', logic_address: null },
      { id: 6, name: '42', logic_address: null },
    ]);
    expect([1, 2, 3, 4, 5, 6].map((id) => name({ id, name: '' }))).toEqual([
      'Building 1',
      '@1.1',
      '@2.1',
      4,
      5,
      6,
    ]);
  });
});

describe('the report', () => {
  it('says each problem in words, with what its message leaves out', () => {
    expect(problemText({ rule: 'email' })).toBe('Must be an e-mail address');
    expect(problemText({ rule: 'duplicate_in_file', params: { line: 4 } })).toBe(
      'Repeats line 4 of the file',
    );
    expect(
      problemText({ key: 'invalid_related_entity', params: { entity: 'domains', values: ['X', 'Y'] } }),
    ).toBe('Invalid related entity sent: domains: X, Y');
    expect(
      problemText({ key: 'method_prohibited', params: { reason: 'domain_out_of_scope', domains: [7] } }),
    ).toBe('Method or action is prohibited (groups outside yours: 7)');
    expect(
      rangesText([
        [5, 11],
        [14, 14],
      ]),
    ).toBe('5-11, 14');
  });
});
