import { atom } from 'jotai';
import { getCommand, type CommandId } from '@lintel/commands';
import { runCommand, type ArgsOf, type ResultOf } from '../api/client';
import { appStore } from '../store';
import { refreshProfile } from '../session/session';
import { rememberRecent } from './recent';

/** Where a run came from (excalidraw's `executeAction(action, source)`). */
export type Source = 'ui' | 'palette' | 'keyboard';

/** Grows after every successful write, so open tables and counts reload (`refreshKey`). */
export const dataVersionAtom = atom(0);

/**
 * Writes that change the licence in force: the profile's licence info, and so the menu, the palette and the
 * pages' gates, changes with them.
 */
const changesLicence = (id: string) => id.startsWith('licence.');

/**
 * The one way the console runs a command, whatever the surface: a screen's button, a form, the palette or a
 * key. Runs it through the registry, remembers it among the recent commands, and tells open lists that data
 * changed when it was a write (a licence write reads the profile again first).
 */
export async function execute<Id extends CommandId>(
  id: Id,
  args: ArgsOf<Id> | Record<string, unknown>,
  source: Source,
): Promise<ResultOf<Id>> {
  const result = await runCommand(id, args as ArgsOf<Id>);
  const cmd = getCommand(id);
  if (cmd.http.method !== 'GET' && changesLicence(id))
    await refreshProfile().catch((err: unknown) => console.warn('lintel: profile not reloaded', err));
  if (cmd.http.method !== 'GET') appStore.set(dataVersionAtom, (v) => v + 1);
  if (source === 'palette' || source === 'keyboard' || cmd.http.method !== 'GET')
    rememberRecent({ kind: 'command', id });
  return result;
}
