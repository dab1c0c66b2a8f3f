import { useEffect, useRef } from 'react';
import { useBlocker } from 'react-router';
import { confirmAction } from '../commands/dialogs';
import { i18next } from '../i18n';

const tr = (key: string): string => (i18next.t as unknown as (k: string) => string)(key);

/** Asks before changes typed into a form are thrown away; true when the person chose to leave them. */
export function confirmDiscard(): Promise<boolean> {
  return confirmAction({
    title: tr('forms.unsaved.title'),
    message: tr('forms.unsaved.message'),
    approveLabel: tr('forms.unsaved.leave'),
    danger: true,
  });
}

/**
 * Guards a page form with unsaved changes (issue 13 item 4): leaving it for another page of the console asks
 * first, and closing or reloading the tab gets the browser's own question. `saved()` lifts the guard for the
 * navigation that follows a successful save.
 */
export function useLeaveGuard(dirty: boolean): { saved: () => void } {
  const live = useRef(dirty);
  live.current = dirty;
  const blocker = useBlocker(
    ({ currentLocation, nextLocation }) =>
      live.current &&
      (currentLocation.pathname !== nextLocation.pathname || currentLocation.search !== nextLocation.search),
  );
  const asking = useRef(false);
  useEffect(() => {
    if (blocker.state !== 'blocked' || asking.current) return;
    asking.current = true;
    void confirmDiscard().then((leave) => {
      asking.current = false;
      if (leave) blocker.proceed();
      else blocker.reset();
    });
  }, [blocker]);

  useEffect(() => {
    if (!dirty) return;
    const onUnload = (e: BeforeUnloadEvent) => e.preventDefault();
    window.addEventListener('beforeunload', onUnload);
    return () => window.removeEventListener('beforeunload', onUnload);
  }, [dirty]);

  return {
    saved: () => {
      live.current = false;
    },
  };
}
