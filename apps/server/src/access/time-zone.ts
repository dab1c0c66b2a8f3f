import { sql, type Kysely } from 'kysely';
import { isTimeZone, zoneOffsetMs } from '@lintel/core';
import type { DB } from '../db/schema';

/** A project's zone until its settings name one: the spec's "default time zone 2 hours" (docs/decisions.md). */
export const DEFAULT_PROJECT_TIME_ZONE = 'Etc/GMT-2';

/** The project's IANA time zone (`projects.settings.time_zone`), in which schedules' windows are read. */
export async function projectTimeZone(q: Kysely<DB>, projectId: number): Promise<string> {
  const r = await sql<{
    tz: string | null;
  }>`select settings->>'time_zone' as tz from projects where id = ${projectId}`.execute(q);
  const tz = r.rows[0]?.tz;
  return tz && isTimeZone(tz) ? tz : DEFAULT_PROJECT_TIME_ZONE;
}

/**
 * The offset (minutes east of UTC) of a zone as a profile holds it — an offset `+03:00` or an IANA name — at
 * an instant; null when the text is neither.
 */
export function offsetMinutesOf(zone: string | null | undefined, at: number): number | null {
  if (!zone) return null;
  const m = /^([+-])(\d{2}):?(\d{2})$/.exec(zone.trim());
  if (m) return (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3]));
  return isTimeZone(zone) ? Math.round(zoneOffsetMs(at, zone) / 60_000) : null;
}
