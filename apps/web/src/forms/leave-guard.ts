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
 * first, and closing or reloading the tab gets the browser's own question. `saved(values)` lifts the guard
 * for as long as the form holds the values it saved (`values`: the form's state, a new object at each edit):
 * the page stays drawn a while after its save navigated away (the next page renders in a transition), and a
 * render in that while (the Approve button's busy state ending) must not arm it again — it did, and a move
 * made then was taken back and asked about (integrations-page, a red CI).
 */
export function useLeaveGuard(
  dirty: boolean,
  values: unknown,
): { saved: (values: unknown) => void; holdsSaved: () => boolean } {
  const savedValues = useRef<unknown>(undefined);
  const shown = useRef(values);
  shown.current = values;
  const armed = dirty && values !== savedValues.current;
  const live = useRef(armed);
  live.current = armed;
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
    if (!armed) return;
    const onUnload = (e: BeforeUnloadEvent) => e.preventDefault();
    window.addEventListener('beforeunload', onUnload);
    return () => window.removeEventListener('beforeunload', onUnload);
  }, [armed]);

  return {
    saved: (what: unknown) => {
      savedValues.current = what;
      live.current = false;
    },
    /** the form holds what it last saved: nothing new to save */
    holdsSaved: () => shown.current === savedValues.current,
  };
}
