import { useEffect, useRef } from 'react';
import { atom, useSetAtom } from 'jotai';
import type { IconName } from '../ui/icon';

/**
 * What the screen on show offers besides the registry's commands (a table's Export): the palette lists
 * these first, as "On this page", while the screen is mounted.
 */
export interface PageAction {
  /** unique on the screen, e.g. `table.export` */
  id: string;
  /** locale key of the title (namespace `web`), looked up in every language for the palette's search */
  labelKey: string;
  icon: IconName;
  run: () => void;
  /** where the palette lists it: the screen's actions (default), or the dialer's, shown on every screen */
  group?: 'page' | 'dialer';
}

export const pageActionsAtom = atom<readonly PageAction[]>([]);

/**
 * Offers an action in the palette while the calling component is mounted (and `action` is not null).
 * `run` may change between renders: the palette calls the latest one.
 */
export function usePageAction(action: PageAction | null): void {
  const setActions = useSetAtom(pageActionsAtom);
  const runRef = useRef(action?.run);
  runRef.current = action?.run;
  const id = action?.id;
  const labelKey = action?.labelKey;
  const icon = action?.icon;
  const group = action?.group;
  useEffect(() => {
    if (!id || !labelKey || !icon) return;
    const entry: PageAction = { id, labelKey, icon, group, run: () => runRef.current?.() };
    setActions((list) => [...list.filter((a) => a.id !== id), entry]);
    return () => setActions((list) => list.filter((a) => a !== entry));
  }, [id, labelKey, icon, group, setActions]);
}
