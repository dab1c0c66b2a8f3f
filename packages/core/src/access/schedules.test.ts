import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  dayDate,
  dayNumber,
  inSchedule,
  isTimeZone,
  localTime,
  ScheduleCreate,
  ScheduleUpdate,
  scheduleState,
  timeProfileOf,
  zoneOffsetMs,
} from './schedules';
import { Weekdays } from '../constants';

const at = (iso: string) => Date.parse(iso);
const weekdays = ScheduleCreate.parse({
  name: 'Office',
  valid_from: '2026-01-05',
  repeat_days: ['mon', 'tue', 'wed', 'thu', 'fri'],
});

describe('a schedule', () => {
  it('defaults to 09:00–18:00 weekly (32400–64800 s)', () => {
    expect(weekdays).toMatchObject({
      time_from: 32_400,
      time_to: 64_800,
      repeat_mode: 'weekly',
      is_all_day: false,
    });
  });

  it('opens a weekday 09:00–18:00 in the project zone', () => {
    // 2026-11-25 is a Wednesday; Moscow is UTC+3 all year
    expect(inSchedule(weekdays, at('2026-11-25T07:00:00Z'), 'Europe/Moscow')).toBe(true); // 10:00
    expect(inSchedule(weekdays, at('2026-11-25T16:00:00Z'), 'Europe/Moscow')).toBe(false); // 19:00
    expect(inSchedule(weekdays, at('2026-11-25T06:00:00Z'), 'Europe/Moscow')).toBe(true); // 09:00 sharp
    expect(inSchedule(weekdays, at('2026-11-25T15:00:00Z'), 'Europe/Moscow')).toBe(false); // 18:00: closed
    expect(inSchedule(weekdays, at('2026-11-28T07:00:00Z'), 'Europe/Moscow')).toBe(false); // Saturday
    expect(inSchedule(weekdays, at('2026-01-02T07:00:00Z'), 'Europe/Moscow')).toBe(false); // before valid_from
  });

  it('closes on a holiday, and says so', () => {
    const holidays = ['2026-11-25'];
    expect(scheduleState(weekdays, at('2026-11-25T07:00:00Z'), 'Europe/Moscow', holidays)).toBe('holiday');
    expect(scheduleState(weekdays, at('2026-11-25T16:00:00Z'), 'Europe/Moscow', holidays)).toBe('closed');
    expect(scheduleState(weekdays, at('2026-11-26T07:00:00Z'), 'Europe/Moscow', holidays)).toBe('open');
  });

  it('keeps the wall clock across DST (Berlin, the Sunday clocks go forward and the one back)', () => {
    const daily = ScheduleCreate.parse({ name: 'd', valid_from: '2026-01-01', repeat_mode: 'daily' });
    // 2026-03-29: 02:00 CET → 03:00 CEST. 09:00 local is 07:00Z after, 08:00Z the day before
    expect(inSchedule(daily, at('2026-03-28T08:00:00Z'), 'Europe/Berlin')).toBe(true);
    expect(inSchedule(daily, at('2026-03-28T07:30:00Z'), 'Europe/Berlin')).toBe(false);
    expect(inSchedule(daily, at('2026-03-29T07:00:00Z'), 'Europe/Berlin')).toBe(true);
    expect(inSchedule(daily, at('2026-03-29T06:30:00Z'), 'Europe/Berlin')).toBe(false);
    // 2026-10-25: back to CET; 18:00 local is 17:00Z
    expect(inSchedule(daily, at('2026-10-25T16:59:00Z'), 'Europe/Berlin')).toBe(true);
    expect(inSchedule(daily, at('2026-10-25T17:00:00Z'), 'Europe/Berlin')).toBe(false);
    expect(zoneOffsetMs(at('2026-03-29T00:59:00Z'), 'Europe/Berlin')).toBe(3_600_000);
    expect(zoneOffsetMs(at('2026-03-29T01:00:00Z'), 'Europe/Berlin')).toBe(7_200_000);
  });

  it('runs a window past midnight from the day it opens', () => {
    const night = ScheduleCreate.parse({
      name: 'night',
      valid_from: '2026-01-05',
      repeat_days: ['fri'],
      time_from: 22 * 3600,
      time_to: 6 * 3600,
    });
    expect(inSchedule(night, at('2026-11-27T23:00:00Z'), 'UTC')).toBe(true); // Fri 23:00
    expect(inSchedule(night, at('2026-11-28T05:59:00Z'), 'UTC')).toBe(true); // Sat 05:59
    expect(inSchedule(night, at('2026-11-28T23:00:00Z'), 'UTC')).toBe(false); // Sat 23:00
    expect(inSchedule(night, at('2026-11-27T05:00:00Z'), 'UTC')).toBe(false); // Fri 05:00 (Thu not chosen)
    // the part after midnight is the opening day's: a holiday on Friday closes Saturday 02:00
    expect(scheduleState(night, at('2026-11-28T02:00:00Z'), 'UTC', ['2026-11-27'])).toBe('holiday');
  });

  it('repeats every 2 weeks, monthly, yearly; never is one span', () => {
    const fortnight = ScheduleCreate.parse({
      name: 'f',
      valid_from: '2026-11-02', // a Monday
      repeat_mode: 'every_2_weeks',
      repeat_days: ['mon'],
      is_all_day: true,
    });
    expect(inSchedule(fortnight, at('2026-11-02T12:00:00Z'), 'UTC')).toBe(true);
    expect(inSchedule(fortnight, at('2026-11-09T12:00:00Z'), 'UTC')).toBe(false);
    expect(inSchedule(fortnight, at('2026-11-16T12:00:00Z'), 'UTC')).toBe(true);
    const monthly = ScheduleCreate.parse({ name: 'm', valid_from: '2026-01-31', repeat_mode: 'monthly' });
    expect(inSchedule(monthly, at('2026-03-31T10:00:00Z'), 'UTC')).toBe(true);
    expect(inSchedule(monthly, at('2026-02-28T10:00:00Z'), 'UTC')).toBe(false); // no 31st: skipped
    const yearly = ScheduleCreate.parse({ name: 'y', valid_from: '2024-02-29', repeat_mode: 'yearly' });
    expect(inSchedule(yearly, at('2028-02-29T10:00:00Z'), 'UTC')).toBe(true);
    expect(inSchedule(yearly, at('2027-02-28T10:00:00Z'), 'UTC')).toBe(false);
    const span = ScheduleCreate.parse({
      name: 's',
      valid_from: '2026-11-23',
      valid_to: '2026-11-27',
      repeat_mode: 'never',
    });
    expect(inSchedule(span, at('2026-11-23T08:59:00Z'), 'UTC')).toBe(false);
    expect(inSchedule(span, at('2026-11-24T03:00:00Z'), 'UTC')).toBe(true); // a contractor's week, nights too
    expect(inSchedule(span, at('2026-11-27T17:59:00Z'), 'UTC')).toBe(true);
    expect(inSchedule(span, at('2026-11-27T18:00:00Z'), 'UTC')).toBe(false);
    const until = ScheduleCreate.parse({
      name: 'u',
      valid_from: '2026-01-01',
      valid_to: '2026-11-26',
      repeat_mode: 'daily',
    });
    expect(inSchedule(until, at('2026-11-26T10:00:00Z'), 'UTC')).toBe(true);
    expect(inSchedule(until, at('2026-11-27T10:00:00Z'), 'UTC')).toBe(false);
  });

  it('refuses an end before the start, an empty window and an unknown zone', () => {
    expect(
      ScheduleCreate.safeParse({ name: 'x', valid_from: '2026-02-01', valid_to: '2026-01-01' }).success,
    ).toBe(false);
    expect(
      ScheduleCreate.safeParse({ name: 'x', valid_from: '2026-02-01', time_from: 100, time_to: 100 }).success,
    ).toBe(false);
    expect(
      ScheduleCreate.safeParse({ name: 'x', valid_from: '2026-02-01', repeat_days: ['someday'] }).success,
    ).toBe(false);
    expect(isTimeZone('Europe/Moscow')).toBe(true);
    expect(isTimeZone('Mars/Olympus')).toBe(false);
  });

  it('is a device time profile', () => {
    expect(timeProfileOf({ ...weekdays, id: 7 }, 'Europe/Moscow', ['2026-12-31', '2026-01-01'])).toEqual({
      key: 'schedule-7',
      name: 'Office',
      time_zone: 'Europe/Moscow',
      valid_from: '2026-01-05',
      valid_to: null,
      repeat_mode: 'weekly',
      days: ['mon', 'tue', 'wed', 'thu', 'fri'],
      from: 32_400,
      to: 64_800,
      holidays: ['2026-01-01', '2026-12-31'],
    });
  });
});

