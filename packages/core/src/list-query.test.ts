import { describe, expect, it } from 'vitest';
import {
  checkFilters,
  formatWhere,
  ListQuery,
  parseWhere,
  relationSetOf,
  WhereSyntaxError,
  type Filter,
} from './list-query';

describe('parseWhere / formatWhere', () => {
  it('reads every rule, in words and in symbols', () => {
    expect(parseWhere('name contains ann')).toEqual({
      filters: [{ field: 'name', rule: 'contains', value: 'ann' }],
      match: 'all',
    });
    expect(parseWhere("name begins with 'Anna K' and id > 10 and is_active = true").filters).toEqual([
      { field: 'name', rule: 'begins_with', value: 'Anna K' },
      { field: 'id', rule: 'above', value: '10' },
      { field: 'is_active', rule: 'equals', value: true },
    ]);
    expect(parseWhere('domains has 3 or role not_equals 2 or id below 5 or login != bob')).toEqual({
      filters: [
        { field: 'domains', rule: 'has', value: '3' },
        { field: 'role', rule: 'not_equals', value: '2' },
        { field: 'id', rule: 'below', value: '5' },
        { field: 'login', rule: 'not_equals', value: 'bob' },
      ],
      match: 'any',
    });
    expect(parseWhere('name equals Anna Karenina').filters[0]!.value).toBe('Anna Karenina');
  });

  it('refuses mixed and/or and words it cannot read', () => {
    expect(() => parseWhere('a equals 1 and b equals 2 or c equals 3')).toThrow(WhereSyntaxError);
    expect(() => parseWhere('name sounds like ann')).toThrow(WhereSyntaxError);
  });

  it('round-trips through the text form', () => {
    const filters: Filter[] = [
      { field: 'name', rule: 'contains', value: 'an and' },
      { field: 'email', rule: 'begins_with', value: 'x' },
      { field: 'active', rule: 'equals', value: false },
    ];
    expect(parseWhere(formatWhere(filters, 'any'))).toEqual({ filters, match: 'any' });
  });

  it('round-trips values with quotes, backslashes, commas and spaces', () => {
    const values = [
      'O"Brien',
      '"quoted"',
      "'single'",
      "it's",
      'a \\ b',
      'C:\\dir\\file',
      'ends with \\',
      'say "hi", then go',
      'a,b,c',
      '  padded  ',
      'two  spaces',
      'line\nbreak\ttab',
      '\\"',
      'x and y or z',
      'null',
      'TRUE',
      '',
    ];
    for (const value of values) {
      const filters: Filter[] = [
        { field: 'name', rule: 'equals', value },
        { field: 'login', rule: 'contains', value },
      ];
      for (const match of ['all', 'any'] as const)
        expect(parseWhere(formatWhere(filters, match)), JSON.stringify(value)).toEqual({ filters, match });
    }
  });

  it('reads escapes a person types inside double quotes, and keeps other backslashes', () => {
    expect(parseWhere('name equals "O\\"Brien"').filters[0]!.value).toBe('O"Brien');
    expect(parseWhere('name equals "a\\\\b"').filters[0]!.value).toBe('a\\b');
    expect(parseWhere('name equals "C:\\dir"').filters[0]!.value).toBe('C:\\dir');
    expect(parseWhere("name equals 'it\\'s'").filters[0]!.value).toBe("it's");
  });
});

describe('ListQuery and checkFilters', () => {
  const fields = {
    name: { kind: 'text' },
    id: { kind: 'number' },
    type: { kind: 'enum', values: ['a', 'b'] },
    domains: { kind: 'refs' },
  } as const;

  it('reads the wire form: numbers from strings, filters from JSON', () => {
    const q = ListQuery.parse({
      page: '2',
      limit: '10',
      filters: JSON.stringify([{ field: 'name', rule: 'contains', value: 'x' }]),
      match: 'any',
      sort: '-name',
    });
    expect(q).toEqual({
      page: 2,
      limit: 10,
      filters: [{ field: 'name', rule: 'contains', value: 'x' }],
      match: 'any',
      sort: '-name',
    });
    expect(ListQuery.safeParse({ sort: 'name; drop table users' }).success).toBe(false);
    expect(ListQuery.safeParse({ limit: 100000 }).success).toBe(false);
    expect(ListQuery.safeParse({ filters: '[{"field":"x","rule":"like","value":"1"}]' }).success).toBe(false);
  });

  it('names unknown fields, rules that do not fit the field, and bad values', () => {
    expect(checkFilters([{ field: 'name', rule: 'contains', value: 'a' }], fields)).toEqual([]);
    expect(checkFilters([{ field: 'password_hash', rule: 'equals', value: 'a' }], fields)[0]).toMatchObject({
      field: 'filters.0.field',
      rule: 'one_of',
    });
    expect(checkFilters([{ field: '__proto__', rule: 'equals', value: 'a' }], fields)[0]).toMatchObject({
      field: 'filters.0.field',
    });
    expect(checkFilters([{ field: 'id', rule: 'contains', value: '1' }], fields)[0]).toMatchObject({
      field: 'filters.0.rule',
      params: { values: ['equals', 'not_equals', 'above', 'below'] },
    });
    expect(checkFilters([{ field: 'id', rule: 'above', value: "1' or 1=1" }], fields)[0]).toMatchObject({
      field: 'filters.0.value',
      rule: 'invalid_type',
    });
    expect(checkFilters([{ field: 'type', rule: 'equals', value: 'c' }], fields)[0]).toMatchObject({
      rule: 'one_of',
      params: { values: ['a', 'b'] },
    });
    expect(checkFilters([{ field: 'domains', rule: 'has', value: 4 }], fields)).toEqual([]);
  });
});

describe('the equals filter of a relation (refs)', () => {
  const fields = { devices: { kind: 'refs' as const } };
  it('takes one id, ids joined by commas, or "" / null for the empty set', () => {
    expect(relationSetOf(3)).toEqual([3]);
    expect(relationSetOf('3')).toEqual([3]);
    expect(relationSetOf(' 3, 5 ,3,8')).toEqual([3, 5, 8]);
    expect(relationSetOf('')).toEqual([]);
    expect(relationSetOf(null)).toEqual([]);
    for (const v of [
      '3,x',
      '3,,5',
      '-1',
      '0',
      1.5,
      true,
      '99999999999',
      Array(60)
        .fill(1)
        .map((_, i) => i + 1)
        .join(),
    ])
      expect(relationSetOf(v), String(v)).toBeUndefined();
    expect(checkFilters([{ field: 'devices', rule: 'equals', value: '3,5' }], fields)).toEqual([]);
    expect(checkFilters([{ field: 'devices', rule: 'equals', value: 'a' }], fields)).toEqual([
      { field: 'filters.0.value', rule: 'invalid_type', params: { expected: 'refs' } },
    ]);
    expect(parseWhere('devices equals 3,5,8').filters).toEqual([
      { field: 'devices', rule: 'equals', value: '3,5,8' },
    ]);
  });
});
