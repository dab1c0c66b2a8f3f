/**
 * Schedules (spec part 1 §3 "Schedule", part 2 §9 repeat options and the default window 32400–64800 s) in the
 * project's time zone, with holiday exceptions, and the pure question "is it open at this instant?".
 *
 * A schedule is a calendar event: its first day `valid_from` (a local date), an optional last day
 * `valid_to`, a window `time_from`–`time_to` (seconds after local midnight; the whole day when `is_all_day`;
 * a window whose end is not after its start runs past midnight and belongs to the day it opens) and a
 * repeat: never (one span, from the first day's opening to the last day's closing), daily, weekly on
 * `repeat_days`, every 2 weeks on `repeat_days` (the weeks of `valid_from`'s, counted from Monday), monthly
 * (on `valid_from`'s day of the month; months without it are skipped) or yearly (its month and day; 29
 * February only in leap years). Wall-clock times are read in the IANA zone given, so DST needs nothing more:
 * 09:00 is 09:00 in summer and in winter. On a holiday (a local date of the calendar) the windows that open
 * that day do not open.
 */
import { z } from 'zod';
import { Defaults, RepeatOptions, Weekdays } from '../constants';
import { withoutDefaults } from './partial';
import { TimeOfDay } from '../time-of-day';

export type RepeatOption = (typeof RepeatOptions)[number];
export type Weekday = (typeof Weekdays)[number];

/** a local date, a date input in the console's forms */
const LocalDate = z.iso.date().meta({ date: true });

const ScheduleFields = z.object({
  name: z.string().trim().min(1).max(255),
  description: z.string().max(1000).default(''),
  valid_from: LocalDate,
  valid_to: LocalDate.nullable().default(null),
  is_all_day: z.boolean().default(false),
  repeat_mode: z.enum(RepeatOptions).default('weekly'),
  repeat_days: z.array(z.enum(Weekdays)).max(7).default([]),
  time_from: TimeOfDay.default(Defaults.scheduleWindow.from),
  time_to: TimeOfDay.default(Defaults.scheduleWindow.to),
  access_rules: z.array(z.number().int().positive()).max(1000).default([]),
});

function scheduleChecks(
  v: Partial<{
    valid_from: string;
    valid_to: string | null;
    is_all_day: boolean;
    time_from: number;
    time_to: number;
  }>,
  ctx: z.RefinementCtx,
): void {
  if (v.valid_from && v.valid_to && v.valid_to < v.valid_from)
    ctx.addIssue({ code: 'custom', path: ['valid_to'], message: 'period_order' });
  if (!v.is_all_day && v.time_from !== undefined && v.time_to !== undefined && v.time_from === v.time_to)
    ctx.addIssue({ code: 'custom', path: ['time_to'], message: 'schedule_window_empty' });
}

export const ScheduleCreate = ScheduleFields.superRefine(scheduleChecks);
export type ScheduleCreate = z.output<typeof ScheduleCreate>;
/** A change: only the fields given (no default fills a field left out, so a PATCH keeps the rest). */
export const ScheduleUpdate = withoutDefaults(ScheduleFields).superRefine(scheduleChecks);
export type ScheduleUpdate = z.output<typeof ScheduleUpdate>;

export const Schedule = ScheduleFields.extend({ id: z.number().int() });
export type Schedule = z.output<typeof Schedule>;

/** What the decision needs of a schedule. */
export type ScheduleSpec = Pick<
  Schedule,
  'valid_from' | 'valid_to' | 'is_all_day' | 'repeat_mode' | 'repeat_days' | 'time_from' | 'time_to'
>;

// ----- local time in an IANA zone --------------------------------------------------------------------------

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(tz, f);
  }
  return f;
}

/** An IANA time zone this runtime knows (`Europe/Moscow`, `UTC`). */
export function isTimeZone(tz: string): boolean {
  try {
    formatter(tz);
    return true;
  } catch {
    return false;
  }
}

export const TimeZone = z.string().min(1).max(64).refine(isTimeZone, { message: 'time_zone' });

