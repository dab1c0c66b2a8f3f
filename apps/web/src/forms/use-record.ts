import { useCallback, useEffect, useMemo, useState } from 'react';
import { familyCommandId } from '@lintel/commands';
import { runCommand } from '../api/client';
import { describeError } from '../api/errors';
import { i18next } from '../i18n';
import { rememberName } from '../pickers/names';
import type { Family } from './schema';

/**
 * One row of a family for an edit screen (`<family>.get`). A failure is the catalogue message; the screen
 * shows it instead of the form (spec part 2 §8: "a fetch failure shows a handled error and aborts opening").
 */
export function useRecord<T extends { id: number; name: string }>(family: Family, id: number) {
  const [record, setRecord] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setError(null);
    if (!Number.isInteger(id) || id < 1) {
      setError(i18next.t('errors:http.item_not_found'));
      return;
    }
    runCommand(familyCommandId(family, 'get'), { id })
      .then((r) => {
        if (!live) return;
        const rec = r as unknown as T;
        rememberName(family, rec.id, rec.name);
        setRecord(rec);
      })
      .catch((err: unknown) => live && setError(describeError(err).message));
    return () => {
      live = false;
    };
  }, [family, id, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  // what the edit form starts from: the record's values, and its id fixed
  const formOptions = useMemo(
    () => ({ record: record as unknown as Record<string, unknown>, fixed: { id } }),
    [record, id],
  );
  return { record, setRecord, error, reload, formOptions };
}
