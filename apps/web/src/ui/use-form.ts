import { useCallback, useEffect, useRef, useState } from 'react';
import { describeError, type Failure } from '../api/errors';

/**
 * State of a small form: values, the failure of the last submit (form message plus field messages), and
 * whether a submit is running. A field's message goes away as soon as the field is edited.
 */
export function useForm<V extends Record<string, string | boolean>>(initial: V) {
  const [values, setValues] = useState<V>(initial);
  const [failure, setFailure] = useState<Failure | null>(null);
  const [busy, setBusy] = useState(false);
  const formRef = useRef<HTMLFormElement>(null);
  const running = useRef(false);
  /** a submit just failed: the cursor goes to the first field to fix once, not on every later edit */
  const justFailed = useRef(false);

  const set = useCallback(<K extends keyof V & string>(key: K, value: V[K]) => {
    setValues((v) => ({ ...v, [key]: value }));
    setFailure((f) => {
      if (!f || !(key in f.fields)) return f;
      const fields = { ...f.fields };
      delete fields[key];
      return { ...f, fields };
    });
  }, []);

  // After a failed submit, put the cursor in the first field to fix. Only then: editing a field clears its
  // message (a new failure object), and moving the cursor on that took the next key typed into another
  // field (issue 25 item 4: `a` went to Login, `dmin` to Password).
  useEffect(() => {
    if (!failure || !justFailed.current) return;
    justFailed.current = false;
    if (Object.keys(failure.fields).length === 0) return;
    formRef.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
  }, [failure]);

  /** Runs the submit action; it may return a Failure (local checks) or throw (API errors). */
  const submit = useCallback(async (action: () => Promise<Failure | null | void>) => {
    if (running.current) return;
    running.current = true;
    setBusy(true);
    setFailure(null);
    try {
      const result = await action();
      if (result) {
        justFailed.current = true;
        setFailure(result);
      }
    } catch (err) {
      justFailed.current = true;
      setFailure(describeError(err));
    } finally {
      running.current = false;
      setBusy(false);
    }
  }, []);

  /** Props of a text field bound to `key`. */
  const text = <K extends keyof V & string>(key: K) => ({
    name: key,
    value: String(values[key]),
    onValue: (v: string) => set(key, v as V[K]),
    error: failure?.fields[key],
  });

  return { values, set, text, failure, setFailure, busy, submit, formRef };
}
