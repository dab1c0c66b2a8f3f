import { describe, expect, it } from 'vitest';
import type { Filter, ListQuery } from '@lintel/core';
import {
  byId,
  byName,
  csvCells,
  EXPORT_PAGE_SIZE,
  exportNamers,
  exportPageArgs,
  exportPages,
  exportRow,
  groupNamer,
  pagesById,
  plainName,
  type ListUsers,
} from './user.export';
import { UserExportColumns } from './user.import';
import type { User } from './user.resource';

const user = (id: number, over: Partial<User> = {}): User => ({
  id,
  login: `u${id}`,
  name: `User ${id}`,
  description: '',
  email: null,
  role: { id: 3, name: 'Tenant' },
  domains: [
    { id: 10, name: 'Building 1' },
    { id: 11, name: 'Apartment 1' },
  ],
  markers: [{ id: 7, name: 'VIP', color: '#112233' }],
  avatar_url: null,
  elevator_access_disabled: false,
  profile: {
    phone: '+4912345678',
    address: 'Main St 1, Berlin',
    time_zone: '+02:00',
    sip_number_id: null,
    identifier_format: 'dec',
    time_format: 'DD-MM-YYYY',
  },
  is_activated: true,
  is_invited: false,
  is_group_admin: true,
  created_at: '2025-01-01T00:00:00.000Z',
  created_by_user: null,
  ...over,
});

describe('naming references', () => {
  it('a name is written as a name only when it reads back as one', () => {
    expect(['Tenant', 'Block 7', 'Flat 1a'].map(plainName)).toEqual([true, true, true]);
    expect(['', ' padded', '42', '@1.2', 'a;b'].map(plainName)).toEqual([false, false, false, false, false]);
    expect(byId({ id: 5, name: 'Tenant' })).toBe(5);
    expect(byName({ id: 5, name: 'Tenant' })).toBe('Tenant');
    expect(byName({ id: 5, name: '2024' })).toBe(5);
  });

  it('names a group by name when unique, else by @address when unique, else by id', () => {
    const name = groupNamer([
      { id: 1, name: 'Building 1', logic_address: '1' },
      { id: 2, name: 'Apartment 1', logic_address: '1.1' },
      { id: 3, name: 'Apartment 1', logic_address: '2.1' },
      { id: 4, name: 'Twin', logic_address: null },
      { id: 5, name: 'twin', logic_address: null },
      { id: 6, name: '42', logic_address: null },
      { id: 7, name: '1.1', logic_address: '3' },
      { id: 8, name: 'Shared', logic_address: 'x' },
      { id: 9, name: 'Shared', logic_address: 'x' },
    ]);
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9].map((id) => name({ id, name: '' }))).toEqual([
      'Building 1',
      '@1.1',
      '@2.1',
      4,
      5,
      6,
      // its name is another group's address: by its own address
      '@3',
      8,
      9,
    ]);
    // a group the list did not hold is named like a role
    expect(name({ id: 99, name: 'Elsewhere' })).toBe('Elsewhere');
  });

  it('--refs id names nothing; --refs name without the groups names groups like roles', () => {
    const ids = exportNamers('id');
    expect([ids.role, ids.group, ids.marker].map((n) => n({ id: 1, name: 'A' }))).toEqual([1, 1, 1]);
    const names = exportNamers('name', null);
    expect([names.role, names.group, names.marker].map((n) => n({ id: 1, name: 'A' }))).toEqual([
      'A',
      'A',
      'A',
    ]);
  });
});

describe('a user as a row', () => {
  it('holds exactly the export columns, by id or by name', () => {
    const u = user(1);
    const byIds = exportRow(u, exportNamers('id'));
    expect(Object.keys(byIds)).toEqual([...UserExportColumns]);
    expect(byIds).toEqual({
      login: 'u1',
      name: 'User 1',
      email: '',
      description: '',
      role: 3,
      domains: [10, 11],
      markers: [7],
      phone: '+4912345678',
      address: 'Main St 1, Berlin',
      time_zone: '+02:00',
      identifier_format: 'dec',
      time_format: 'DD-MM-YYYY',
      elevator_access_disabled: false,
      is_group_admin: true,
    });
    const groups = [
      { id: 10, name: 'Building 1', logic_address: '1' },
      { id: 11, name: 'Apartment 1', logic_address: '1.1' },
      { id: 12, name: 'Apartment 1', logic_address: '2.1' },
    ];
    expect(exportRow(u, exportNamers('name', groups))).toMatchObject({
      role: 'Tenant',
      domains: ['Building 1', '@1.1'],
      markers: ['VIP'],
    });
  });

  it('as CSV cells: lists joined by ;, booleans as words, in the column order', () => {
    const cells = csvCells(exportRow(user(1, { email: 'a@b.test' }), exportNamers('id')));
    expect(cells).toEqual([
      'u1',
      'User 1',
      'a@b.test',
      '',
      3,
      '10;11',
      '7',
      '+4912345678',
      'Main St 1, Berlin',
      '+02:00',
      'dec',
      'DD-MM-YYYY',
      'false',
      'true',
    ]);
    expect(csvCells({ ...exportRow(user(2), exportNamers('id')), description: null, markers: [] })[3]).toBe(
      '',
    );
  });
});

