import { useEffect } from 'react';
import { atom, useAtom } from 'jotai';
import type { ServerInfo } from '@lintel/core';
import { runCommand } from '../api/client';

const serverInfoAtom = atom<ServerInfo | null | 'failed'>(null);
let requested = false;

/** The public server info, fetched once per page load; null until it arrives or when it failed. */
export function useServerInfo(): ServerInfo | null {
  const [info, setInfo] = useAtom(serverInfoAtom);
  useEffect(() => {
    if (requested) return;
    requested = true;
    runCommand('server.info', {})
      .then((i) => setInfo(i))
      .catch((e: unknown) => {
        console.warn('lintel: server info unavailable', e);
        requested = false;
        setInfo('failed');
      });
  }, [setInfo]);
  return info === 'failed' ? null : info;
}
