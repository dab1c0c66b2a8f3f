import { useEffect, useState } from 'react';
import { useAtomValue } from 'jotai';
import type { AuditEvent } from '@lintel/commands';
import type { Filter } from '@lintel/core';
import { runCommand } from '../../api/client';
import { dataVersionAtom } from '../../commands/execute';

export type Loaded<T> = T | null | 'failed';

/** A command's reply, asked again when data changes (`dataVersionAtom`); null while it loads. */
export function useReply<T>(read: () => Promise<T>, key: string, enabled = true): Loaded<T> {
  const version = useAtomValue(dataVersionAtom);
  const [reply, setReply] = useState<Loaded<T>>(null);
  useEffect(() => {
    if (!enabled) return;
    let live = true;
    read()
      .then((r) => live && setReply(r))
      .catch(() => live && setReply('failed'));
    return () => {
      live = false;
    };
    // `read` is a new function each render: `key` names what it reads
  }, [key, enabled, version]);
  return reply;
}

const AUDIT_LIMIT = 6;

/** the latest audit events the filters match */
export function useEvents(filters: Filter[], enabled: boolean): Loaded<AuditEvent[]> {
  return useReply(
    () => runCommand('audit_event.list', { limit: AUDIT_LIMIT, filters }).then((r) => r.data),
    JSON.stringify(filters),
    enabled,
  );
}
