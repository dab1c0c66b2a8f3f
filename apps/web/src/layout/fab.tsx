import { useEffect, useLayoutEffect, useRef } from 'react';
import { atom, useAtomValue, useSetAtom } from 'jotai';
import { useTranslation } from 'react-i18next';
import { useShortcut } from '../keys/shortcuts';
import { Icon, Spinner, type IconName } from '../ui/icon';

/** The floating action of a page (spec part 1 §2.3): loading, disabled, or hidden (no action). */
export interface FloatingAction {
  /** web locale key of the label */
  labelKey: string;
  onClick: () => void;
  state?: 'ready' | 'loading' | 'disabled';
  icon?: IconName;
  testId?: string;
  /** why it is disabled */
  reason?: string;
}

const fabAtom = atom<FloatingAction | null>(null);

/** A page's add button; null hides it. Cleared when the page goes away. */
export function useFloatingAction(action: FloatingAction | null): void {
  const set = useSetAtom(fabAtom);
  const latest = useRef(action);
  useLayoutEffect(() => {
    latest.current = action;
  });
  const key = action
    ? `${action.labelKey}|${action.state ?? 'ready'}|${action.reason ?? ''}|${action.icon ?? ''}`
    : '';
  useEffect(() => {
    const a = latest.current;
    // the button calls the page's latest handler; its label and state follow `key`
    set(a ? { ...a, onClick: () => latest.current?.onClick() } : null);
    return () => set(null);
  }, [key, set]);
}

/** The floating action area at the bottom right of the page. `n` presses it. */
export function FloatingActionArea() {
  const { t } = useTranslation();
  const fab = useAtomValue(fabAtom);
  const ready = !!fab && (fab.state ?? 'ready') === 'ready';
  useShortcut('n', () => fab?.onClick(), { labelKey: 'keys.new', enabled: ready }, [fab]);
  if (!fab) return null;
  const state = fab.state ?? 'ready';
  const label = (t as unknown as (k: string) => string)(fab.labelKey);
  return (
    <div className="pointer-events-none absolute right-6 bottom-5 z-20">
      <button
        type="button"
        onClick={fab.onClick}
        disabled={state !== 'ready'}
        aria-busy={state === 'loading' || undefined}
        title={fab.reason ?? `${label} (N)`}
        data-testid={fab.testId ?? 'fab'}
        className="pointer-events-auto inline-flex h-10 items-center gap-2 rounded-full bg-blue-700 pr-4 pl-3 text-sm font-medium text-white shadow-lg shadow-blue-900/20 outline-none hover:bg-blue-800 focus-visible:ring-2 focus-visible:ring-blue-600 focus-visible:ring-offset-2 disabled:cursor-not-allowed disabled:bg-slate-400"
      >
        {state === 'loading' ? <Spinner /> : <Icon name={fab.icon ?? 'plus'} />}
        {label}
      </button>
    </div>
  );
}