// Offsets change only at instants on a quarter hour (every zone's offset is a whole number of quarter hours
// since 1970-ish), so the offset of a zone is constant within a quarter hour of UTC: cached by that.
const QUARTER = 900_000;
const offsets = new Map<string, Map<number, number>>();

/** The zone's offset from UTC at an instant, in ms (Moscow: +3 h). */
export function zoneOffsetMs(instant: number, tz: string): number {
  let byZone = offsets.get(tz);
  if (!byZone) offsets.set(tz, (byZone = new Map()));
  const bucket = Math.floor(instant / QUARTER);
  let off = byZone.get(bucket);
  if (off === undefined) {
    const at = bucket * QUARTER;
    const p: Record<string, number> = {};
    for (const part of formatter(tz).formatToParts(at))
      if (part.type !== 'literal') p[part.type] = Number(part.value);
    off = Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!) - at;
    if (byZone.size > 50_000) byZone.clear();
    byZone.set(bucket, off);
  }
  return off;
}

/** Local wall-clock facts of an instant in a zone. */
export interface LocalTime {
  /** days since 1970-01-01 of the local date */
  day: number;
  /** seconds after local midnight */
  seconds: number;
}

export function localTime(instant: number, tz: string): LocalTime {
  const local = instant + zoneOffsetMs(instant, tz);
  const day = Math.floor(local / 86_400_000);
  return { day, seconds: Math.floor((local - day * 86_400_000) / 1000) };
}

/** Days since 1970-01-01 of a `YYYY-MM-DD` date. */
export function dayNumber(date: string): number {
  return Math.floor(Date.parse(`${date}T00:00:00Z`) / 86_400_000);
}

/** The `YYYY-MM-DD` of a day number. */
export function dayDate(day: number): string {
  return new Date(day * 86_400_000).toISOString().slice(0, 10);
}

/** 0 Monday … 6 Sunday. */
const weekdayOf = (day: number): number => (((day + 3) % 7) + 7) % 7;
const WEEKDAY_INDEX = new Map<string, number>(Weekdays.map((d, i) => [d, i]));

// ----- the question -----------------------------------------------------------------------------------------

/** A calendar of holidays: local dates (`YYYY-MM-DD`) or their day numbers. */
export type Holidays = ReadonlySet<string> | ReadonlySet<number> | readonly string[] | null | undefined;

/** Holidays as a set of day numbers, made once per calendar and reused. */
export function holidayDays(holidays: Holidays): ReadonlySet<number> {
  if (!holidays) return EMPTY;
  const out = new Set<number>();
  for (const h of holidays as Iterable<string | number>) out.add(typeof h === 'number' ? h : dayNumber(h));
  return out;
}
const EMPTY: ReadonlySet<number> = new Set();

/** A schedule with its dates read once (what the index keeps; `compileSchedule`). */
export interface CompiledSchedule {
  first: number;
  last: number;
  allDay: boolean;
  mode: RepeatOption;
  /** bit i: weekday i (0 Monday) */
  days: number;
  from: number;
  to: number;
  /** the first day's date parts (monthly, yearly) */
  dom: number;
  month: number;
}

export function compileSchedule(s: ScheduleSpec): CompiledSchedule {
  const first = dayNumber(s.valid_from);
  let days = 0;
  for (const d of s.repeat_days) days |= 1 << WEEKDAY_INDEX.get(d)!;
  if (days === 0) days = 1 << weekdayOf(first);
  const d = new Date(first * 86_400_000);
  return {
    first,
    last: s.valid_to ? dayNumber(s.valid_to) : Number.POSITIVE_INFINITY,
    allDay: s.is_all_day,
    mode: s.repeat_mode,
    days,
    from: s.is_all_day ? 0 : s.time_from,
    to: s.is_all_day ? 86_400 : s.time_to,
    dom: d.getUTCDate(),
    month: d.getUTCMonth(),
  };
}