// The local time of the cached offsets against Intl read afresh, in zones with DST and odd offsets.
describe('local time (property)', () => {
  const zones = [
    'Europe/Berlin',
    'America/New_York',
    'Asia/Kathmandu',
    'Australia/Lord_Howe',
    'America/Santiago',
    'UTC',
  ];
  it('agrees with Intl on 1,000 instants', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: at('2000-01-01T00:00:00Z'), max: at('2040-01-01T00:00:00Z') }),
        fc.constantFrom(...zones),
        (instant, tz) => {
          const p: Record<string, string> = {};
          for (const part of new Intl.DateTimeFormat('en-GB', {
            timeZone: tz,
            hourCycle: 'h23',
            year: 'numeric',
            month: '2-digit',
            day: '2-digit',
            hour: '2-digit',
            minute: '2-digit',
            second: '2-digit',
            weekday: 'short',
          }).formatToParts(instant))
            p[part.type] = part.value;
          const t = localTime(instant, tz);
          expect(dayDate(t.day)).toBe(`${p.year}-${p.month}-${p.day}`);
          expect(t.seconds).toBe(Number(p.hour) * 3600 + Number(p.minute) * 60 + Number(p.second));
          // weekly on that weekday only: open exactly within the window
          const wd = Weekdays[['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].indexOf(p.weekday!)]!;
          const s = ScheduleCreate.parse({ name: 'w', valid_from: '1999-01-01', repeat_days: [wd] });
          expect(inSchedule(s, instant, tz)).toBe(t.seconds >= 32_400 && t.seconds < 64_800);
          expect(dayNumber(dayDate(t.day))).toBe(t.day);
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('ScheduleUpdate', () => {
  it('fills no field left out (a PATCH keeps the rest)', () => {
    expect(ScheduleUpdate.parse({ name: 'Nights' })).toEqual({ name: 'Nights' });
    expect(ScheduleUpdate.safeParse({ time_from: 3600, time_to: 3600 }).success).toBe(false);
  });
});
