/**
 * A time of day stored as seconds after local midnight (a schedule's window: 09:00 is 32,400; 86,400 is the
 * day's end), shown and typed as a clock time. Forms draw a time input for it and the CLI takes `09:00` as
 * well as the seconds (the `timeOfDay` trait, field-traits.ts).
 */
import { z } from 'zod';

const DAY = 86_400;

/** `09:00` (with seconds when there are any: `09:00:30`); the day's end, 86,400, is `24:00`. */
export function clockOfSeconds(seconds: number): string {
  const s = Math.max(0, Math.min(DAY, Math.round(seconds)));
  const two = (n: number) => String(n).padStart(2, '0');
  const hm = `${two(Math.floor(s / 3600))}:${two(Math.floor((s % 3600) / 60))}`;
  return s % 60 ? `${hm}:${two(s % 60)}` : hm;
}

/** Seconds after midnight of `9:00`, `09:00`, `09:00:30` or `24:00`; null for anything else. */
export function secondsOfClock(text: string): number | null {
  const m = /^\s*(\d{1,2}):(\d{2})(?::(\d{2}))?\s*$/.exec(text);
  if (!m) return null;
  const [h, min, sec] = [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)];
  if (min > 59 || sec > 59) return null;
  const total = h * 3600 + min * 60 + sec;
  return total <= DAY ? total : null;
}

/** Seconds after local midnight, 0 to 86,400; a clock time (`09:00`) is taken too. */
export const TimeOfDay = z
  .preprocess((v) => (typeof v === 'string' ? (secondsOfClock(v) ?? v) : v), z.number().int().min(0).max(DAY))
  .meta({ timeOfDay: true });
