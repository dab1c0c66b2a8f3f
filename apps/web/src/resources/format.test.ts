import { describe, expect, it } from 'vitest';
import { formatCount, formatDate, formatRelative, offsetMinutes } from './format';
import { fieldValue, valueText } from './table-columns';

describe('dates in the user format', () => {
  const iso = '2025-03-07T21:05:09Z';
  it('follows time_format and an offset time zone', () => {
    expect(formatDate(iso, { timeFormat: 'DD-MM-YYYY', timeZone: '+02:00' })).toBe('07.03.2025 23:05:09');
    expect(formatDate(iso, { timeFormat: 'MM-DD-YYYY', timeZone: '+03:00' })).toBe('03/08/2025 00:05:09');
    expect(formatDate(iso, { timeFormat: 'YYYY-MM-DD', timeZone: '-05:30' })).toBe('2025-03-07 15:35:09');
    expect(formatDate(iso, { timeFormat: 'YYYY-MM-DD', timeZone: 'UTC+0' })).toBe('2025-03-07 21:05:09');
  });

  it('follows an IANA zone, daylight saving included, and the browser zone when there is none', () => {
    expect(formatDate(iso, { timeFormat: 'YYYY-MM-DD', timeZone: 'Asia/Tokyo' })).toBe('2025-03-08 06:05:09');
    // New York: UTC-5 in winter, UTC-4 in summer
    expect(formatDate(iso, { timeFormat: 'YYYY-MM-DD', timeZone: 'America/New_York' })).toBe(
      '2025-03-07 16:05:09',
    );
    expect(
      formatDate('2025-07-07T21:05:09Z', { timeFormat: 'YYYY-MM-DD', timeZone: 'America/New_York' }),
    ).toBe('2025-07-07 17:05:09');
    const local = new Date(iso);
    const p = (n: number) => String(n).padStart(2, '0');
    const browser = `${local.getFullYear()}-${p(local.getMonth() + 1)}-${p(local.getDate())} ${p(local.getHours())}:${p(local.getMinutes())}:${p(local.getSeconds())}`;
    expect(formatDate(iso, { timeFormat: 'YYYY-MM-DD', timeZone: '' })).toBe(browser);
    expect(formatDate(iso, { timeFormat: 'YYYY-MM-DD', timeZone: 'Not/AZone' })).toBe(browser);
  });

  it('reads offsets and nothing else', () => {
    expect(offsetMinutes('+02:00')).toBe(120);
    expect(offsetMinutes('-0330')).toBe(-210);
    expect(offsetMinutes('GMT+3')).toBe(180);
    expect(offsetMinutes('Europe/Moscow')).toBeNull();
    expect(offsetMinutes('+25:00')).toBeNull();
  });

  it('is empty for what is not a date', () => {
    expect(formatDate(null)).toBe('');
    expect(formatDate('soon')).toBe('');
  });

  it('groups digits by language', () => {
    expect(formatCount(100000, 'en')).toBe('100,000');
    expect(formatCount(100000, 'ru').replace(/\s/g, ' ')).toBe('100 000');
  });
});

describe('cell text by kind', () => {
  const words = { yes: 'Yes', no: 'No' };
  const style = { timeFormat: 'YYYY-MM-DD', timeZone: '+00:00' } as const;
  it('shows refs as names, booleans as words, and nested profile fields', () => {
    const user = {
      id: 1,
      role: { id: 3, name: 'Admin' },
      domains: [
        { id: 1, name: 'A' },
        { id: 2, name: 'B' },
      ],
      is_activated: false,
      profile: { phone: '+4912345678' },
    };
    expect(valueText('ref', fieldValue(user, 'role'), style, words)).toBe('Admin');
    expect(valueText('refs', fieldValue(user, 'domains'), style, words)).toBe('A, B');
    expect(valueText('boolean', fieldValue(user, 'is_activated'), style, words)).toBe('No');
    expect(valueText('text', fieldValue(user, 'phone'), style, words)).toBe('+4912345678');
    expect(valueText('date', '2025-01-02T03:04:05Z', style, words)).toBe('2025-01-02 03:04:05');
    expect(valueText('text', null, style, words)).toBe('');
    expect(fieldValue(user, 'missing')).toBeUndefined();
  });
});

describe('how long ago, in the interface language', () => {
  const now = Date.parse('2026-06-15T12:00:00Z');
  it('picks the largest unit that fits', () => {
    expect(formatRelative('2026-06-15T11:59:30Z', 'en', now)).toBe('30 seconds ago');
    expect(formatRelative('2026-06-15T11:55:00Z', 'en', now)).toBe('5 minutes ago');
    expect(formatRelative('2026-06-15T09:00:00Z', 'en', now)).toBe('3 hours ago');
    expect(formatRelative('2026-06-14T12:00:00Z', 'en', now)).toBe('yesterday');
    expect(formatRelative('2026-07-15T12:00:00Z', 'en', now)).toBe('next month');
    expect(formatRelative('2026-06-15T11:55:00Z', 'ru', now)).toBe('5 минут назад');
    expect(formatRelative('not a date', 'en', now)).toBe('');
    expect(formatRelative(null, 'en', now)).toBe('');
  });
});
