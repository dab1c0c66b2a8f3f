import { describe, expect, it } from 'vitest';
import { ListQuery, parseWhere, type Filter } from '@lintel/core';
import { userResource } from '@lintel/commands';
import {
  buildListQuery,
  coerceValue,
  emptyQuery,
  filterableFields,
  filtersToWhere,
  nextSort,
  normaliseFilter,
  queryKey,
  sortableFields,
  whereToFilters,
  type TableQuery,
} from './table-query';

const fields = filterableFields(userResource);

describe('chips → ListQuery', () => {
  it('leaves empty parts out, as the CLI does', () => {
    expect(buildListQuery(emptyQuery, 1, 100)).toEqual({ page: 1, limit: 100 });
    expect(buildListQuery({ ...emptyQuery, search: '   ' }, 3, 100)).toEqual({ page: 3, limit: 100 });
  });

  it('carries search, sort, filters and match, and the command schema accepts it', () => {
    const q: TableQuery = {
      search: ' ann ',
      sort: '-name',
      match: 'any',
      filters: [
        { field: 'name', rule: 'contains', value: 'ann' },
        { field: 'is_activated', rule: 'equals', value: true },
        { field: 'domains', rule: 'has', value: 4 },
      ],
    };
    const built = buildListQuery(q, 2, 100);
    expect(built).toEqual({
      page: 2,
      limit: 100,
      sort: '-name',
      search: 'ann',
      filters: q.filters,
      match: 'any',
    });
    expect(ListQuery.safeParse(built).success).toBe(true);
    // the filters are copies: editing a chip later does not change a request under way
    expect((built.filters as Filter[])[0]).not.toBe(q.filters[0]);
  });

  it('keys queries by what they ask for', () => {
    const a: TableQuery = { ...emptyQuery, filters: [{ field: 'name', rule: 'contains', value: 'x' }] };
    expect(queryKey(a)).toBe(queryKey({ ...a, match: 'any' })); // one chip: all and any are the same
    expect(queryKey(a)).not.toBe(queryKey({ ...a, sort: 'name' }));
    expect(queryKey({ ...emptyQuery, search: 'ann ' })).toBe(queryKey({ ...emptyQuery, search: 'ann' }));
  });

  it('cycles a header through ascending, descending and none', () => {
    expect(nextSort(null, 'name')).toBe('name');
    expect(nextSort('name', 'name')).toBe('-name');
    expect(nextSort('-name', 'name')).toBeNull();
    expect(nextSort('-name', 'login')).toBe('login');
  });

  it('offers only what the family declares', () => {
    expect(Object.keys(fields)).toContain('name');
    expect(Object.keys(fields)).not.toContain('avatar_url');
    expect(sortableFields(userResource)).toEqual(userResource.sortable);
    expect(
      sortableFields({ noun: 'x', fields: { a: { kind: 'text', sortable: true }, b: { kind: 'text' } } }),
    ).toEqual(['a']);
  });
});

describe('chip values by kind', () => {
  it('types what was typed', () => {
    expect(coerceValue('number', '42')).toBe(42);
    expect(coerceValue('refs', ' 7 ')).toBe(7);
    expect(coerceValue('ref', null)).toBeNull();
    expect(coerceValue('number', 'abc')).toBeUndefined();
    expect(coerceValue('boolean', 'true')).toBe(true);
    expect(coerceValue('boolean', 'yes')).toBeUndefined();
    expect(coerceValue('date', '2025-01-31')).toBe('2025-01-31');
    expect(coerceValue('date', 'not a date')).toBeUndefined();
    expect(coerceValue('text', 5)).toBe('5');
  });

  it('refuses unknown fields, rules that do not fit, and bad values', () => {
    expect(normaliseFilter({ field: 'name', rule: 'contains', value: 'ann' }, fields)).toEqual({
      filter: { field: 'name', rule: 'contains', value: 'ann' },
    });
    expect(normaliseFilter({ field: 'password', rule: 'equals', value: 'x' }, fields)).toEqual({
      problem: { kind: 'field', field: 'password' },
    });
    expect(normaliseFilter({ field: 'id', rule: 'contains', value: '1' }, fields)).toMatchObject({
      problem: { kind: 'rule' },
    });
    expect(normaliseFilter({ field: 'id', rule: 'above', value: 'ten' }, fields)).toMatchObject({
      problem: { kind: 'value' },
    });
    expect(normaliseFilter({ field: '__proto__', rule: 'equals', value: 'x' }, fields)).toMatchObject({
      problem: { kind: 'field' },
    });
  });
});

describe('chips ⇄ --where text', () => {
  const chips: Filter[] = [
    { field: 'name', rule: 'contains', value: 'ann' },
    { field: 'login', rule: 'begins_with', value: 'scale 00' },
    { field: 'id', rule: 'above', value: 10 },
    { field: 'is_activated', rule: 'equals', value: false },
    { field: 'domains', rule: 'has', value: 3 },
    { field: 'description', rule: 'equals', value: 'true' },
    { field: 'created_at', rule: 'below', value: '2025-06-01' },
  ];

  it('reads exactly like the CLI', () => {
    expect(filtersToWhere(chips.slice(0, 1), 'all')).toBe('name contains ann');
    expect(filtersToWhere(chips.slice(0, 3), 'any')).toBe(
      'name contains ann or login begins_with "scale 00" or id above 10',
    );
    expect(filtersToWhere([], 'all')).toBe('');
  });

  it('round-trips through the text form, with the types of each field', () => {
    for (const match of ['all', 'any'] as const) {
      const text = filtersToWhere(chips, match);
      expect(whereToFilters(text, fields)).toEqual({ filters: chips, match });
      // and it is the same text the core parser reads
      expect(parseWhere(text).filters.map((f) => f.field)).toEqual(chips.map((f) => f.field));
    }
  });

  it('reads the CLI spellings and says what is wrong', () => {
    expect(whereToFilters("name ~ 'Anna K' and id > 5", fields)).toEqual({
      filters: [
        { field: 'name', rule: 'contains', value: 'Anna K' },
        { field: 'id', rule: 'above', value: 5 },
      ],
      match: 'all',
    });
    expect(whereToFilters('', fields)).toEqual({ filters: [], match: 'all' });
    expect(whereToFilters('name sounds like ann', fields)).toMatchObject({ problem: { kind: 'syntax' } });
    expect(whereToFilters('colour equals red', fields)).toEqual({
      problem: { kind: 'field', field: 'colour' },
    });
    expect(whereToFilters('is_activated contains yes', fields)).toMatchObject({
      problem: { kind: 'rule', rules: ['equals', 'not_equals'] },
    });
    expect(
      whereToFilters(Array.from({ length: 21 }, (_, i) => `id equals ${i}`).join(' and '), fields),
    ).toEqual({
      problem: { kind: 'too_many', max: 20 },
    });
  });
});
