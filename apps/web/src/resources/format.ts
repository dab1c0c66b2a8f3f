import { isTimeZone, TimeFormats, zoneOffsetMs, type TimeFormatCode } from '@lintel/core';

/**
 * Dates in the user's format (profile `time_format`, spec part 2 §9) and time zone (profile `time_zone`: an
 * offset such as `+02:00`, an IANA zone such as `Europe/Moscow`, or nothing — the browser's own zone, the
 * default: issue 25, item 2).
 */
export interface DateStyle {
  timeFormat: TimeFormatCode;
  timeZone: string | null;
}

export const defaultDateStyle: DateStyle = { timeFormat: 'DD-MM-YYYY', timeZone: null };

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** Minutes east of UTC for `+02:00`, `-0330`, `UTC+3`; null when it is not an offset. */
export function offsetMinutes(zone: string | null | undefined): number | null {
  if (!zone) return null;
  const m = /^(?:UTC|GMT)?\s*([+-])(\d{1,2})(?::?(\d{2}))?$/i.exec(zone.trim());
  if (!m) return null;
  const h = Number(m[2]);
  const min = Number(m[3] ?? 0);
  if (h > 14 || min > 59) return null;
  return (m[1] === '-' ? -1 : 1) * (h * 60 + min);
}

/** '' for a value that is not a date; `withTime: false` gives the day alone. */
export function formatDate(value: unknown, style: DateStyle = defaultDateStyle, withTime = true): string {
  if (value === null || value === undefined || value === '') return '';
  const d = value instanceof Date ? value : new Date(typeof value === 'number' ? value : String(value));
  const t = d.getTime();
  if (Number.isNaN(t)) return '';
  // an IANA zone's offset at that instant (daylight saving included), else the offset written, else none
  const zone = style.timeZone?.trim();
  const offset = offsetMinutes(zone) ?? (zone && isTimeZone(zone) ? zoneOffsetMs(t, zone) / 60_000 : null);
  let parts: { Y: number; M: number; D: number; h: number; m: number; s: number };
  if (offset === null) {
    parts = {
      Y: d.getFullYear(),
      M: d.getMonth() + 1,
      D: d.getDate(),
      h: d.getHours(),
      m: d.getMinutes(),
      s: d.getSeconds(),
    };
  } else {
    const z = new Date(t + offset * 60_000);
    parts = {
      Y: z.getUTCFullYear(),
      M: z.getUTCMonth() + 1,
      D: z.getUTCDate(),
      h: z.getUTCHours(),
      m: z.getUTCMinutes(),
      s: z.getUTCSeconds(),
    };
  }
  const full: string = TimeFormats[style.timeFormat] ?? TimeFormats['DD-MM-YYYY'];
  const pattern = withTime ? full : full.split(' ')[0]!;
  return pattern.replace(/YYYY|MM|DD|HH|NN|SS/g, (token) => {
    switch (token) {
      case 'YYYY':
        return pad(parts.Y, 4);
      case 'MM':
        return pad(parts.M);
      case 'DD':
        return pad(parts.D);
      case 'HH':
        return pad(parts.h);
      case 'NN':
        return pad(parts.m);
      default:
        return pad(parts.s);
    }
  });
}

/** The day alone (a licence's end), in the user's format and time zone. */
export function formatDay(value: unknown, style: DateStyle = defaultDateStyle): string {
  return formatDate(value, style).split(' ')[0] ?? '';
}

const numberFormats = new Map<string, Intl.NumberFormat>();

/** 100,000 / 100 000 by the interface language. */
/** An estimated count as people say it: three significant digits (12,345 → 12,300; 987 → 987). */
export function roundEstimate(n: number): number {
  if (n < 1000) return Math.round(n);
  const step = 10 ** (Math.floor(Math.log10(n)) - 2);
  return Math.round(n / step) * step;
}

export function formatCount(n: number, locale: string): string {
  let f = numberFormats.get(locale);
  if (!f) {
    f = new Intl.NumberFormat(locale);
    numberFormats.set(locale, f);
  }
  return f.format(n);
}

const relativeFormats = new Map<string, Intl.RelativeTimeFormat>();
const STEPS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['second', 60],
  ['minute', 60],
  ['hour', 24],
  ['day', 30],
  ['month', 12],
  ['year', Infinity],
];

/**
 * How long ago (or until) a moment was, in the interface language ("5 minutes ago", "5 минут назад"): the
 * browser's own wording of each language, so no plural forms of ours. '' for a value that is not a date.
 */
export function formatRelative(value: unknown, locale: string, now = Date.now()): string {
  const t = new Date(typeof value === 'number' ? value : String(value)).getTime();
  if (value === null || value === undefined || value === '' || Number.isNaN(t)) return '';
  let f = relativeFormats.get(locale);
  if (!f) {
    f = new Intl.RelativeTimeFormat(locale, { numeric: 'auto' });
    relativeFormats.set(locale, f);
  }
  let amount = (t - now) / 1000;
  for (const [unit, size] of STEPS) {
    if (Math.abs(amount) < size || unit === 'year') return f.format(Math.round(amount), unit);
    amount /= size;
  }
  return '';
}
