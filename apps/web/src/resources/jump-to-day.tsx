import { useMemo, useState, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';

/** The start of the day after `day` (YYYY-MM-DD, the browser's time zone): a journal's `to` for that day. */
export function endOfDay(day: string): string | null {
  const start = new Date(`${day}T00:00:00`);
  if (Number.isNaN(start.getTime())) return null;
  start.setDate(start.getDate() + 1);
  return start.toISOString();
}

/**
 * A journal table's "jump to day": a date field for its toolbar, and the list's `to` (the end of that day),
 * so the table loads the page at that day without reading the rows after it.
 */
export function useJumpToDay(): {
  to: string | null;
  listArgs: { to: string } | undefined;
  toolbar: ReactNode;
} {
  const { t } = useTranslation();
  const [day, setDay] = useState('');
  const to = day ? endOfDay(day) : null;
  const listArgs = useMemo(() => (to ? { to } : undefined), [to]);
  const toolbar = (
    <span className="journal-jump">
      <label>
        {t('audit.jump_to_day')}{' '}
        <input type="date" value={day} onChange={(e) => setDay(e.currentTarget.value)} />
      </label>
      {day && (
        <button type="button" onClick={() => setDay('')}>
          {t('audit.jump_latest')}
        </button>
      )}
    </span>
  );
  return { to, listArgs, toolbar };
}
