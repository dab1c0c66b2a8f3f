import { describe, expect, it } from 'vitest';
import {
  callDuration,
  contactLetter,
  dayKey,
  groupByDay,
  groupContacts,
  recentOf,
  searchByName,
} from './directory';

describe('contacts', () => {
  it('groups by the first letter of the name in any script, "?" last when there is none', () => {
    const groups = groupContacts(
      [
        { name: 'bob' },
        { name: 'Алла' },
        { name: '' },
        { name: 'Ann' },
        { name: '  42 flat' },
        { name: null },
        { name: 'Борис' },
      ],
      'ru',
    );
    expect(groups.map((g) => [g.letter, g.contacts.map((c) => c.name)])).toEqual([
      ['А', ['Алла']],
      ['Б', ['Борис']],
      ['A', ['Ann']],
      ['B', ['bob']],
      ['?', ['', null, '  42 flat']],
    ]);
    expect(contactLetter('émile')).toBe('É');
  });
});

describe('recents', () => {
  const row = (from: string, to: string, created_at: string) => ({
    from: { number: from, user: from === '200' ? { name: 'Resident' } : null },
    to: { number: to, user: null },
    created_at,
  });

  it('sees each call from the own number: its way and the other party', () => {
    expect(recentOf(row('100', '200', '2026-01-01T00:00:00Z'), '100')).toMatchObject({
      way: 'outgoing',
      other: { number: '200', name: null },
    });
    expect(recentOf(row('200', '100', '2026-01-01T00:00:00Z'), '100')).toMatchObject({
      way: 'incoming',
      other: { number: '200', name: 'Resident' },
    });
  });

  it("groups by the day in the user's time zone", () => {
    const rows = [
      row('1', '2', '2026-03-02T01:00:00Z'),
      row('1', '2', '2026-03-01T23:30:00Z'),
      row('1', '2', '2026-03-01T10:00:00Z'),
    ];
    expect(groupByDay(rows, 'UTC').map((g) => [g.day, g.rows.length])).toEqual([
      ['2026-03-02', 1],
      ['2026-03-01', 2],
    ]);
    // in Moscow (UTC+3) the 23:30 call is already the 2nd
    expect(groupByDay(rows, 'Europe/Moscow').map((g) => [g.day, g.rows.length])).toEqual([
      ['2026-03-02', 2],
      ['2026-03-01', 1],
    ]);
    expect(dayKey('2026-12-31T22:00:00Z', 'Asia/Tokyo')).toBe('2027-01-01');
  });

  it('shows a duration as m:ss, h:mm:ss from an hour', () => {
    expect(callDuration(0)).toBe('0:00');
    expect(callDuration(75)).toBe('1:15');
    expect(callDuration(3725)).toBe('1:02:05');
  });
});

describe('the interception panel’s group search', () => {
  const groups = [
    { id: 1, name: 'Building North' },
    { id: 2, name: 'Корпус Б' },
    { id: 3, name: 'north annex' },
    { id: 4, name: null },
  ];
  it('keeps the groups whose name holds the query, any case and script, in their order', () => {
    expect(searchByName(groups, 'NORTH').map((g) => g.id)).toEqual([1, 3]);
    expect(searchByName(groups, '  корпус ').map((g) => g.id)).toEqual([2]);
    expect(searchByName(groups, 'nobody')).toEqual([]);
  });
  it('an empty query keeps them all', () => {
    expect(searchByName(groups, '  ')).toEqual(groups);
  });
});