describe('paging', () => {
  const f = (field: string): Filter => ({ field, rule: 'contains', value: 'x' });

  it('follows the ids while one more condition fits and keeps the meaning', () => {
    expect(pagesById({})).toBe(true);
    expect(pagesById({ filters: [f('name'), f('login')], match: 'all' })).toBe(true);
    expect(pagesById({ filters: [f('name')], match: 'any' })).toBe(true);
    expect(pagesById({ filters: [f('name'), f('login')], match: 'any' })).toBe(false);
    expect(pagesById({ filters: Array.from({ length: 19 }, () => f('name')) })).toBe(true);
    expect(pagesById({ filters: Array.from({ length: 20 }, () => f('name')) })).toBe(false);
  });

  it('asks for a page after the last id, or by number, always in id order with the search', () => {
    expect(
      exportPageArgs({ filters: [f('name')], match: 'any', search: ' ann ' }, { page: 3, after: 42 }),
    ).toEqual({
      filters: [f('name'), { field: 'id', rule: 'above', value: 42 }],
      match: 'all',
      sort: 'id',
      limit: EXPORT_PAGE_SIZE,
      page: 1,
      search: 'ann',
    });
    expect(
      exportPageArgs({ filters: [f('name'), f('login')], match: 'any' }, { page: 3, after: 42 }),
    ).toEqual({
      filters: [f('name'), f('login')],
      match: 'any',
      sort: 'id',
      limit: EXPORT_PAGE_SIZE,
      page: 3,
    });
  });

  /** A `user.list` over ids 1..n (filters other than `id above` ignored), recording its calls. */
  function fakeList(n: number) {
    const calls: ListQuery[] = [];
    const list: ListUsers = async (args) => {
      calls.push(args);
      const filters = (args.filters ?? []) as Filter[];
      const after = Number(filters.find((x) => x.field === 'id' && x.rule === 'above')?.value ?? 0);
      const limit = Number(args.limit ?? 50);
      const from = after ? after : (Number(args.page ?? 1) - 1) * limit;
      const ids = Array.from({ length: Math.max(0, Math.min(limit, n - from)) }, (_, i) => from + i + 1);
      return { data: ids.map((id) => user(id)), meta: { total: n } };
    };
    return { list, calls };
  }
  const collect = async (it: AsyncIterable<{ users: User[]; total: number }>) => {
    const pages: Array<{ ids: number[]; total: number }> = [];
    for await (const p of it) pages.push({ ids: p.users.map((u) => u.id), total: p.total });
    return pages;
  };

  it('reads every row once, by id, stopping at a short page', async () => {
    const { list, calls } = fakeList(2 * EXPORT_PAGE_SIZE + 5);
    const pages = await collect(exportPages(list, { filters: [f('name')] }));
    expect(pages.map((p) => p.ids.length)).toEqual([EXPORT_PAGE_SIZE, EXPORT_PAGE_SIZE, 5]);
    expect(new Set(pages.flatMap((p) => p.ids)).size).toBe(2 * EXPORT_PAGE_SIZE + 5);
    expect(pages.every((p) => p.total === 2 * EXPORT_PAGE_SIZE + 5)).toBe(true);
    expect(calls.map((c) => (c.filters as Filter[]).at(-1)!.value)).toEqual([0, 1000, 2000]);
  });

  it('by page number when the filters leave no room; an exact multiple ends with an empty page', async () => {
    const { list, calls } = fakeList(EXPORT_PAGE_SIZE);
    const pages = await collect(exportPages(list, { filters: [f('name'), f('login')], match: 'any' }));
    expect(pages.map((p) => p.ids.length)).toEqual([EXPORT_PAGE_SIZE, 0]);
    expect(calls.map((c) => c.page)).toEqual([1, 2]);
  });

  it('an empty list is one empty page with its total', async () => {
    expect(await collect(exportPages(fakeList(0).list, {}))).toEqual([{ ids: [], total: 0 }]);
  });

  it('stops with the reason once aborted, and hands the signal to the list', async () => {
    const { list, calls } = fakeList(5 * EXPORT_PAGE_SIZE);
    const controller = new AbortController();
    const seen: Array<AbortSignal | undefined> = [];
    const pages: number[] = [];
    const run = (async () => {
      for await (const p of exportPages(
        (args, signal) => (seen.push(signal), list(args)),
        {},
        controller.signal,
      )) {
        pages.push(p.users.length);
        if (pages.length === 2) controller.abort(new Error('stopped'));
      }
    })();
    await expect(run).rejects.toThrow('stopped');
    expect(pages).toEqual([EXPORT_PAGE_SIZE, EXPORT_PAGE_SIZE]);
    expect(calls).toHaveLength(2);
    expect(seen.every((s) => s === controller.signal)).toBe(true);
  });
});
