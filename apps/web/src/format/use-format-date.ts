import { useCallback } from 'react';
import { useAtomValue } from 'jotai';
import { defaultDateStyle, formatDate } from '../resources/format';
import { profileAtom } from '../session/session';

/**
 * The signed-in user's date formatter: the profile's time format and time zone (spec part 2 §9), through the
 * one formatter the tables use.
 */
export function useFormatDate(withTime = true): (value: unknown) => string {
  const profile = useAtomValue(profileAtom);
  const timeFormat = profile?.profile.time_format ?? defaultDateStyle.timeFormat;
  const timeZone = profile?.profile.time_zone ?? defaultDateStyle.timeZone;
  return useCallback(
    (value: unknown) => formatDate(value, { timeFormat, timeZone }, withTime),
    [timeFormat, timeZone, withTime],
  );
}
