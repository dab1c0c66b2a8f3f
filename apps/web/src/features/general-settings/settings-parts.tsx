import { useEffect, useState, type ReactNode } from 'react';
import { useAtomValue } from 'jotai';
import type { CommandId } from '@lintel/commands';
import type { ArgsOf, ResultOf } from '../../api/client';
import { describeError, validateArgs } from '../../api/errors';
import { pushAlert } from '../../alerts/alerts';
import { dataVersionAtom, execute } from '../../commands/execute';

/** The parts the tabs of /general-settings share: running a form's command, loading a tab, a section. */

/** Runs a command from a form: its error as an alert, a success alert when it says so. */
export async function run(id: CommandId, args: Record<string, unknown>, done?: string): Promise<boolean> {
  try {
    await execute(id as never, args as never, 'ui');
    if (done) pushAlert('success', done);
    return true;
  } catch (err) {
    pushAlert('error', describeError(err).message);
    return false;
  }
}

/**
 * Runs a settings form's command: its arguments checked first by the command's own schema, as the server
 * would, and a refusal (here or by the server) an alert naming the fields, which are handed back to mark them.
 */
export async function save<Id extends CommandId>(
  id: Id,
  args: Record<string, unknown>,
  onFields: (fields: Record<string, string>) => void,
): Promise<ResultOf<Id> | null> {
  const bad = validateArgs(id, args as ArgsOf<Id>);
  if (bad) {
    onFields(bad.fields);
    pushAlert('error', bad.message);
    return null;
  }
  try {
    const result = await execute(id, args, 'ui');
    onFields({});
    return result;
  } catch (err) {
    const failure = describeError(err, id);
    onFields(failure.fields);
    pushAlert('error', failure.message);
    return null;
  }
}

export function useLoad<T>(load: () => Promise<T>): [T | null, string | null, () => void] {
  const version = useAtomValue(dataVersionAtom);
  const [value, setValue] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    load()
      .then((v) => live && (setValue(v), setError(null)))
      .catch((err: unknown) => live && setError(describeError(err).message));
    return () => {
      live = false;
    };
  }, [version, tick]);
  return [value, error, () => setTick((n) => n + 1)];
}

export function Section({ title, children }: { title: string; children: ReactNode }) {
  return (
    <section className="flex max-w-3xl flex-col gap-2">
      <h2 className="text-sm font-semibold">{title}</h2>
      {children}
    </section>
  );
}

export type Tr = (key: string, params?: Record<string, unknown>) => string;
