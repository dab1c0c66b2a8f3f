import { expect, it } from 'vitest';
import { ScheduleCreate } from './access/schedules';
import { TimeOfDay, clockOfSeconds, secondsOfClock } from './time-of-day';

it('writes seconds after midnight as a clock time, and reads clock times back', () => {
  expect(clockOfSeconds(32_400)).toBe('09:00');
  expect(clockOfSeconds(66_630)).toBe('18:30:30');
  expect(clockOfSeconds(0)).toBe('00:00');
  expect(clockOfSeconds(86_400)).toBe('24:00');
  expect(secondsOfClock('9:00')).toBe(32_400);
  expect(secondsOfClock(' 18:30 ')).toBe(66_600);
  expect(secondsOfClock('18:30:30')).toBe(66_630);
  expect(secondsOfClock('24:00')).toBe(86_400);
  for (const bad of ['24:01', '25:00', '9:60', '09:00:60', '0900', '9h', '', '-1:00'])
    expect(secondsOfClock(bad)).toBeNull();
  for (let s = 0; s <= 86_400; s += 1_799) expect(secondsOfClock(clockOfSeconds(s))).toBe(s);
});

it('takes a clock time or seconds, and refuses what is neither', () => {
  expect(TimeOfDay.parse('09:00')).toBe(32_400);
  expect(TimeOfDay.parse(64_800)).toBe(64_800);
  expect(TimeOfDay.safeParse('25:00').success).toBe(false);
  expect(TimeOfDay.safeParse(86_401).success).toBe(false);
  const s = ScheduleCreate.parse({
    name: 'Office',
    valid_from: '2026-11-02',
    time_from: '8:30',
    time_to: '17:00',
  });
  expect(s).toMatchObject({ time_from: 30_600, time_to: 61_200 });
});
