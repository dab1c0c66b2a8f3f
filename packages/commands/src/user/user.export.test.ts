import { describe, expect, it } from 'vitest';
import { byId, byName, csvCells, exportNamers, exportRow, groupNamer, plainName } from './user.export';
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
