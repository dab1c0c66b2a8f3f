import { TimeFormats, type TimeFormatCode } from '@lintel/core';

/**
 * Dates in the user's format (profile `time_format`, spec part 2 §9) and time zone (profile `time_zone`,
 * an offset such as `+02:00`; anything else means the browser's own zone).
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

/** '' for a value that is not a date. */
export function formatDate(value: unknown, style: DateStyle = defaultDateStyle): string {
  if (value === null || value === undefined || value === '') return '';
  const d = value instanceof Date ? value : new Date(typeof value === 'number' ? value : String(value));
  const t = d.getTime();
  if (Number.isNaN(t)) return '';
  const offset = offsetMinutes(style.timeZone);
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
  const pattern: string = TimeFormats[style.timeFormat] ?? TimeFormats['DD-MM-YYYY'];
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

const numberFormats = new Map<string, Intl.NumberFormat>();

/** 100,000 / 100 000 by the interface language. */
export function formatCount(n: number, locale: string): string {
  let f = numberFormats.get(locale);
  if (!f) {
    f = new Intl.NumberFormat(locale);
    numberFormats.set(locale, f);
  }
  return f.format(n);
}