/** Does a repeating schedule have an occurrence (a window opening) on this local day? */
function occursOn(c: CompiledSchedule, day: number): boolean {
  if (day < c.first || day > c.last) return false;
  switch (c.mode) {
    case 'never':
      return day === c.first;
    case 'daily':
      return true;
    case 'weekly':
      return (c.days & (1 << weekdayOf(day))) !== 0;
    case 'every_2_weeks': {
      if ((c.days & (1 << weekdayOf(day))) === 0) return false;
      const mondayFirst = c.first - weekdayOf(c.first);
      const mondayDay = day - weekdayOf(day);
      return ((mondayDay - mondayFirst) / 7) % 2 === 0;
    }
    case 'monthly':
      return new Date(day * 86_400_000).getUTCDate() === c.dom;
    case 'yearly': {
      const d = new Date(day * 86_400_000);
      return d.getUTCDate() === c.dom && d.getUTCMonth() === c.month;
    }
  }
}

export type ScheduleState = 'open' | 'closed' | 'holiday';

/** The schedule at a local time: open, closed, or closed because the day its window opened is a holiday. */
export function scheduleStateAt(
  c: CompiledSchedule,
  t: LocalTime,
  holidays: ReadonlySet<number>,
): ScheduleState {
  const overnight = c.to <= c.from;
  if (c.mode === 'never') {
    // one span: from the first day's opening to the last day's closing (the next day's, overnight)
    const lastDay = Number.isFinite(c.last) ? c.last : c.first;
    const start = c.first * 86_400 + c.from;
    const end = (lastDay + (overnight ? 1 : 0)) * 86_400 + c.to;
    const now = t.day * 86_400 + t.seconds;
    if (now < start || now >= end) return 'closed';
    // a holiday closes the span on that day
    return holidays.has(t.day) ? 'holiday' : 'open';
  }
  let openedOn: number | null = null;
  if (overnight) {
    if (t.seconds >= c.from && occursOn(c, t.day)) openedOn = t.day;
    else if (t.seconds < c.to && occursOn(c, t.day - 1)) openedOn = t.day - 1;
  } else if (t.seconds >= c.from && t.seconds < c.to && occursOn(c, t.day)) openedOn = t.day;
  if (openedOn === null) return 'closed';
  return holidays.has(openedOn) ? 'holiday' : 'open';
}

/** The schedule's state at an instant in the zone `tz`, with a holiday calendar. */
export function scheduleState(
  schedule: ScheduleSpec | CompiledSchedule,
  instant: number | Date,
  tz: string,
  holidays?: Holidays,
): ScheduleState {
  const c = 'mode' in schedule ? schedule : compileSchedule(schedule);
  return scheduleStateAt(
    c,
    localTime(typeof instant === 'number' ? instant : instant.getTime(), tz),
    holidayDays(holidays),
  );
}

/** Is the schedule open at this instant in the zone `tz`, holidays excepted? */
export function inSchedule(
  schedule: ScheduleSpec | CompiledSchedule,
  instant: number | Date,
  tz: string,
  holidays?: Holidays,
): boolean {
  return scheduleState(schedule, instant, tz, holidays) === 'open';
}

/**
 * A schedule as a device's time profile (what a panel keeps to decide alone while the platform is down):
 * its key (`schedule-{id}`), the zone, the window per weekday, the repeat and the holidays ahead.
 */
export interface TimeProfile {
  key: string;
  name: string;
  time_zone: string;
  valid_from: string;
  valid_to: string | null;
  repeat_mode: RepeatOption;
  days: Weekday[];
  from: number;
  to: number;
  holidays: string[];
}

export function timeProfileOf(
  s: ScheduleSpec & { id: number; name: string },
  tz: string,
  holidays: readonly string[] = [],
): TimeProfile {
  const c = compileSchedule(s);
  return {
    key: `schedule-${s.id}`,
    name: s.name,
    time_zone: tz,
    valid_from: s.valid_from,
    valid_to: s.valid_to,
    repeat_mode: s.repeat_mode,
    days: Weekdays.filter((_, i) => (c.days & (1 << i)) !== 0),
    from: c.from,
    to: c.to,
    holidays: [...holidays].sort(),
  };
}
