import { useEffect, useState } from 'react';
import { familyCommandId } from '@lintel/commands';
import { runCommand } from '../api/client';
import type { Family } from '../forms/schema';
import { knownName, rememberName } from './names';

/**
 * Names for ids nobody has seen yet on this page (a filter read from the address): asked of the family's
 * `get` once each; the returned function names an id, `#id` until its name is known or when it cannot be read.
 */
export function useNames(
  wanted: readonly { family: Family; id: number }[],
): (family: Family, id: number) => string {
  const [, setVersion] = useState(0);
  const missing = wanted.filter((w) => knownName(w.family, w.id) === undefined);
  const key = missing.map((m) => `${m.family}:${m.id}`).join(',');
  useEffect(() => {
    if (!key) return;
    let live = true;
    void Promise.all(
      key.split(',').map((k) => {
        const [family, id] = k.split(':') as [Family, string];
        return runCommand(familyCommandId(family, 'get'), { id: Number(id) })
          .then((r) => rememberName(family, Number(id), String((r as { name?: unknown }).name ?? `#${id}`)))
          .catch(() => rememberName(family, Number(id), `#${id}`));
      }),
    ).then(() => live && setVersion((v) => v + 1));
    return () => {
      live = false;
    };
  }, [key]);
  return (family, id) => knownName(family, id) ?? `#${id}`;
}
