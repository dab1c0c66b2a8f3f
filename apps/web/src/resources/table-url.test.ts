import { describe, expect, it } from 'vitest';
import { userResource } from '@lintel/commands';
import { filterableFields, sortableFields, type TableQuery } from './table-query';
import { hasView, readView, tableHref, writeView } from './table-url';

const fields = filterableFields(userResource);
const sortable = sortableFields(userResource);
const columns = Object.keys(userResource.fields);

describe('a table view in the address (issue 13 point 9)', () => {
  it('reads back what it wrote, keeping the page’s own parameters', () => {
    const query: TableQuery = {
      search: 'Apartment 1',
      sort: '-name',
      match: 'any',
      filters: [
        { field: 'name', rule: 'contains', value: 'flat & 3, block 2' },
        { field: 'is_activated', rule: 'equals', value: true },
        { field: 'role', rule: 'equals', value: 5 },
      ],
    };
    const params = writeView(new URLSearchParams('view=table&q=old'), {
      query,
      columns: ['name', 'role'],
    });
    expect(params.get('view')).toBe('table');
    // through the text of an address and back
    const again = new URLSearchParams(`?${params.toString()}`);
    expect(readView(again, fields, sortable, columns)).toEqual({ query, columns: ['name', 'role'] });
    expect(hasView(again)).toBe(true);
  });

  it('keeps a filter value with quotes, backslashes, commas and spaces through the address', () => {
    for (const value of ['O"Brien', 'say "hi", then \\ go', "it's, a \\", '"', '\\', ' a,b ']) {
      const query: TableQuery = {
        search: '',
        sort: null,
        match: 'all',
        filters: [
          { field: 'name', rule: 'equals', value },
          { field: 'description', rule: 'contains', value },
        ],
      };
      const params = writeView(new URLSearchParams(), { query, columns: null });
      const again = new URLSearchParams(`?${params.toString()}`);
      expect(readView(again, fields, sortable, columns).query, value).toEqual(query);
    }
  });

  it('links into a table on a filter: the address opens those filters', () => {
    const filters = [
      { field: 'name', rule: 'equals' as const, value: 'Anna "K"' },
      { field: 'role', rule: 'equals' as const, value: 5 },
    ];
    const href = tableHref('/users', filters, 'any');
    expect(href.startsWith('/users?where=')).toBe(true);
    const params = new URL(href, 'http://x').searchParams;
    expect(readView(params, fields, sortable, columns).query).toEqual({
      search: '',
      sort: null,
      match: 'any',
      filters,
    });
    expect(tableHref('/users', [])).toBe('/users');
  });

  it('leaves out what is empty, and an empty view is no view', () => {
    const params = writeView(new URLSearchParams(), {
      query: { search: ' ', sort: null, match: 'all', filters: [] },
      columns: null,
    });
    expect(params.toString()).toBe('');
    expect(hasView(params)).toBe(false);
  });

  it('drops what the family does not know, keeping the rest', () => {
    const params = new URLSearchParams({
      q: 'ann',
      where: 'password equals x',
      sort: 'password',
      cols: 'name,secret,name,login',
    });
    expect(readView(params, fields, sortable, columns)).toEqual({
      query: { search: 'ann', sort: null, match: 'all', filters: [] },
      columns: ['name', 'login'],
    });
  });
});
